package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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

    private static void awaitRenewals(AtomicLong renewed, long more, String what) {
        long target = renewed.get() + more;
        TestingCluster.await(PATIENCE, () -> renewed.get() >= target, what);
    }
}
