package org.apache.ratis.server.impl;

import org.apache.ratis.server.RaftServer;

/**
 * Mailbox's one look inside Ratis: whether a division's leader lease holds now. It lives in Ratis's
 * package because Ratis (3.1.x, pinned in the build, so a change there fails compilation here) keeps its
 * lease package-private.
 *
 * <p>Why it is needed: a Ratis leader answers a read-only request from its lease while that holds, and
 * otherwise with a read index, whose heartbeat round it <em>skips</em> when a majority already acknowledged
 * its current commit index ({@code ReadIndexHeartbeats.addAppendEntriesListener}). A leader cut off from
 * the others, with nothing new to commit, therefore goes on answering leader reads and renewals after its
 * lease lapsed, until it notices and steps down, while the others may have elected a leader and expired
 * the leases it renews (seen in CI: {@code PartitionTest.flappingLinks}, a renewal refused 1.2 s before its
 * holder's validity ended). The coordinator asks this probe and confirms its leadership itself when the
 * lease does not hold.
 */
public final class MailboxLeaseProbe {

    private MailboxLeaseProbe() {
    }

    /**
     * @param division a Ratis division (a member of one group on one server)
     * @return true if it leads, has committed an entry of its term, and its leader lease holds now (a lone
     *         member holds it always); false otherwise, including for a division Ratis did not build
     */
    public static boolean holds(RaftServer.Division division) {
        if (!(division instanceof RaftServerImpl impl)) {
            return false;
        }
        return impl.getRole().getLeaderState().map(LeaderStateImpl::hasLease).orElse(false);
    }
}
