package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationException.Reason;
import dev.mailbox.coordination.internal.LeaseTable;
import java.time.Duration;
import java.util.List;
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
 * The control plane through {@link CoordinationClient}, on one node and on three. On three, the client
 * talks to a follower only: any node accepts any call.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ControlPlaneTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final LeaseHolder A = new LeaseHolder("runner-a", "node-a", "127.0.0.1:7101");
    private static final LeaseHolder B = new LeaseHolder("runner-b", "node-b", "127.0.0.1:7102");

    @Nested
    @DisplayName("standalone")
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class Standalone extends Semantics {
        Standalone() {
            super(1);
        }
    }

    @Nested
    @DisplayName("three nodes, through a follower")
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class ThreeNodes extends Semantics {
        ThreeNodes() {
            super(3);
        }

        @Test
        @DisplayName("a stale read on a follower catches up with a write; leader reads see it at once")
        void readConsistency() {
            Lease l = client.acquire("reads@m", A);
            assertThat(client.get("reads@m", ReadConsistency.LINEARIZABLE)).contains(l);
            assertThat(client.get("reads@m", ReadConsistency.LEADER_LEASE)).contains(l);
            TestCluster.await(PATIENCE, () -> client.get("reads@m", ReadConsistency.STALE).isPresent(),
                    "the follower applies the grant");
            assertThat(client.get("reads@m", ReadConsistency.STALE)).contains(l);
            assertThat(client.clusterStatus().isLeader()).as("the client talks to a follower").isFalse();
        }

        @Test
        @DisplayName("nodes, partitions, namespaces and routes read through a follower show a write at once; STALE reads the follower's own state")
        void viewsReadTheLeader() throws Exception {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient viaLeader = cluster.coordinationClient(leader);
            // writes through the leader, reads at once through the follower: its own state may lag
            for (int n = 0; n < 20; n++) {
                int i = n;
                Lease l = viaLeader.acquire("views@m" + i, A);
                assertThat(client.routes().routes()).as("route %s", i).anyMatch(r -> r.leaseId() == l.leaseId());
                viaLeader.registerNode(NodeInfo.of("view-node-" + i, "127.0.0.1:" + (7200 + i)), Duration.ofMinutes(10));
                assertThat(client.nodes()).extracting(NodeInfo::id).contains("view-node-" + i);
                assertThat(client.partitionMap().ranges()).anyMatch(r -> r.nodeId().equals("view-node-" + i));
                viaLeader.createNamespace("views-" + i, null, java.util.Map.of());
                assertThat(client.namespace("views-" + i)).isPresent();
                assertThat(client.namespaces()).extracting(NamespaceInfo::name).contains("views-" + i);
            }
            assertThat(client.namespace("views-none")).isEmpty();
            // registering through the follower answers with the leader's ranges for the new node
            CoordinationClient.Registration reg = client.registerNode(NodeInfo.of("view-node-late", "127.0.0.1:7300"),
                    Duration.ofMinutes(10));
            assertThat(reg.ranges()).isNotEmpty().isEqualTo(viaLeader.partitionMap().ranges().stream()
                    .filter(r -> r.nodeId().equals("view-node-late")).toList());

            String follower = cluster.follower(PATIENCE);
            io.grpc.ManagedChannel channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
                    .forTarget(cluster.endpoint(follower)).usePlaintext().build();
            try {
                var stub = dev.mailbox.coordination.proto.ControlPlaneGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS);
                long revision = viaLeader.routes().revision();
                var stale = dev.mailbox.coordination.proto.ListRoutesRequest.newBuilder()
                        .setConsistency(dev.mailbox.coordination.proto.Consistency.STALE).build();
                TestCluster.await(PATIENCE, () -> stub.listRoutes(stale).getRevision() >= revision,
                        "the follower applies revision " + revision);
                assertThat(stub.listRoutes(stale).getRoutesList()).hasSize(viaLeader.routes().routes().size());
                assertThat(stub.getNamespace(dev.mailbox.coordination.proto.GetNamespaceRequest.newBuilder()
                        .setName("views-3").setConsistency(dev.mailbox.coordination.proto.Consistency.STALE).build())
                        .getNamespace().getName()).isEqualTo("views-3");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Semantics {
        private final int size;
        TestCluster cluster;
        CoordinationClient client;

        Semantics(int size) {
            this.size = size;
        }

        @BeforeAll
        void start() {
            cluster = new TestCluster(size, 10_000);
            String target = size == 1 ? "n1" : cluster.follower(PATIENCE);
            cluster.awaitLeader(PATIENCE);
            client = cluster.coordinationClient(target);
        }

        @AfterAll
        void stop() {
            cluster.close();
        }

        @Test
        @DisplayName("grant, deny, re-acquire under a new epoch, renew, release (twice), re-grant with a higher epoch")
        void lifecycle() {
            Lease a = client.acquire("life@m", A, Duration.ofSeconds(30));
            assertThat(a.state()).isEqualTo(LeaseState.ACTIVE);
            assertThat(a.epoch()).isEqualTo(1);
            assertThat(a.runnerId()).isEqualTo("runner-a");
            assertThat(a.partition()).isEqualTo(LeaseTable.partition("life@m"));
            assertThat(a.ttlMillis()).isEqualTo(30_000);
            refused(() -> client.acquire("life@m", B), Reason.FAILED_PRECONDITION, "held by runner 'runner-a'");
            Lease again = client.acquire("life@m", A, Duration.ofSeconds(30));
            assertThat(again.leaseId()).as("same runner again: same lease").isEqualTo(a.leaseId());
            assertThat(again.epoch()).as("...under a new epoch").isEqualTo(a.epoch() + 1);
            refused(() -> client.renew(a), Reason.FAILED_PRECONDITION, "stale epoch");
            refused(() -> client.release(a), Reason.FAILED_PRECONDITION, "stale epoch");
            assertThat(client.renew(again)).isEqualTo(again);

            Lease released = client.release(again);
            assertThat(released.state()).isEqualTo(LeaseState.RELEASED);
            assertThat(client.release(again)).as("a retried release").isEqualTo(released);
            refused(() -> client.renew(again), Reason.FAILED_PRECONDITION, "RELEASED");

            Lease b = client.acquire("life@m", B);
            assertThat(b.epoch()).isEqualTo(3);
            assertThat(b.leaseId()).isGreaterThan(a.leaseId());
            refused(() -> client.renew(a), Reason.FAILED_PRECONDITION, "not the current lease");
            refused(() -> client.release(a), Reason.FAILED_PRECONDITION, "not the current lease");
            assertThat(client.get("life@m")).contains(b);
        }

        @Test
        @DisplayName("a stale epoch is refused and changes nothing")
        void staleEpoch() {
            Lease a = client.acquire("epoch@m", A);
            Lease older = new Lease(a.leaseId(), a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), a.partition(),
                    a.epoch() + 5, a.state(), a.ttlMillis(), a.grantedAtMillis(), 0);
            refused(() -> client.renew(older), Reason.FAILED_PRECONDITION, "stale epoch");
            refused(() -> client.release(older), Reason.FAILED_PRECONDITION, "stale epoch");
            assertThat(client.get("epoch@m")).contains(a);
        }

        @Test
        @DisplayName("revoke fences the holder and keeps the mailbox taken; reclaim frees it")
        void revokeReclaim() {
            Lease a = client.acquire("rv@m", A);
            Lease revoking = client.revoke("rv@m");
            assertThat(revoking.state()).isEqualTo(LeaseState.REVOKING);
            assertThat(revoking.epoch()).isEqualTo(a.epoch() + 1);
            assertThat(client.revoke("rv@m")).as("idempotent").isEqualTo(revoking);
            refused(() -> client.renew(a), Reason.FAILED_PRECONDITION, "stale epoch");
            refused(() -> client.acquire("rv@m", B), Reason.FAILED_PRECONDITION, "REVOKING");
            refused(() -> client.acquire("rv@m", A), Reason.FAILED_PRECONDITION, "REVOKING");
            Lease revoked = client.reclaim("rv@m");
            assertThat(revoked.state()).isEqualTo(LeaseState.REVOKED);
            assertThat(client.reclaim("rv@m")).isEqualTo(revoked);
            Lease b = client.acquire("rv@m", B);
            assertThat(b.epoch()).isEqualTo(revoking.epoch() + 1);
            refused(() -> client.reclaim("rv@m"), Reason.FAILED_PRECONDITION, "only a revoking lease");
        }

        @Test
        @DisplayName("bad input gets INVALID_ARGUMENT or NOT_FOUND with a reason, and the state does not change")
        void badInput() {
            client.acquire("bad@kept", A);
            List<Lease> before = client.list("", ReadConsistency.LINEARIZABLE);
            LeasePolicy policyBefore = client.policy("bad");

            refused(() -> client.acquire("a@b@c", A), Reason.INVALID_ARGUMENT, "namespace@node");
            refused(() -> client.acquire("@node", A), Reason.INVALID_ARGUMENT, "namespace@node");
            refused(() -> client.acquire("bad@x", A, Duration.ofMillis(10)), Reason.INVALID_ARGUMENT, "ttl must be");
            refused(() -> client.acquire("bad@x", A, Duration.ofHours(1)), Reason.INVALID_ARGUMENT, "ttl must be");
            refused(() -> client.acquire("bad@" + "x".repeat(600), A), Reason.INVALID_ARGUMENT, "at most 512");
            refused(() -> client.revoke(" "), Reason.INVALID_ARGUMENT, "must not be blank");
            refused(() -> client.get(""), Reason.INVALID_ARGUMENT, "must not be blank");
            Lease bogus = new Lease(0, "bad@kept", "r", "n", "a", 0, 0, LeaseState.ACTIVE, 1000, 0, 0);
            refused(() -> client.renew(bogus), Reason.INVALID_ARGUMENT, "must be positive");
            Lease unknown = new Lease(1, "bad@never", "r", "n", "a", 0, 1, LeaseState.ACTIVE, 1000, 0, 0);
            refused(() -> client.renew(unknown), Reason.NOT_FOUND, "no lease for mailbox 'bad@never'");
            refused(() -> client.release(unknown), Reason.NOT_FOUND, "no lease for mailbox 'bad@never'");
            refused(() -> client.revoke("bad@never"), Reason.NOT_FOUND, "bad@never");
            refused(() -> client.reclaim("bad@never"), Reason.NOT_FOUND, "bad@never");
            refused(() -> client.setPolicy("with@at", LeasePolicy.DEFAULT), Reason.INVALID_ARGUMENT, "without '@'");
            assertThat(client.get("bad@never")).isEmpty();

            assertThat(client.list("", ReadConsistency.LINEARIZABLE)).isEqualTo(before);
            assertThat(client.policy("bad")).isEqualTo(policyBefore);
        }

        @Test
        @DisplayName("a namespace's policy sets the TTL of the leases granted in it")
        void policy() {
            assertThat(client.policy("pol")).isEqualTo(LeasePolicy.DEFAULT);
            LeasePolicy p = new LeasePolicy(Duration.ofSeconds(7), Duration.ofSeconds(2), Duration.ofSeconds(1));
            client.setPolicy("pol", p);
            assertThat(client.policy("pol")).isEqualTo(p);
            assertThat(client.acquire("pol@m", A).ttlMillis()).isEqualTo(7_000);
            assertThat(client.acquire("pol@n", A, Duration.ofSeconds(3)).ttlMillis()).isEqualTo(3_000);
            assertThat(client.list("pol")).extracting(Lease::mailboxId).containsExactly("pol@m", "pol@n");
        }

        @Test
        @DisplayName("the cluster status names the leader and every member")
        void status() {
            ClusterStatus s = client.clusterStatus();
            assertThat(s.memberIds()).hasSize(size);
            assertThat(s.leaderId()).isNotNull();
            assertThat(s.term()).isPositive();
            assertThat(s.appliedIndex()).isPositive();
        }

        @Test
        @DisplayName("a kept lease outlives its TTL many times; one nobody renews expires; close releases")
        void keeperAndExpiry() throws Exception {
            client.setPolicy("keep", new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofMillis(200)));
            AtomicReference<String> lost = new AtomicReference<>();
            LeaseKeeper keeper = client.keeper("keep@kept", A).listener((l, why) -> lost.set(why)).build();
            Lease kept = keeper.acquire();
            Lease idle = client.acquire("keep@idle", B);
            TestCluster.await(PATIENCE, () -> client.get("keep@idle").orElseThrow().state() == LeaseState.EXPIRED,
                    "the idle lease expires");
            long start = System.nanoTime();
            // three TTLs with the keeper renewing: still held, never reported lost
            TestCluster.await(PATIENCE, () -> System.nanoTime() - start > TimeUnit.SECONDS.toNanos(3), "3 s");
            assertThat(keeper.isHeld()).isTrue();
            assertThat(lost.get()).isNull();
            assertThat(client.get("keep@kept")).contains(kept);
            keeper.close();
            assertThat(keeper.isHeld()).isFalse();
            assertThat(client.get("keep@kept").orElseThrow().state()).isEqualTo(LeaseState.RELEASED);
            assertThat(client.acquire("keep@idle", A).epoch()).isEqualTo(idle.epoch() + 1);
        }

        @Test
        @DisplayName("a revoked lease's keeper hears of it at its next heartbeat")
        void keeperRevoked() throws Exception {
            CountDownLatch lostLatch = new CountDownLatch(1);
            AtomicReference<String> why = new AtomicReference<>();
            try (LeaseKeeper keeper = client.keeper("revk@m", A).ttl(Duration.ofSeconds(3))
                    .heartbeat(Duration.ofMillis(100)).listener((l, reason) -> {
                        why.set(reason);
                        lostLatch.countDown();
                    }).build()) {
                keeper.acquire();
                client.revoke("revk@m");
                assertThat(lostLatch.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(why.get()).contains("refused").contains("stale epoch");
                assertThat(keeper.isHeld()).isFalse();
            }
            assertThat(client.get("revk@m").orElseThrow().state()).as("close does not release a lost lease")
                    .isEqualTo(LeaseState.REVOKING);
        }

        @Test
        @DisplayName("a second keeper waits for the first one's lease to end, then takes over")
        void takeover() throws Exception {
            LeaseKeeper first = client.keeper("take@m", A).ttl(Duration.ofSeconds(2)).build();
            Lease a = first.acquire();
            LeaseKeeper second = client.keeper("take@m", B).ttl(Duration.ofSeconds(2)).build();
            refused(second::acquire, Reason.FAILED_PRECONDITION, "held by runner 'runner-a'");
            LeaseKeeper waiting = client.keeper("take@m", B).ttl(Duration.ofSeconds(2)).build();
            Thread closer = new Thread(first::close);
            closer.start();
            Lease b = waiting.acquire(Duration.ofSeconds(20));
            closer.join();
            assertThat(b.runnerId()).isEqualTo("runner-b");
            assertThat(b.epoch()).isEqualTo(a.epoch() + 1);
            waiting.close();
            second.close();
        }

        static void refused(ThrowingCallable call, Reason reason, String text) {
            assertThatThrownBy(call).isInstanceOfSatisfying(CoordinationException.class, e -> {
                assertThat(e.reason()).isEqualTo(reason);
                assertThat(e.isRetryable()).isFalse();
            }).hasMessageContaining(text);
        }
    }
}
