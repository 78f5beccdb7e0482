package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Finding 0 of issue 30: a new leader gives every active lease a fresh deadline, and while it did so (clearing
 * its deadline map and filling it again) renewals that found no entry were answered "is expiring". With 50,000
 * leases renewed without pause through several leader changes, not one renewal of a live lease may be refused.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LeaderChangeRenewalTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int LEASES = 50_000;
    private static final int LEADER_CHANGES = 2;
    private static final int RENEWERS = 3;
    /** How long renewals may reach a new leader that lags behind in applying, before it catches up. */
    private static final long LAG_MILLIS = 5_000;

    @Test
    @DisplayName("50,000 leases renewed without pause through leader changes: no renewal of a live lease is refused")
    void noLiveLeaseRefusedAcrossLeaderChanges() throws Exception {
        // the leases come in bulk, as one imported backup: acquiring 50,000 one by one would take minutes
        LeaseTable table = new LeaseTable();
        long index = 1;
        for (int i = 0; i < LEASES; i++) {
            // ten minutes: nothing can come near expiring while the test runs
            table.apply(index++, 1, new Command.Acquire("ns-" + (i % 50) + "@m" + i, "runner-" + i, "node-a",
                    "127.0.0.1:9", 600_000, 1_000));
        }
        List<Lease> leases = table.leases();
        java.nio.file.Path backup = java.nio.file.Files.createTempFile("leases", ".backup");
        try (java.io.OutputStream out = new java.io.BufferedOutputStream(java.nio.file.Files.newOutputStream(backup))) {
            table.writeExport(out);
        }

        try (TestingCluster cluster = TestingCluster.start(3)) {
            cluster.awaitLeader(PATIENCE);
            try (CoordinationClient admin = CoordinationClient.builder().endpoints(cluster.endpoints())
                    .callTimeout(PATIENCE).build()) {
                assertThat(admin.cluster().importState(backup).leases()).isEqualTo(LEASES);
            } finally {
                java.nio.file.Files.deleteIfExists(backup);
            }
            cluster.awaitIdenticalState(PATIENCE);

            Map<String, String> refused = new ConcurrentHashMap<>();
            AtomicLong renewed = new AtomicLong();
            AtomicLong unavailable = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> renewers = new ArrayList<>();
            for (int r = 0; r < RENEWERS; r++) {
                CoordinationClient client = cluster.client();
                List<Lease> mine = leases.subList(r * LEASES / RENEWERS, (r + 1) * LEASES / RENEWERS);
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        List<CompletableFuture<Lease>> round = new ArrayList<>(mine.size());
                        for (Lease l : mine) {
                            round.add(client.leases().renewAsync(l).whenComplete((ok, e) -> {
                                if (e == null) {
                                    renewed.incrementAndGet();
                                } else if (CoordinationException.of(e).reason() == CoordinationException.Reason.UNAVAILABLE) {
                                    unavailable.incrementAndGet(); // no leader for a moment: the runner tries again
                                } else {
                                    refused.putIfAbsent(l.mailboxId(), CoordinationException.of(e).getMessage());
                                }
                            }));
                        }
                        CompletableFuture.allOf(round.toArray(CompletableFuture[]::new)).exceptionally(x -> null).join();
                    }
                }, "renewer-" + r);
                t.setDaemon(true);
                t.start();
                renewers.add(t);
            }
            try {
                awaitRenewals(renewed, LEASES, "a first round of renewals");
                for (int change = 0; change < LEADER_CHANGES; change++) {
                    String leader = cluster.awaitLeader(PATIENCE);
                    cluster.stop(leader); // hands its leadership over: renewals go on at once on the next leader
                    String next = cluster.awaitLeader(PATIENCE);
                    assertThat(next).isNotEqualTo(leader);
                    // every lease renewed again since the change, so the new leader's reset has been crossed
                    awaitRenewals(renewed, 2L * LEASES, "renewals on the new leader " + next);
                    cluster.start(leader);
                }
            } finally {
                stop.set(true);
                for (Thread t : renewers) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                }
            }
            assertThat(refused.size()).as("renewals of live leases refused (of %d renewed, %d unavailable), such as %s",
                    renewed.get(), unavailable.get(), refused.entrySet().stream().limit(3).toList()).isZero();
        }
    }

    /**
     * The old leader answered a release and a new grant once it had applied them; the next leader may not have
     * applied them yet when renewals reach it. Served from its deadlines then, it would accept the renewal of the
     * released lease (and its table refuse the new one). Both followers' applying is held (as a snapshot being
     * written holds it) across the change, so whichever takes over lags; its renewals must not be answered from
     * that state.
     */
    @Test
    @DisplayName("a new leader that has not applied its predecessor's last writes accepts no renewal of a lease "
            + "released before the change and refuses none granted before it")
    void newLeaderBehindOnApplyingServesNoStaleRenewal() throws Exception {
        try (TestingCluster cluster = TestingCluster.start(3)) {
            String leader = cluster.awaitLeader(PATIENCE);
            List<String> followers = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).toList();
            CoordinationClient client = cluster.client();
            Duration ttl = Duration.ofSeconds(60);
            Lease released = client.leases().acquire("lag@m1", new LeaseHolder("r1", "node-a", "127.0.0.1:9"), ttl);
            Lease kept = client.leases().acquire("lag@m2", new LeaseHolder("r2", "node-a", "127.0.0.1:9"), ttl);
            cluster.awaitIdenticalState(PATIENCE);

            CountDownLatch held = new CountDownLatch(followers.size());
            CountDownLatch resume = new CountDownLatch(1);
            for (String f : followers) {
                Thread stall = new Thread(() -> cluster.node(f).stateMachine().readTable(t -> {
                    held.countDown();
                    try {
                        resume.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return null;
                }), "stall-" + f);
                stall.setDaemon(true);
                stall.start();
            }
            Lease granted;
            List<CompletableFuture<Lease>> duringLag = new ArrayList<>();
            CoordinationClient impatient = CoordinationClient.builder().endpoints(cluster.endpoints())
                    .callTimeout(Duration.ofSeconds(3)).build();
            String next;
            try {
                assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
                // answered by the old leader once applied there; committed in the followers' logs, not applied
                client.leases().release(released);
                granted = client.leases().acquire("lag@m3", new LeaseHolder("r3", "node-a", "127.0.0.1:9"), ttl);
                cluster.stop(leader);
                TestingCluster.await(PATIENCE, () -> followers.stream().anyMatch(f -> {
                    var division = cluster.node(f).divisionOrNull();
                    return division != null && division.getInfo().isLeader();
                }), "a follower to be elected");
                next = followers.stream().filter(f -> cluster.node(f).divisionOrNull().getInfo().isLeader())
                        .findFirst().orElseThrow();
                for (Lease l : List.of(released, kept, granted)) {
                    duringLag.add(impatient.leases().renewAsync(l));
                }
                // a while for them to reach the new leader and be answered (or not) while it lags: whenever
                // they are answered, they are judged below
                CompletableFuture.allOf(duringLag.toArray(CompletableFuture[]::new)).exceptionally(x -> null)
                        .completeOnTimeout(null, LAG_MILLIS, TimeUnit.MILLISECONDS).join();
                long term = cluster.node(next).divisionOrNull().getInfo().getCurrentTerm();
                assertThat(cluster.node(next).stateMachine().getLastAppliedTermIndex().getTerm())
                        .as("the term of the last entry the new leader %s has applied", next).isLessThan(term);
            } finally {
                resume.countDown();
            }
            // sent while the new leader lagged, answered then or after: never OK for the released lease, never a
            // refusal for the live ones
            assertThat(outcome(duringLag.get(0))).as("renewal of the lease released before the change, sent while %s "
                    + "lagged", next).isNotEqualTo("OK");
            assertThat(outcome(duringLag.get(1))).as("renewal of a live lease sent while %s lagged", next)
                    .isIn("OK", "UNAVAILABLE");
            assertThat(outcome(duringLag.get(2))).as("renewal of the lease granted before the change, sent while %s "
                    + "lagged", next).isIn("OK", "UNAVAILABLE");
            impatient.close();
            // once it has caught up: the released lease is refused, the others renewed
            assertThat(outcome(client.leases().renewAsync(released))).isIn("FAILED_PRECONDITION", "NOT_FOUND");
            assertThat(client.leases().renew(kept).leaseId()).isEqualTo(kept.leaseId());
            assertThat(client.leases().renew(granted).leaseId()).isEqualTo(granted.leaseId());
        }
    }

    /** @return OK, or the reason it failed; waits for it */
    private static String outcome(CompletableFuture<Lease> renewal) throws InterruptedException {
        try {
            renewal.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            return "OK";
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return String.valueOf(CoordinationException.of(e).reason());
        }
    }

    private static void awaitRenewals(AtomicLong renewed, long more, String what) {
        long target = renewed.get() + more;
        TestingCluster.await(PATIENCE, () -> renewed.get() >= target, what);
    }
}
