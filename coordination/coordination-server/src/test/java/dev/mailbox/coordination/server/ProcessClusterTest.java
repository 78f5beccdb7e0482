package dev.mailbox.coordination.server;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three coordinator nodes in child JVMs, so a leader can really be frozen (SIGSTOP: isolated from
 * everyone, then back believing it still leads) and really killed (SIGKILL).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ProcessClusterTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final LeasePolicy POLICY = new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));

    /** A TTL below the client's 5 s call timeout: a renewal attempt that waited the call timeout would cost the lease. */
    private static final LeasePolicy SHORT = new LeasePolicy(Duration.ofSeconds(4), Duration.ofSeconds(1),
            Duration.ofSeconds(1));

    private TestingCluster cluster;
    private final List<CoordinationClient> clients = new ArrayList<>();

    @AfterEach
    void stopAll() {
        clients.forEach(CoordinationClient::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @DisplayName("a frozen leader: the holder it served loses the lease before anyone else gets it, and after "
            + "waking the old leader renews nothing; then a killed leader: a kept lease survives, writes go on")
    void isolateThenKill() throws Exception {
        cluster = TestingCluster.builder().size(3).processes(true).start();
        CoordinationClient all = client(cluster.endpoints().toArray(String[]::new));
        all.namespaces().setPolicy("iso", POLICY);
        String leader = cluster.awaitLeader(PATIENCE);

        // runner A talks to the leader only, so freezing the leader cuts it off
        CoordinationClient viaLeader = client(cluster.endpoint(leader));
        CountDownLatch aLost = new CountDownLatch(1);
        AtomicLong aLostAt = new AtomicLong();
        LeaseKeeper a = viaLeader.leases().keeper("iso@m", new LeaseHolder("runner-a", "node-a", "127.0.0.1:1"))
                .listener((l, why) -> {
                    aLostAt.set(System.nanoTime());
                    aLost.countDown();
                }).build();
        Lease aLease = a.acquire();

        cluster.pause(leader);
        List<String> others = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).toList();
        CoordinationClient viaOthers = client(others.stream().map(cluster::endpoint).toArray(String[]::new));
        java.util.concurrent.atomic.AtomicReference<String> bLost = new java.util.concurrent.atomic.AtomicReference<>();
        LeaseKeeper b = viaOthers.leases().keeper("iso@m", new LeaseHolder("runner-b", "node-b", "127.0.0.1:2"))
                .listener((l, why) -> bLost.set(why)).build();
        Lease bLease = b.acquire(Duration.ofSeconds(30));
        long bGrantedAt = System.nanoTime();
        assertThat(aLost.await(0, TimeUnit.SECONDS)).as("A was told it lost the lease before B got it").isTrue();
        assertThat(aLostAt.get()).isLessThanOrEqualTo(bGrantedAt);
        assertThat(a.isHeld()).isFalse();
        assertThat(bLease.epoch()).isGreaterThan(aLease.epoch());

        // the old leader wakes up still believing it leads: whatever A sends it is never an OK
        cluster.resume(leader);
        CoordinationClient raw = CoordinationClient.builder().endpoint(cluster.endpoint(leader)).maxAttempts(1)
                .callTimeout(Duration.ofSeconds(2)).build();
        clients.add(raw);
        int refused = 0;
        // until it has caught up enough to answer at all (on a loaded machine that takes a while), then a little more
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        long latest = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < until || (refused == 0 && System.nanoTime() < latest)) {
            try {
                raw.leases().renew(aLease);
                throw new AssertionError("the woken old leader renewed A's lease " + aLease);
            } catch (CoordinationException e) {
                refused += e.isRetryable() ? 0 : 1;
            }
        }
        assertThat(refused).as("refusals once the old leader caught up").isPositive();
        assertThat(b.isHeld()).as("B still holds (lost: %s)", bLost).isTrue();
        await(() -> all.cluster().statusOfEach().values().stream().filter(ClusterStatus::isLeader).count() == 1
                && all.cluster().statusOfEach().size() == 3, "one leader, three members answering");

        // now kill the leader outright while B keeps its lease through the surviving nodes
        String second = cluster.awaitLeader(PATIENCE);
        Lease before = all.leases().get("iso@m").orElseThrow();
        cluster.kill(second);
        Lease other = all.leases().acquire("iso@other", new LeaseHolder("runner-c", "node-c", "127.0.0.1:3"));
        assertThat(other.state()).as("a new leader serves writes").isEqualTo(LeaseState.ACTIVE);
        long start = System.nanoTime();
        await(() -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(3_000), "3 s of renewals");
        assertThat(b.isHeld()).as("B's lease survived the kill").isTrue();
        assertThat(all.leases().get("iso@m").orElseThrow()).as("not expired, not re-granted").isEqualTo(before);
        b.close();
        assertThat(all.leases().get("iso@m").orElseThrow().state()).isEqualTo(LeaseState.RELEASED);
    }

    @Test
    @DisplayName("a TTL shorter than the client's call timeout: a holder whose renewals went to a leader that froze "
            + "keeps its lease through the failover (no renewal attempt outlives a third of the TTL)")
    void shortTtlSurvivesFrozenLeader() throws Exception {
        cluster = TestingCluster.builder().size(3).processes(true).start();
        String leader = cluster.awaitLeader(PATIENCE);
        List<String> order = new ArrayList<>(List.of(cluster.endpoint(leader))); // the leader first: renewals go there
        cluster.nodeIds().stream().filter(id -> !id.equals(leader)).map(cluster::endpoint).forEach(order::add);
        CoordinationClient c = CoordinationClient.builder().endpoints(order).callTimeout(Duration.ofSeconds(5)).build();
        clients.add(c);
        c.namespaces().setPolicy("short", SHORT); // TTL 4 s < the 5 s call timeout
        java.util.concurrent.atomic.AtomicReference<String> lost = new java.util.concurrent.atomic.AtomicReference<>();
        LeaseKeeper keeper = c.leases().keeper("short@m", new LeaseHolder("runner-s", "node-s", "127.0.0.1:4"))
                .listener((l, why) -> lost.set(why)).build();
        Lease lease = keeper.acquire();

        cluster.pause(leader);
        try {
            long start = System.nanoTime();
            await(() -> System.nanoTime() - start > TimeUnit.SECONDS.toNanos(12) || lost.get() != null,
                    "3 TTLs with the leader frozen");
            assertThat(lost.get()).as("the keeper was not told of a loss").isNull();
            assertThat(keeper.isHeld()).isTrue();
            List<String> others = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).map(cluster::endpoint)
                    .toList();
            CoordinationClient survivors = client(others.toArray(String[]::new));
            assertThat(survivors.leases().get("short@m").orElseThrow()).as("the same lease, active")
                    .isEqualTo(c.leases().get("short@m").orElseThrow())
                    .satisfies(l -> assertThat(l.leaseId()).isEqualTo(lease.leaseId()))
                    .satisfies(l -> assertThat(l.state()).isEqualTo(LeaseState.ACTIVE));
        } finally {
            cluster.resume(leader);
            keeper.close();
        }
    }

    private CoordinationClient client(String... hostPorts) {
        CoordinationClient c = CoordinationClient.builder().endpoints(List.of(hostPorts))
                .callTimeout(Duration.ofSeconds(2)).build();
        clients.add(c);
        return c;
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) {
        TestingCluster.await(PATIENCE, condition, what);
    }
}
