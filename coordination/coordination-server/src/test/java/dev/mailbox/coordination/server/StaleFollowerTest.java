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
}
