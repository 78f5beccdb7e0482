package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
import dev.mailbox.coordination.server.internal.Serving;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A follower restarted after missing writes catches up on an idle cluster, without waiting for the next
 * write, and its stale reads say how far behind they may be (its applied index and the commit index it
 * knows, in the reply headers and in its status).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StaleFollowerTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a restarted follower catches up by itself; stale replies carry its applied and known commit index")
    void restartedFollowerCatchesUp() {
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(10).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            List<String> names = new ArrayList<>(List.of("before"));
            client.namespaces().create("before", null, Map.of());
            String follower = cluster.follower(PATIENCE);
            cluster.kill(follower);
            for (int i = 0; i < 40; i++) { // and a few snapshots meanwhile
                client.namespaces().create("w" + i, null, Map.of());
                names.add("w" + i);
            }
            String leader = cluster.awaitLeader(PATIENCE);
            long leaderApplied = cluster.node(leader).appliedIndex();

            cluster.start(follower); // and nothing more is written
            TestingCluster.await(PATIENCE, () -> cluster.node(follower).appliedIndex() >= leaderApplied,
                    follower + " catches up to " + leaderApplied + " with no new write");
            cluster.awaitIdenticalState(PATIENCE);

            ClusterStatus status = cluster.status(follower).orElseThrow();
            assertThat(status.commitIndex()).isGreaterThanOrEqualTo(leaderApplied);
            assertThat(status.appliedIndex()).isEqualTo(status.commitIndex());
            try (CoordinationClient direct = CoordinationClient.builder().endpoint(cluster.endpoint(follower)).build()) {
                assertThat(direct.namespaces().list(ReadConsistency.STALE)).extracting(NamespaceInfo::name)
                        .containsExactlyInAnyOrderElementsOf(names);
            }

            ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.endpoint(follower)).usePlaintext().build();
            try {
                AtomicReference<Metadata> headers = new AtomicReference<>();
                AtomicReference<Metadata> trailers = new AtomicReference<>();
                ControlPlaneGrpc.newBlockingStub(channel)
                        .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                        .listNamespaces(ListNamespacesRequest.newBuilder().setConsistency(Consistency.STALE).build());
                assertThat(Long.parseLong(headers.get().get(Serving.APPLIED_INDEX))).isEqualTo(status.appliedIndex());
                assertThat(Long.parseLong(headers.get().get(Serving.COMMIT_INDEX))).isEqualTo(status.commitIndex());
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a stale read from a follower carries its applied index: never past the leader's commit index, "
            + "never past what the answer holds, and it catches up with the writes")
    void staleReadsCarryTheirIndex() {
        try (TestingCluster cluster = TestingCluster.builder().size(3).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("stale", null, Map.of());
            String follower = cluster.follower(PATIENCE);
            cluster.kill(follower);
            // each grant's lease id is its log index: a read at index i must hold every grant at or below i
            Map<String, Long> granted = new java.util.TreeMap<>();
            for (int i = 0; i < 30; i++) {
                dev.mailbox.coordination.Lease l = client.leases().acquire("stale@m" + i,
                        new dev.mailbox.coordination.LeaseHolder("r" + i, "node-" + i, "127.0.0.1:9"));
                granted.put(l.mailboxId(), l.leaseId());
            }
            leader = cluster.awaitLeader(PATIENCE);
            long last = java.util.Collections.max(granted.values());

            cluster.start(follower);
            try (CoordinationClient direct = CoordinationClient.builder().endpoint(cluster.endpoint(follower))
                    .callTimeout(Duration.ofSeconds(5)).build()) {
                long previous = 0;
                long deadline = System.nanoTime() + PATIENCE.toNanos();
                while (true) {
                    dev.mailbox.coordination.StaleRead<List<dev.mailbox.coordination.Lease>> read;
                    try {
                        read = direct.leases().listStale("stale");
                    } catch (dev.mailbox.coordination.CoordinationException e) {
                        assertThat(System.nanoTime() - deadline).as("the restarted follower answers: " + e).isNegative();
                        continue; // still starting
                    }
                    long leaderCommit = cluster.node(leader).appliedIndex();
                    assertThat(read.appliedIndex()).as("never past what the leader committed")
                            .isLessThanOrEqualTo(cluster.status(leader).orElseThrow().commitIndex())
                            .isGreaterThanOrEqualTo(previous);
                    previous = read.appliedIndex();
                    java.util.Set<String> held = new java.util.HashSet<>();
                    read.value().forEach(l -> held.add(l.mailboxId()));
                    long index = read.appliedIndex();
                    granted.forEach((mailbox, leaseId) -> {
                        if (leaseId <= index) {
                            assertThat(held).as("a read at index " + index + " holds the grant at " + leaseId)
                                    .contains(mailbox);
                        }
                    });
                    if (index >= last) {
                        assertThat(held).containsAll(granted.keySet());
                        break;
                    }
                    assertThat(System.nanoTime() - deadline).as("the follower catches up to " + last + " (at "
                            + index + ", leader at " + leaderCommit + ")").isNegative();
                }
                // idle: exactly what the follower applied, which is what the leader committed
                String lead = leader;
                TestingCluster.await(PATIENCE, () -> cluster.node(follower).appliedIndex()
                        >= cluster.node(lead).appliedIndex(), "the follower applies everything");
                dev.mailbox.coordination.StaleRead<List<NamespaceInfo>> namespaces = direct.namespaces().listStale();
                assertThat(namespaces.value()).extracting(NamespaceInfo::name).contains("stale");
                assertThat(namespaces.appliedIndex()).isEqualTo(cluster.node(follower).appliedIndex())
                        .isLessThanOrEqualTo(cluster.status(leader).orElseThrow().commitIndex());
            }
        }
    }
}
