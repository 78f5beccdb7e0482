package dev.mailbox.coordination.server.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;

/**
 * A read index that does not trust the leader lease: before a {@code LINEARIZABLE} read is answered, the
 * leader asks every other member, at that moment, whom it follows, and answers only once a majority
 * (itself included) say they follow it. Any new leader needs the votes of a majority, which shares a member
 * with this one; that member still followed this node when it answered, after the read arrived, so no
 * newer leader can have committed anything the read would miss. The read is then served once this node
 * has applied its commit index from before the question.
 *
 * <p>Why not Ratis's own read index: in Ratis 3.1.3 a leader answers a read index from its lease while the
 * lease holds (by design), and after that it skips the heartbeat round whenever a majority already
 * acknowledged its current commit index ({@code ReadIndexHeartbeats.addAppendEntriesListener} returns at
 * once when {@code commitIndex <= ackedCommitIndex}). A leader cut off from everyone, with no new writes,
 * thus goes on answering "linearizable" reads until it steps down, while the others may already have
 * elected a leader and committed writes.
 */
public final class LeadershipCheck implements AutoCloseable {

    private final Supplier<RaftServer> server;
    private final RaftGroup group;
    private final org.apache.ratis.conf.Parameters parameters;
    private final long timeoutMillis;
    private final ExecutorService askers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "leadership-check");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "leadership-check-timer");
        t.setDaemon(true);
        return t;
    });
    private final java.util.Map<String, RaftClient> clients = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param server        this node's Ratis server (it may be replaced after a log failure)
     * @param group         the cluster's group
     * @param parameters    the Ratis transport (TLS)
     * @param timeoutMillis how long the check may take before the read fails as unavailable
     */
    public LeadershipCheck(Supplier<RaftServer> server, RaftGroup group, org.apache.ratis.conf.Parameters parameters,
                           long timeoutMillis) {
        this.server = server;
        this.group = group;
        this.parameters = parameters;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Confirms with a majority that this node still leads, then waits until it has applied what was committed
     * when the check began. Concurrent callers share rounds: a caller joins the round that starts next (never
     * one already under way, which may have begun before its read arrived), so a burst of reads or renewals
     * on a leader whose lease lapsed costs one round of questions, not one per call.
     *
     * @param applied this node's last applied index, now
     * @return completes when the read may be answered; fails if this node does not lead, or a majority did not
     *         confirm it in time
     */
    public CompletableFuture<Void> confirm(java.util.function.LongSupplier applied) {
        return nextRound().thenCompose(readIndex -> {
            CompletableFuture<Void> caughtUp = new CompletableFuture<>();
            awaitApplied(applied, readIndex, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis),
                    caughtUp);
            return caughtUp;
        });
    }

    /**
     * Confirms with a majority that this node still leads, without waiting for it to apply anything: for a
     * renewal, which reads no state that a write could still be changing (see {@code LeaseStateMachine}). Rounds
     * are shared as for {@link #confirm}.
     *
     * @return completes once a round that began after this call confirmed it; fails as {@link #confirm} does
     */
    public CompletableFuture<Void> confirmLeading() {
        return nextRound().thenApply(readIndex -> null);
    }

    private final Object rounds = new Object();
    /** The round under way, if any; guarded by {@link #rounds}. */
    private @org.jspecify.annotations.Nullable CompletableFuture<Long> running;
    /** Callers waiting for the round after the one under way; guarded by {@link #rounds}. */
    private @org.jspecify.annotations.Nullable CompletableFuture<Long> waiting;

    /** @return the read index of a round that begins after this call, once a majority confirmed it */
    private CompletableFuture<Long> nextRound() {
        synchronized (rounds) {
            if (running == null) {
                CompletableFuture<Long> round = startRound();
                running = round;
                round.whenComplete((i, e) -> roundEnded()); // may run at once, here: the lock is reentrant
                return round;
            }
            if (waiting == null) {
                waiting = new CompletableFuture<>();
            }
            return waiting;
        }
    }

    private void roundEnded() {
        CompletableFuture<Long> next;
        CompletableFuture<Long> round;
        synchronized (rounds) {
            next = waiting;
            waiting = null;
            if (next == null) {
                running = null;
                return;
            }
            running = startRound();
            round = running;
        }
        round.whenComplete((i, e) -> {
            if (e != null) {
                next.completeExceptionally(e);
            } else {
                next.complete(i);
            }
            roundEnded();
        });
    }

    /** One round of questions: completes with the commit index from before it, once a majority confirmed. */
    private CompletableFuture<Long> startRound() {
        RaftServer.Division division;
        try {
            RaftServer current = server.get();
            if (current == null) {
                return CompletableFuture.failedFuture(new Unconfirmed("this coordinator is starting"));
            }
            division = current.getDivision(group.getGroupId());
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        DivisionInfo info = division.getInfo();
        if (!info.isLeader() || !info.isLeaderReady()) {
            return CompletableFuture.failedFuture(new Unconfirmed("this coordinator does not lead"));
        }
        String self = division.getId().toString();
        long term = info.getCurrentTerm();
        long readIndex = division.getRaftLog().getLastCommittedIndex();
        List<RaftPeer> others = new ArrayList<>();
        for (RaftPeer p : division.getRaftConf().getCurrentPeers()) {
            if (!p.getId().toString().equals(self)) {
                others.add(p);
            }
        }
        int needed = (others.size() + 1) / 2; // a majority of all the members, less this node's own word
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        if (needed <= 0) {
            confirmed.complete(null);
        }
        AtomicInteger yes = new AtomicInteger();
        AtomicInteger no = new AtomicInteger();
        for (RaftPeer peer : others) {
            CompletableFuture.supplyAsync(() -> follows(peer, self), askers)
                    .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                    .whenComplete((follows, e) -> {
                        if (e == null && follows) {
                            if (yes.incrementAndGet() == needed) {
                                confirmed.complete(null);
                            }
                        } else if (no.incrementAndGet() > others.size() - needed) {
                            confirmed.completeExceptionally(new Unconfirmed("a majority of the coordinators "
                                    + "did not confirm that " + self + " still leads (term " + term + ")"));
                        }
                    });
        }
        return confirmed.thenCompose(v -> {
            DivisionInfo now = division.getInfo();
            if (!now.isLeader() || now.getCurrentTerm() != term) {
                return CompletableFuture.failedFuture(new Unconfirmed("this coordinator stopped leading"));
            }
            return CompletableFuture.completedFuture(readIndex);
        });
    }

    private void awaitApplied(java.util.function.LongSupplier applied, long index, long deadline,
                              CompletableFuture<Void> done) {
        if (applied.getAsLong() >= index) {
            done.complete(null);
        } else if (System.nanoTime() - deadline > 0) {
            done.completeExceptionally(new Unconfirmed("index " + index + " was not applied in time"));
        } else {
            timer.schedule(() -> awaitApplied(applied, index, deadline, done), 1, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Asks one member, now, whom it follows.
     *
     * @param peer   the member
     * @param leader a node id
     * @return true if it answered that it is a follower of {@code leader}; false if not, or if it did not
     *         answer within the check's timeout
     */
    public boolean follows(RaftPeer peer, String leader) {
        try {
            GroupInfoReply reply = client(peer).getGroupManagementApi(peer.getId()).info(group.getGroupId());
            RoleInfoProto role = reply.getRoleInfoProto();
            return reply.isSuccess() && role != null && role.getRole() == RaftPeerRole.FOLLOWER
                    && role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8().equals(leader);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private RaftClient client(RaftPeer peer) {
        return clients.computeIfAbsent(peer.getId() + "@" + peer.getAddress(), key -> {
            RaftProperties p = new RaftProperties();
            RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeoutMillis, TimeUnit.MILLISECONDS));
            return RaftClient.newBuilder().setProperties(p).setParameters(parameters)
                    .setRaftGroup(RaftGroup.valueOf(group.getGroupId(), peer)).setRetryPolicy(RetryPolicies.noRetry())
                    .build();
        });
    }

    /** This node could not show that it leads (the read is UNAVAILABLE: retry, perhaps at another node). */
    public static final class Unconfirmed extends IOException {
        private static final long serialVersionUID = 1L;

        Unconfirmed(String message) {
            super(message);
        }
    }

    @Override
    public void close() {
        askers.shutdownNow();
        timer.shutdownNow();
        for (RaftClient c : clients.values()) {
            try {
                c.close();
            } catch (IOException e) {
                // closing: nothing to do
            }
        }
    }
}
