package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException.Reason;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.ReadConsistency;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The control plane through {@link CoordinationClient}, on one node ({@link StandaloneControlPlaneTest})
 * and on three ({@link ThreeNodeControlPlaneTest}, where the client talks to a follower only: any node
 * accepts any call). Separate classes, not {@code @Nested} ones, so that each run has its own test report.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ControlPlaneContract {

    static final Duration PATIENCE = Duration.ofSeconds(30);
    static final LeaseHolder A = new LeaseHolder("runner-a", "node-a", "127.0.0.1:7101");
    static final LeaseHolder B = new LeaseHolder("runner-b", "node-b", "127.0.0.1:7102");

    private final int size;
    TestingCluster cluster;
    CoordinationClient client;
    io.grpc.ManagedChannel channel;

    ControlPlaneContract(int size) {
        this.size = size;
    }

    @BeforeAll
    void start() {
        cluster = TestingCluster.builder().size(size).snapshotEvery(10_000).start();
        String target = size == 1 ? "n1" : cluster.follower(PATIENCE);
        cluster.awaitLeader(PATIENCE);
        client = cluster.client(target);
        channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder.forTarget(cluster.endpoint(target))
                .usePlaintext().build();
    }

    @AfterAll
    void stop() {
        channel.shutdownNow();
        cluster.close();
    }

    @Test
    @DisplayName("a call the holder gave up on and that lands after its next call was granted is refused and changes "
            + "nothing: the client numbers its calls, and the control plane passes the number on")
    void lateCallOfTheSameHolder() {
        LeaseHolder holder = new LeaseHolder("runner-late", "node-a", "127.0.0.1:7301");
        client.leases().acquire("late@m", holder);
        Lease newer = client.leases().acquire("late@m", holder);
        var stub = dev.mailbox.coordination.proto.ControlPlaneGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS);
        // the same holder's call made before the client's (any number below a clock reading in microseconds)
        var earlier = dev.mailbox.coordination.proto.AcquireLeaseRequest.newBuilder().setMailboxId("late@m")
                .setRunnerId(holder.runnerId()).setNodeId(holder.nodeId()).setAddress(holder.address())
                .setHolderSecret(holder.secret()).setRequestId("given-up-on").setSequence(1);
        assertThatThrownBy(() -> stub.acquireLease(earlier.build()))
                .isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode())
                        .isEqualTo(io.grpc.Status.Code.FAILED_PRECONDITION))
                .hasMessageContaining("late copy").hasMessageContaining("request given-up-on, call 1");
        assertThat(client.leases().get("late@m", ReadConsistency.LINEARIZABLE)).as("nothing changed").contains(newer);
        assertThat(client.leases().renew(newer).epoch()).as("the newer call's holder renews").isEqualTo(newer.epoch());
        Lease fresh = CoordinationException.await(client.leases().acquireAsync("late@m", holder, Duration.ZERO,
                "given-up-on"));
        assertThat(fresh.epoch()).as("the client's own later call is newer than both").isEqualTo(newer.epoch() + 1);
    }

    @Test
    @DisplayName("saying the holder's runner id is not enough: another LeaseHolder with the same ids waits, the route "
            + "stays, the real holder keeps renewing and re-acquiring")
    void runnerIdIsOnlyAName() {
        LeaseHolder real = new LeaseHolder("runner-dup", "node-a", "127.0.0.1:7201");
        Lease held = client.leases().acquire("dup@m", real);
        LeaseHolder impostor = new LeaseHolder("runner-dup", "node-a", "127.0.0.1:7666");
        refused(() -> client.leases().acquire("dup@m", impostor), Reason.FAILED_PRECONDITION,
                "another process running as 'runner-dup'");
        assertThat(client.routes().list().routes()).filteredOn(r -> r.mailboxId().equals("dup@m"))
                .singleElement().satisfies(r -> assertThat(r.address()).isEqualTo("127.0.0.1:7201"));
        assertThat(client.leases().renew(held).epoch()).isEqualTo(held.epoch());
        Lease again = client.leases().acquire("dup@m", real);
        assertThat(again.epoch()).isEqualTo(held.epoch() + 1);
        assertThat(again.leaseId()).isEqualTo(held.leaseId());
    }

    @Test
    @DisplayName("grant, deny, re-acquire under a new epoch, renew, release (twice), re-grant with a higher epoch")
    void lifecycle() {
        Lease a = client.leases().acquire("life@m", A, Duration.ofSeconds(30));
        assertThat(a.state()).isEqualTo(LeaseState.ACTIVE);
        assertThat(a.epoch()).isEqualTo(1);
        assertThat(a.runnerId()).isEqualTo("runner-a");
        assertThat(a.partition()).isEqualTo(dev.mailbox.coordination.PartitionMap.partition("life@m"));
        assertThat(a.ttlMillis()).isEqualTo(30_000);
        refused(() -> client.leases().acquire("life@m", B), Reason.FAILED_PRECONDITION, "held by runner 'runner-a'");
        Lease again = client.leases().acquire("life@m", A, Duration.ofSeconds(30));
        assertThat(again.leaseId()).as("same runner again: same lease").isEqualTo(a.leaseId());
        assertThat(again.epoch()).as("...under a new epoch").isEqualTo(a.epoch() + 1);
        refused(() -> client.leases().renew(a), Reason.FAILED_PRECONDITION, "stale epoch");
        refused(() -> client.leases().release(a), Reason.FAILED_PRECONDITION, "stale epoch");
        assertThat(client.leases().renew(again)).isEqualTo(again);

        Lease released = client.leases().release(again);
        assertThat(released.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(client.leases().release(again)).as("a retried release").isEqualTo(released);
        refused(() -> client.leases().renew(again), Reason.FAILED_PRECONDITION, "RELEASED");

        Lease b = client.leases().acquire("life@m", B);
        assertThat(b.epoch()).isEqualTo(3);
        assertThat(b.leaseId()).isGreaterThan(a.leaseId());
        refused(() -> client.leases().renew(a), Reason.FAILED_PRECONDITION, "not the current lease");
        refused(() -> client.leases().release(a), Reason.FAILED_PRECONDITION, "not the current lease");
        assertThat(client.leases().get("life@m")).contains(b);
    }

    @Test
    @DisplayName("a stale epoch is refused and changes nothing")
    void staleEpoch() {
        Lease a = client.leases().acquire("epoch@m", A);
        Lease older = new Lease(a.leaseId(), a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), a.partition(),
                a.epoch() + 5, a.state(), a.ttlMillis(), a.grantedAtMillis(), 0);
        refused(() -> client.leases().renew(older), Reason.FAILED_PRECONDITION, "stale epoch");
        refused(() -> client.leases().release(older), Reason.FAILED_PRECONDITION, "stale epoch");
        assertThat(client.leases().get("epoch@m")).contains(a);
    }

    @Test
    @DisplayName("revoke fences the holder and keeps the mailbox taken; reclaim frees it")
    void revokeReclaim() {
        Lease a = client.leases().acquire("rv@m", A);
        Lease revoking = client.leases().revoke("rv@m");
        assertThat(revoking.state()).isEqualTo(LeaseState.REVOKING);
        assertThat(revoking.epoch()).isEqualTo(a.epoch() + 1);
        assertThat(client.leases().revoke("rv@m")).as("idempotent").isEqualTo(revoking);
        refused(() -> client.leases().renew(a), Reason.FAILED_PRECONDITION, "stale epoch");
        refused(() -> client.leases().acquire("rv@m", B), Reason.FAILED_PRECONDITION, "REVOKING");
        refused(() -> client.leases().acquire("rv@m", A), Reason.FAILED_PRECONDITION, "REVOKING");
        Lease revoked = client.leases().reclaim("rv@m");
        assertThat(revoked.state()).isEqualTo(LeaseState.REVOKED);
        assertThat(client.leases().reclaim("rv@m")).isEqualTo(revoked);
        Lease b = client.leases().acquire("rv@m", B);
        assertThat(b.epoch()).isEqualTo(revoking.epoch() + 1);
        refused(() -> client.leases().reclaim("rv@m"), Reason.FAILED_PRECONDITION, "only a revoking lease");
    }

    @Test
    @DisplayName("bad input: the client refuses it before sending, the control plane with INVALID_ARGUMENT and "
            + "the same words, and the state does not change")
    void badInput() {
        client.leases().acquire("bad@kept", A);
        List<Lease> before = client.leases().list("", ReadConsistency.LINEARIZABLE);
        LeasePolicy policyBefore = client.namespaces().policy("bad");
        var stub = dev.mailbox.coordination.proto.ControlPlaneGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS);

        for (String[] bad : new String[][] {{"a@b@c", "'namespace@node'"}, {"@node", "namespace name must be"},
                {"bad@", "'namespace@node'"}, {"bad@x y", "node id must be"},
                {"bad@" + "x".repeat(600), "node id must be 1 to 80"}, {" ", "namespace name must be"}}) {
            invalid(() -> client.leases().acquire(bad[0], A), bad[1]);
            serverRefuses(() -> stub.acquireLease(dev.mailbox.coordination.proto.AcquireLeaseRequest.newBuilder()
                    .setMailboxId(bad[0]).setRunnerId("r").setNodeId("n").setAddress("h:1").build()), bad[1]);
            invalid(() -> client.leases().revoke(bad[0]), bad[1]);
            serverRefuses(() -> stub.revokeLease(dev.mailbox.coordination.proto.RevokeLeaseRequest.newBuilder()
                    .setMailboxId(bad[0]).build()), bad[1]);
            invalid(() -> client.leases().get(bad[0]), bad[1]);
        }
        invalid(() -> client.leases().acquire("bad@x", A, Duration.ofMillis(10)), "ttl must be");
        invalid(() -> client.leases().acquire("bad@x", A, Duration.ofHours(1)), "ttl must be");
        serverRefuses(() -> stub.acquireLease(dev.mailbox.coordination.proto.AcquireLeaseRequest.newBuilder()
                .setMailboxId("bad@x").setRunnerId("r").setNodeId("n").setAddress("h:1").setTtlMillis(10).build()),
                "ttl must be");
        invalid(() -> client.leases().acquire("_nodes@x", A), "reserved");
        serverRefuses(() -> stub.acquireLease(dev.mailbox.coordination.proto.AcquireLeaseRequest.newBuilder()
                .setMailboxId("_nodes@x").setRunnerId("r").setNodeId("n").setAddress("h:1").build()), "reserved");
        serverRefuses(() -> stub.acquireLease(dev.mailbox.coordination.proto.AcquireLeaseRequest.newBuilder()
                .setMailboxId("bad@x").setRunnerId("r").setNodeId("n").setAddress("nowhere").build()),
                "address must be host:port");
        Lease bogus = new Lease(0, "bad@kept", "r", "n", "a:1", 0, 0, LeaseState.ACTIVE, 1000, 0, 0);
        invalid(() -> client.leases().renew(bogus), "must be positive");
        serverRefuses(() -> stub.renewLease(dev.mailbox.coordination.proto.RenewLeaseRequest.newBuilder()
                .setMailboxId("bad@kept").build()), "must be positive");
        invalid(() -> client.namespaces().setPolicy("with@at", LeasePolicy.DEFAULT), "namespace name must be");
        serverRefuses(() -> stub.setLeasePolicy(dev.mailbox.coordination.proto.SetLeasePolicyRequest.newBuilder()
                .setNamespace("with@at").setTtlMillis(10_000).setHeartbeatMillis(1_000).build()),
                "namespace name must be");
        serverRefuses(() -> stub.setLeasePolicy(dev.mailbox.coordination.proto.SetLeasePolicyRequest.newBuilder()
                .setNamespace("bad").setTtlMillis(10_000).setHeartbeatMillis(20_000).build()), "heartbeat interval");
        invalid(() -> client.namespaces().create("-dash", null, Map.of()), "namespace name must be");
        invalid(() -> client.namespaces().create("labelled", null, Map.of("k", "v".repeat(2_000))), "label 'k'");
        serverRefuses(() -> stub.createNamespace(dev.mailbox.coordination.proto.CreateNamespaceRequest.newBuilder()
                .setName("labelled").putLabels("k", "v".repeat(2_000)).build()), "label 'k'");

        Lease unknown = new Lease(1, "bad@never", "r", "n", "a:1", 0, 1, LeaseState.ACTIVE, 1000, 0, 0);
        refused(() -> client.leases().renew(unknown), Reason.NOT_FOUND, "no lease for mailbox 'bad@never'");
        refused(() -> client.leases().release(unknown), Reason.NOT_FOUND, "no lease for mailbox 'bad@never'");
        refused(() -> client.leases().revoke("bad@never"), Reason.NOT_FOUND, "bad@never");
        refused(() -> client.leases().reclaim("bad@never"), Reason.NOT_FOUND, "bad@never");
        assertThat(client.leases().get("bad@never")).isEmpty();

        // nothing granted, revoked or taken over: the same lease ids and epochs (leases of earlier tests with
        // short TTLs may expire meanwhile, which the sweeper does, not the bad input), and bad@kept untouched
        List<Lease> after = client.leases().list("", ReadConsistency.LINEARIZABLE);
        assertThat(after).extracting(Lease::mailboxId, Lease::leaseId, Lease::epoch)
                .isEqualTo(before.stream().map(l -> org.assertj.core.groups.Tuple.tuple(l.mailboxId(), l.leaseId(),
                        l.epoch())).toList());
        assertThat(after).filteredOn(l -> l.mailboxId().equals("bad@kept"))
                .isEqualTo(before.stream().filter(l -> l.mailboxId().equals("bad@kept")).toList());
        assertThat(client.namespaces().policy("bad")).isEqualTo(policyBefore);
        assertThat(client.namespaces().get("labelled")).isEmpty();
    }

    @Test
    @DisplayName("a namespace's policy sets the TTL of the leases granted in it")
    void policy() {
        assertThat(client.namespaces().policy("pol")).isEqualTo(LeasePolicy.DEFAULT);
        LeasePolicy p = new LeasePolicy(Duration.ofSeconds(7), Duration.ofSeconds(2), Duration.ofSeconds(1));
        client.namespaces().setPolicy("pol", p);
        assertThat(client.namespaces().policy("pol")).isEqualTo(p);
        assertThat(client.leases().acquire("pol@m", A).ttlMillis()).isEqualTo(7_000);
        assertThat(client.leases().acquire("pol@n", A, Duration.ofSeconds(3)).ttlMillis()).isEqualTo(3_000);
        assertThat(client.leases().list("pol")).extracting(Lease::mailboxId).containsExactly("pol@m", "pol@n");
    }

    @Test
    @DisplayName("the cluster status names the leader and every member")
    void status() {
        ClusterStatus s = client.cluster().status();
        assertThat(s.memberIds()).hasSize(size);
        assertThat(s.leaderId()).isNotNull();
        assertThat(s.term()).isPositive();
        assertThat(s.appliedIndex()).isPositive();
    }

    @Test
    @DisplayName("a kept lease outlives its TTL many times; one nobody renews expires; close releases")
    void keeperAndExpiry() throws Exception {
        client.namespaces().setPolicy("keep", new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofMillis(200)));
        AtomicReference<String> lost = new AtomicReference<>();
        LeaseKeeper keeper = client.leases().keeper("keep@kept", A).listener((l, why) -> lost.set(why)).build();
        Lease kept = keeper.acquire();
        Lease idle = client.leases().acquire("keep@idle", B);
        TestingCluster.await(PATIENCE, () -> client.leases().get("keep@idle").orElseThrow().state() == LeaseState.EXPIRED,
                "the idle lease expires");
        long start = System.nanoTime();
        // three TTLs with the keeper renewing: still held, never reported lost
        TestingCluster.await(PATIENCE, () -> System.nanoTime() - start > TimeUnit.SECONDS.toNanos(3), "3 s");
        assertThat(keeper.isHeld()).isTrue();
        assertThat(lost.get()).isNull();
        assertThat(client.leases().get("keep@kept")).contains(kept);
        keeper.close();
        assertThat(keeper.isHeld()).isFalse();
        assertThat(client.leases().get("keep@kept").orElseThrow().state()).isEqualTo(LeaseState.RELEASED);
        assertThat(client.leases().acquire("keep@idle", A).epoch()).isEqualTo(idle.epoch() + 1);
    }

    @Test
    @DisplayName("a revoked lease's keeper hears of it at its next heartbeat")
    void keeperRevoked() throws Exception {
        CountDownLatch lostLatch = new CountDownLatch(1);
        AtomicReference<String> why = new AtomicReference<>();
        try (LeaseKeeper keeper = client.leases().keeper("revk@m", A).ttl(Duration.ofSeconds(3))
                .heartbeat(Duration.ofMillis(100)).listener((l, reason) -> {
                    why.set(reason);
                    lostLatch.countDown();
                }).build()) {
            keeper.acquire();
            client.leases().revoke("revk@m");
            assertThat(lostLatch.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(why.get()).contains("refused").contains("stale epoch");
            assertThat(keeper.isHeld()).isFalse();
        }
        assertThat(client.leases().get("revk@m").orElseThrow().state()).as("close does not release a lost lease")
                .isEqualTo(LeaseState.REVOKING);
    }

    @Test
    @DisplayName("a second keeper waits for the first one's lease to end, then takes over")
    void takeover() throws Exception {
        LeaseKeeper first = client.leases().keeper("take@m", A).ttl(Duration.ofSeconds(2)).build();
        Lease a = first.acquire();
        LeaseKeeper second = client.leases().keeper("take@m", B).ttl(Duration.ofSeconds(2)).build();
        refused(second::acquire, Reason.FAILED_PRECONDITION, "held by runner 'runner-a'");
        LeaseKeeper waiting = client.leases().keeper("take@m", B).ttl(Duration.ofSeconds(2)).build();
        Thread closer = new Thread(first::close);
        closer.start();
        Lease b = waiting.acquire(Duration.ofSeconds(20));
        closer.join();
        assertThat(b.runnerId()).isEqualTo("runner-b");
        assertThat(b.epoch()).isEqualTo(a.epoch() + 1);
        waiting.close();
        second.close();
    }

    static void invalid(ThrowingCallable call, String text) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(text);
    }

    static void serverRefuses(ThrowingCallable call, String text) {
        assertThatThrownBy(call).isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> assertThat(
                e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT)).hasMessageContaining(text);
    }

    static void refused(ThrowingCallable call, Reason reason, String text) {
        assertThatThrownBy(call).isInstanceOfSatisfying(CoordinationException.class, e -> {
            assertThat(e.reason()).isEqualTo(reason);
            assertThat(e.isRetryable()).isFalse();
        }).hasMessageContaining(text);
    }
}
