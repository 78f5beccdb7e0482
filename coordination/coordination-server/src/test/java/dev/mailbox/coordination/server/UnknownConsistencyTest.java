package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.ExportStateRequest;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.GetNamespaceRequest;
import dev.mailbox.coordination.proto.GetPartitionMapRequest;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
import dev.mailbox.coordination.proto.ListNodesRequest;
import dev.mailbox.coordination.proto.ListRoutesRequest;
import dev.mailbox.coordination.proto.ListQueuesRequest;
import dev.mailbox.coordination.proto.GetQueueRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * A read that names a consistency level this coordinator does not know (a newer client asking for a level
 * added since) is refused with INVALID_ARGUMENT naming it, not served at the operation's default, which the
 * operator may have set to STALE.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class UnknownConsistencyTest {

    @Test
    @DisplayName("an unknown consistency value is INVALID_ARGUMENT on every read that takes one")
    void unknownConsistencyIsRefused() {
        try (TestingCluster cluster = TestingCluster.builder().size(1)
                .configure(b -> b.readConsistency(ReadOperation.GET_LEASE, ReadConsistency.STALE))
                .start()) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            cluster.client().namespaces().create("levels", null, Map.of());
            cluster.client().leases().acquire("levels@m1", new LeaseHolder("r1", "node-a", "127.0.0.1:9"));
            ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.endpoint("n1")).usePlaintext().build();
            try {
                ControlPlaneGrpc.ControlPlaneBlockingStub stub = ControlPlaneGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS);
                int unknown = 9;
                List<Executable> reads = List.of(
                        () -> stub.getLease(GetLeaseRequest.newBuilder().setMailboxId("levels@m1")
                                .setConsistencyValue(unknown).build()),
                        () -> stub.listLeases(ListLeasesRequest.newBuilder().setConsistencyValue(unknown).build()),
                        () -> stub.listNodes(ListNodesRequest.newBuilder().setConsistencyValue(unknown).build()),
                        () -> stub.getPartitionMap(GetPartitionMapRequest.newBuilder().setConsistencyValue(unknown)
                                .build()),
                        () -> stub.getNamespace(GetNamespaceRequest.newBuilder().setName("levels")
                                .setConsistencyValue(unknown).build()),
                        () -> stub.listNamespaces(ListNamespacesRequest.newBuilder().setConsistencyValue(unknown)
                                .build()),
                        () -> stub.listRoutes(ListRoutesRequest.newBuilder().setConsistencyValue(unknown).build()),
                        () -> stub.exportState(ExportStateRequest.newBuilder().setConsistencyValue(unknown).build()),
                        () -> stub.getQueue(GetQueueRequest.newBuilder().setName("q1").setConsistencyValue(unknown)
                                .build()),
                        () -> stub.listQueues(ListQueuesRequest.newBuilder().setLimit(10).setConsistencyValue(unknown)
                                .build()));
                for (int i = 0; i < reads.size(); i++) {
                    Executable read = reads.get(i);
                    assertThatThrownBy(read::execute).as("read #" + i)
                            .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                                assertThat(e.getStatus().getDescription()).contains("consistency").contains("9");
                            });
                }
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
