package org.apache.ratis.server.impl;

import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;

import java.util.ArrayList;
import java.util.List;

/**
 * Mailbox's second look inside Ratis: how long a follower has not heard from its leader, and a way to make
 * it stand for election once that silence lasted its election timeout. It lives in Ratis's package for the
 * same reason as {@link MailboxLeaseProbe}: Ratis (3.1.x, pinned in the build) keeps the follower's timer
 * package-private.
 *
 * <p>Why it is needed: Ratis's follower timer sleeps a freshly drawn election timeout {@code T} and then
 * checks whether the leader was silent for that {@code T}; a heartbeat that arrived during the sleep sends
 * it round again. A dead leader is therefore noticed between {@code T} and about {@code 2T} after its last
 * heartbeat, a third more than the timeout on average. {@code dev.mailbox.coordination.server.internal.ElectionWatch}
 * looks every few milliseconds instead and uses {@link #stand} the moment the silence reaches its timeout,
 * which is never shorter than the configured minimum: the leader lease, which relies on followers not
 * electing anyone for that long, keeps its guarantee, and pre-vote still keeps a follower that alone lost
 * touch from disturbing a working leader.
 */
public final class MailboxFollowerProbe {

    private MailboxFollowerProbe() {
    }

    /**
     * One reading of a follower's timer.
     *
     * @param contact the time of the last contact from a leader (a new object after each one), opaque
     * @param silentMillis how long ago that was
     * @param rank this member's place among the voting members, ordered by id
     * @param voters the number of voting members
     */
    public record Silence(Object contact, long silentMillis, int rank, int voters) {
    }

    /**
     * @param division a Ratis division
     * @return its silence, if it is a running follower that votes; null otherwise (a leader, a candidate, a
     *         listener, a member being added, or a division Ratis did not build)
     */
    public static Silence silence(RaftServer.Division division) {
        if (!(division instanceof RaftServerImpl impl) || !impl.isRunning() || !impl.getInfo().isFollower()) {
            return null;
        }
        FollowerState fs = impl.getRole().getFollowerState().orElse(null);
        if (fs == null) {
            return null;
        }
        List<String> voters = new ArrayList<>();
        for (RaftPeer p : impl.getRaftConf().getCurrentPeers()) {
            voters.add(p.getId().toString());
        }
        voters.sort(null);
        int rank = voters.indexOf(impl.getId().toString());
        if (rank < 0) {
            return null;
        }
        org.apache.ratis.util.Timestamp last = fs.getLastRpcTime();
        return new Silence(last, last.elapsedTimeMs(), rank, voters.size());
    }

    /**
     * Makes the division a candidate if it is still the running follower whose silence was read, with no
     * append or snapshot install under way, and did not just step down as leader for lack of a majority
     * (Ratis then holds elections back for a while; so does this). Checked under the division's lock, the
     * one Ratis's own timer takes for the same change.
     *
     * @param division the division read by {@link #silence}
     * @param read     what {@link #silence} returned
     * @return true if it became a candidate
     */
    public static boolean stand(RaftServer.Division division, Silence read) {
        if (!(division instanceof RaftServerImpl impl)) {
            return false;
        }
        synchronized (impl) {
            FollowerState fs = impl.getRole().getFollowerState().orElse(null);
            if (fs == null || fs.getLastRpcTime() != read.contact() || fs.getOutstandingOp() != 0
                    || !impl.isRunning() || !impl.getInfo().isFollower() || fs.lostMajorityHeartbeatsRecently()) {
                return false;
            }
            impl.changeToCandidate(false);
            return true;
        }
    }
}
