package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.Registration;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The control plane on three nodes, through a follower; and leader views read through a follower. */
@DisplayName("the control plane on three nodes, through a follower")
class ThreeNodeControlPlaneTest extends ControlPlaneContract {

    ThreeNodeControlPlaneTest() {
        super(3);
    }

    @Test
    @DisplayName("a stale read on a follower catches up with a write; leader reads see it at once")
    void readConsistency() {
        Lease l = client.leases().acquire("reads@m", A);
        assertThat(client.leases().get("reads@m", ReadConsistency.LINEARIZABLE)).contains(l);
        assertThat(client.leases().get("reads@m", ReadConsistency.LEADER_LEASE)).contains(l);
        TestingCluster.await(PATIENCE, () -> client.leases().get("reads@m", ReadConsistency.STALE).isPresent(),
                "the follower applies the grant");
        assertThat(client.leases().get("reads@m", ReadConsistency.STALE)).contains(l);
        assertThat(client.cluster().status().isLeader()).as("the client talks to a follower").isFalse();
    }

    @Test
    @DisplayName("nodes, partitions, namespaces and routes read through a follower show a write at once; STALE reads the follower's own state")
    void viewsReadTheLeader() throws Exception {
        String leader = cluster.awaitLeader(PATIENCE);
        CoordinationClient viaLeader = cluster.client(leader);
        // writes through the leader, reads at once through the follower: its own state may lag
        for (int n = 0; n < 20; n++) {
            int i = n;
            Lease l = viaLeader.leases().acquire("views@m" + i, A);
            assertThat(client.routes().list().routes()).as("route %s", i).anyMatch(r -> r.leaseId() == l.leaseId());
            viaLeader.nodes().register(NodeInfo.of("view-node-" + i, "127.0.0.1:" + (7200 + i)), Duration.ofMinutes(10));
            assertThat(client.nodes().list()).extracting(NodeInfo::id).contains("view-node-" + i);
            assertThat(client.nodes().partitionMap().ranges()).anyMatch(r -> r.nodeId().equals("view-node-" + i));
            viaLeader.namespaces().create("views-" + i, null, java.util.Map.of());
            assertThat(client.namespaces().get("views-" + i)).isPresent();
            assertThat(client.namespaces().list()).extracting(NamespaceInfo::name).contains("views-" + i);
        }
        assertThat(client.namespaces().get("views-none")).isEmpty();
        // registering through the follower answers with the leader's ranges for the new node
        Registration reg = client.nodes().register(NodeInfo.of("view-node-late", "127.0.0.1:7300"),
                Duration.ofMinutes(10));
        assertThat(reg.ranges()).isNotEmpty().isEqualTo(viaLeader.nodes().partitionMap().ranges().stream()
                .filter(r -> r.nodeId().equals("view-node-late")).toList());

        String follower = cluster.follower(PATIENCE);
        io.grpc.ManagedChannel channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
                .forTarget(cluster.endpoint(follower)).usePlaintext().build();
        try {
            var stub = dev.mailbox.coordination.proto.ControlPlaneGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS);
            long revision = viaLeader.routes().list().revision();
            var stale = dev.mailbox.coordination.proto.ListRoutesRequest.newBuilder()
                    .setConsistency(dev.mailbox.coordination.proto.Consistency.STALE).build();
            TestingCluster.await(PATIENCE, () -> stub.listRoutes(stale).getRevision() >= revision,
                    "the follower applies revision " + revision);
            assertThat(stub.listRoutes(stale).getRoutesList()).hasSize(viaLeader.routes().list().routes().size());
            assertThat(stub.getNamespace(dev.mailbox.coordination.proto.GetNamespaceRequest.newBuilder()
                    .setName("views-3").setConsistency(dev.mailbox.coordination.proto.Consistency.STALE).build())
                    .getNamespace().getName()).isEqualTo("views-3");
        } finally {
            channel.shutdownNow();
        }
    }
}
