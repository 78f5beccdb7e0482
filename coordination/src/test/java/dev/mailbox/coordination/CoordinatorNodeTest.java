package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.internal.Command;
import dev.mailbox.coordination.internal.LeaseClient;
import dev.mailbox.coordination.internal.Outcome;
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

    private static Outcome acquire(LeaseClient c, String mailbox, String runner) {
        return c.write(new Command.Acquire(mailbox, runner, "node-" + runner, "127.0.0.1:9", 0, 0));
    }

    @Test
    @DisplayName("three nodes apply the same log to byte-identical tables")
    void replication() {
        try (TestCluster cluster = new TestCluster(3, 10_000)) {
            cluster.awaitLeader(PATIENCE);
            LeaseClient c = cluster.client();
            for (int i = 0; i < 20; i++) {
                assertThat(acquire(c, "ns@m" + i, "r" + (i % 3)).isOk()).isTrue();
            }
            Lease l = c.get("ns@m0").lease();
            c.write(new Command.Revoke("ns@m1", 0));
            c.write(new Command.Release("ns@m0", l.leaseId(), l.epoch(), 0));
            cluster.assertIdenticalTables(PATIENCE);
        }
    }

    @Test
    @DisplayName("the leader expires a lease nobody renews, and keeps a renewed one alive")
    void expiry() {
        try (TestCluster cluster = new TestCluster(1, 10_000)) {
            cluster.awaitLeader(PATIENCE);
            LeaseClient c = cluster.client();
            assertThat(c.write(new Command.SetPolicy("short", 1_000, 300, 200, 0)).isOk()).isTrue();
            Lease idle = acquire(c, "short@idle", "r1").lease();
            Lease kept = acquire(c, "short@kept", "r2").lease();
            long start = System.nanoTime();
            while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(3_000)) {
                assertThat(c.renew("short@kept", kept.leaseId(), kept.epoch()).isOk()).isTrue();
                sleep(250); // a heartbeat interval, not a synchronisation
            }
            assertThat(c.get("short@idle").lease().state()).isEqualTo(LeaseState.EXPIRED);
            assertThat(c.get("short@idle").lease().leaseId()).isEqualTo(idle.leaseId());
            assertThat(c.get("short@kept").lease().state()).isEqualTo(LeaseState.ACTIVE);
            assertThat(c.renew("short@idle", idle.leaseId(), idle.epoch()).isOk()).isFalse();
            assertThat(acquire(c, "short@idle", "r3").lease().epoch()).isEqualTo(2);
        }
    }

    @Test
    @DisplayName("leader killed: a new leader serves writes, a renewed lease is not lost or expired early, nobody else gets it")
    void failover() throws Exception {
        try (TestCluster cluster = new TestCluster(3, 10_000)) {
            String leader = cluster.awaitLeader(PATIENCE);
            LeaseClient c = cluster.client();
            assertThat(c.write(new Command.SetPolicy("fo", 2_000, 500, 500, 0)).isOk()).isTrue();
            Lease held = acquire(c, "fo@held", "holder").lease();

            AtomicBoolean renewing = new AtomicBoolean(true);
            AtomicBoolean paused = new AtomicBoolean(false);
            AtomicInteger refused = new AtomicInteger();
            Thread heart = new Thread(() -> {
                LeaseClient hc = cluster.client();
                while (renewing.get()) {
                    if (paused.get()) {
                        sleep(20);
                        continue;
                    }
                    try {
                        if (!hc.renew("fo@held", held.leaseId(), held.epoch()).isOk()) {
                            refused.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        // unavailable while the cluster elects; the client fails over
                    }
                    sleep(300);
                }
            });
            heart.start();
            // outlive TTL + grace first: the followers' own deadlines for the lease (set when they applied
            // the grant) have passed, so only the new leader's reset keeps it alive
            sleep(3_000);
            assertThat(c.get("fo@held").lease().state()).isEqualTo(LeaseState.ACTIVE);

            // the holder goes quiet across the failover: the new leader must give the lease a full
            // TTL + grace from its election, not judge it by deadlines it never tracked
            paused.set(true);
            cluster.stop(leader);
            String next = cluster.awaitLeader(PATIENCE);
            assertThat(next).isNotEqualTo(leader);
            sleep(1_200); // well inside TTL + grace (2.5 s) from the election
            assertThat(c.get("fo@held").lease().state()).as("not expired early").isEqualTo(LeaseState.ACTIVE);
            paused.set(false);
            assertThat(acquire(c, "fo@other", "someone").isOk()).as("the new leader serves writes").isTrue();
            assertThat(acquire(c, "fo@held", "thief").code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
            sleep(3_000); // longer than TTL + grace: an early expiry would show
            renewing.set(false);
            heart.join();

            Lease now = c.get("fo@held").lease();
            assertThat(now.state()).isEqualTo(LeaseState.ACTIVE);
            assertThat(now.leaseId()).isEqualTo(held.leaseId());
            assertThat(refused).as("renewals refused").hasValue(0);
        }
    }

    @Test
    @DisplayName("a node restarted from snapshot + log holds the same table as the others")
    void restartFromSnapshot() throws IOException {
        try (TestCluster cluster = new TestCluster(3, 25)) {
            cluster.awaitLeader(PATIENCE);
            LeaseClient c = cluster.client();
            for (int i = 0; i < 60; i++) {
                acquire(c, "snap@m" + (i % 40), "r" + i);
            }
            assertThat(cluster.node("n3").takeSnapshot()).isPositive();
            cluster.stop("n3");
            try (var files = java.nio.file.Files.walk(cluster.dirs.get("n3"))) {
                assertThat(files.map(f -> f.getFileName().toString())).anyMatch(f -> f.startsWith("snapshot.")
                        && !f.endsWith(".md5") && !f.endsWith(".tmp"));
            }
            for (int i = 0; i < 30; i++) {
                acquire(c, "snap@late" + i, "r");
            }
            cluster.start("n3");
            long target = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestCluster.await(PATIENCE, () -> cluster.node("n3").appliedIndex() >= target, "n3 catches up to " + target);
            cluster.assertIdenticalTables(PATIENCE, "n3", "n1");
            assertThat(cluster.node("n3").table().leases()).hasSize(70);
        }
    }

    @Test
    @DisplayName("a node that missed more than the leader's log keeps gets the leader's snapshot and catches up")
    void installSnapshotFromLeader() {
        try (TestCluster cluster = new TestCluster(3, 20)) {
            String leader = cluster.awaitLeader(PATIENCE);
            String away = leader; // a node that led before, in this JVM
            LeaseClient c = cluster.client();
            acquire(c, "inst@first", "r");
            cluster.stop(away);
            cluster.start(away);
            cluster.awaitLeader(PATIENCE);
            acquire(c, "inst@second", "r");
            cluster.stop(away);
            for (int i = 0; i < 120; i++) {
                acquire(c, "inst@m" + i, "r");
            }
            for (CoordinatorNode n : cluster.running.values()) {
                n.takeSnapshot(); // and the log before it is purged: the returning node cannot replay it
            }
            cluster.start(away);
            long target = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestCluster.await(PATIENCE, () -> cluster.node(away).appliedIndex() >= target, away + " catches up to " + target);
            cluster.assertIdenticalTables(PATIENCE, away, cluster.awaitLeader(PATIENCE));
            assertThat(acquire(c, "inst@after", "r").isOk()).isTrue();
            long next = cluster.node(cluster.awaitLeader(PATIENCE)).appliedIndex();
            TestCluster.await(PATIENCE, () -> cluster.node(away).appliedIndex() >= next, away + " follows on");
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
