package dev.mailbox.coordination.server;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Leases through real Ratis servers on loopback: one node, three nodes, failover, expiry, restart. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoordinatorNodeTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static Lease acquire(CoordinationClient c, String mailbox, String runner) {
        return c.leases().acquire(mailbox, new LeaseHolder(runner, "node-" + runner, "127.0.0.1:9"));
    }

    private static CoordinationException.Reason refusal(CoordinationClient c, String mailbox, String runner) {
        try {
            acquire(c, mailbox, runner);
            throw new AssertionError(runner + " was granted " + mailbox);
        } catch (CoordinationException e) {
            return e.reason();
        }
    }

    @Test
    @DisplayName("three nodes apply the same log to byte-identical tables")
    void replication() {
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(10_000).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient c = cluster.client();
            for (int i = 0; i < 20; i++) {
                assertThat(acquire(c, "ns@m" + i, "r" + (i % 3)).state()).isEqualTo(LeaseState.ACTIVE);
            }
            Lease l = c.leases().get("ns@m0").orElseThrow();
            c.leases().revoke("ns@m1");
            c.leases().release(l);
            cluster.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("the leader expires a lease nobody renews, and keeps a renewed one alive")
    void expiry() {
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient c = cluster.client();
            c.namespaces().setPolicy("short", LeasePolicy.ofMillis(1_000, 300, 200));
            Lease idle = acquire(c, "short@idle", "r1");
            Lease kept = acquire(c, "short@kept", "r2");
            long start = System.nanoTime();
            while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(3_000)) {
                assertThat(c.leases().renew(kept).state()).isEqualTo(LeaseState.ACTIVE);
                sleep(250); // a heartbeat interval, not a synchronisation
            }
            assertThat(c.leases().get("short@idle").orElseThrow().state()).isEqualTo(LeaseState.EXPIRED);
            assertThat(c.leases().get("short@idle").orElseThrow().leaseId()).isEqualTo(idle.leaseId());
            assertThat(c.leases().get("short@kept").orElseThrow().state()).isEqualTo(LeaseState.ACTIVE);
            assertThatThrownBy(() -> c.leases().renew(idle)).isInstanceOf(CoordinationException.class);
            assertThat(acquire(c, "short@idle", "r3").epoch()).isEqualTo(2);
        }
    }

    @Test
    @DisplayName("leader killed: a new leader serves writes, a renewed lease is not lost or expired early, nobody else gets it")
    void failover() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(10_000).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient c = cluster.client();
            c.namespaces().setPolicy("fo", LeasePolicy.ofMillis(2_000, 500, 500));
            Lease held = acquire(c, "fo@held", "holder");

            AtomicBoolean renewing = new AtomicBoolean(true);
            AtomicBoolean paused = new AtomicBoolean(false);
            AtomicInteger refused = new AtomicInteger();
            Thread heart = new Thread(() -> {
                CoordinationClient hc = cluster.client();
                while (renewing.get()) {
                    if (paused.get()) {
                        sleep(20);
                        continue;
                    }
                    try {
                        hc.leases().renew(held);
                    } catch (CoordinationException e) {
                        if (!e.isRetryable()) {
                            refused.incrementAndGet();
                        } // else unavailable while the cluster elects; the client fails over
                    }
                    sleep(300);
                }
            });
            heart.start();
            // outlive TTL + grace first: the followers' own deadlines for the lease (set when they applied
            // the grant) have passed, so only the new leader's reset keeps it alive
            sleep(3_000);
            assertThat(c.leases().get("fo@held").orElseThrow().state()).isEqualTo(LeaseState.ACTIVE);

            // the holder goes quiet across the failover: the new leader must give the lease a full
            // TTL + grace from its election, not judge it by deadlines it never tracked
            paused.set(true);
            // killed, not stopped: a stopped leader hands over at once and then takes its time closing, so the
            // election would come before the stop returns and the sleep below would not start from it
            cluster.kill(leader);
            String next = cluster.awaitLeader(PATIENCE);
            assertThat(next).isNotEqualTo(leader);
            sleep(1_200); // well inside TTL + grace (2.5 s) from the election
            assertThat(c.leases().get("fo@held").orElseThrow().state()).as("not expired early")
                    .isEqualTo(LeaseState.ACTIVE);
            paused.set(false);
            assertThat(acquire(c, "fo@other", "someone").state()).as("the new leader serves writes")
                    .isEqualTo(LeaseState.ACTIVE);
            assertThat(refusal(c, "fo@held", "thief")).isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION);
            sleep(3_000); // longer than TTL + grace: an early expiry would show
            renewing.set(false);
            heart.join();

            Lease now = c.leases().get("fo@held").orElseThrow();
            assertThat(now.state()).isEqualTo(LeaseState.ACTIVE);
            assertThat(now.leaseId()).isEqualTo(held.leaseId());
            assertThat(refused).as("renewals refused").hasValue(0);
        }
    }

    @Test
    @DisplayName("a node restarted from snapshot + log holds the same table as the others")
    void restartFromSnapshot() throws IOException {
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(25).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient c = cluster.client();
            for (int i = 0; i < 60; i++) {
                try {
                    acquire(c, "snap@m" + (i % 40), "r" + i); // the second time round, a refusal: also a log entry
                } catch (CoordinationException held) {
                    assertThat(held.reason()).isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION);
                }
            }
            assertThat(cluster.node("n3").takeSnapshot()).isPositive();
            cluster.stop("n3");
            try (var files = java.nio.file.Files.walk(cluster.dataDir("n3"))) {
                assertThat(files.map(f -> f.getFileName().toString())).anyMatch(f -> f.startsWith("snapshot.")
                        && !f.endsWith(".md5") && !f.endsWith(".tmp"));
            }
            for (int i = 0; i < 30; i++) {
                acquire(c, "snap@late" + i, "r");
            }
            cluster.start("n3");
            long target = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestingCluster.await(PATIENCE, () -> cluster.node("n3").appliedIndex() >= target, "n3 catches up to " + target);
            cluster.awaitIdenticalState(PATIENCE, "n3", "n1");
            assertThat(cluster.node("n3").stateMachine().snapshotTable().leases()).hasSize(70);
        }
    }

    @Test
    @DisplayName("a node that missed more than the leader's log keeps gets the leader's snapshot and catches up")
    void installSnapshotFromLeader() {
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(20)
                .configure(b -> b.logSegmentSize(4 << 10)).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            String away = leader; // a node that led before, in this JVM
            CoordinationClient c = cluster.client();
            acquire(c, "inst@first", "r");
            cluster.stop(away);
            cluster.start(away);
            cluster.awaitLeader(PATIENCE);
            acquire(c, "inst@second", "r");
            cluster.stop(away);
            for (int i = 0; i < 120; i++) {
                acquire(c, "inst@m" + i, "r");
            }
            for (String id : cluster.nodeIds()) {
                if (cluster.isRunning(id)) {
                    cluster.node(id).takeSnapshot(); // and the log before it is purged: the returning node cannot replay it
                }
            }
            cluster.start(away);
            long target = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestingCluster.await(PATIENCE, () -> cluster.node(away).appliedIndex() >= target, away + " catches up to " + target);
            assertThat(cluster.node(away).stateMachine().snapshotsInstalled()).as("caught up by a snapshot install")
                    .isPositive();
            cluster.awaitIdenticalState(PATIENCE, away, cluster.awaitLeader(PATIENCE));
            assertThat(acquire(c, "inst@after", "r").state()).isEqualTo(LeaseState.ACTIVE);
            long next = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestingCluster.await(PATIENCE, () -> cluster.node(away).appliedIndex() >= next, away + " follows on");
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
