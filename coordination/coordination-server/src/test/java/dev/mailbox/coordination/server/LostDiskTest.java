package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.ReadConsistency;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A coordinator whose data dir was lost does not rejoin as if it had never accepted anything: the operator
 * removes it and adds it back, and it copies the state from the leader. (Before, it formatted a fresh log,
 * formed a majority with a peer that had missed writes, and acknowledged writes were gone.)
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LostDiskTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a wiped member refuses to start while the cluster counts it; removed and added back, it copies the state "
            + "and no acknowledged write is lost")
    void wipedMemberRejoinsOnlyThroughMembership() {
        try (TestingCluster cluster = TestingCluster.start(3)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("before", null, Map.of());
            cluster.kill("n3");
            for (String ns : List.of("w1", "w2", "w3")) {
                client.namespaces().create(ns, null, Map.of()); // acknowledged by n1 and n2
            }
            cluster.kill("n1");
            cluster.kill("n2");
            cluster.wipe("n2");
            cluster.start("n3"); // stale: it never saw w1..w3

            // n2 asks the others before it votes with an empty log: n3 still counts it as a member
            assertThatThrownBy(() -> cluster.start("n2")).hasMessageContaining("still counts it as a member")
                    .hasMessageContaining("remove-member n2").hasMessageContaining("add-member n2=");
            assertThat(cluster.isRunning("n2")).isFalse();

            cluster.start("n1");
            cluster.awaitLeader(PATIENCE);
            assertThat(client.namespaces().list()).extracting(NamespaceInfo::name)
                    .containsExactly("before", "w1", "w2", "w3");

            // the documented recovery: remove it, start it again empty, add it back
            Map<String, String> members = client.cluster().removeMember("n2");
            assertThat(members).containsOnlyKeys("n1", "n3");
            cluster.start("n2");
            members = client.cluster().addMember("n2", cluster.raftAddress("n2"));
            assertThat(members).containsOnlyKeys("n1", "n2", "n3");
            cluster.awaitIdenticalState(PATIENCE);
            try (CoordinationClient viaN2 = CoordinationClient.builder().endpoint(cluster.endpoint("n2")).build()) {
                assertThat(viaN2.namespaces().list(ReadConsistency.STALE)).extracting(NamespaceInfo::name)
                        .as("n2's own state").containsExactly("before", "w1", "w2", "w3");
            }
            client.namespaces().create("after", null, Map.of());
            cluster.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("a wiped member started as if for a new cluster refuses to start (it used to rejoin as a voter with "
            + "a warning); started as a deliberate replacement, it has itself removed, starts empty and is added back")
    void wipedMemberStartedAsNew() {
        try (TestingCluster cluster = TestingCluster.start(3)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("before", null, Map.of());
            cluster.awaitIdenticalState(PATIENCE);
            cluster.kill("n2");
            cluster.wipe("n2");
            client.namespaces().create("while-away", null, Map.of());

            assertThatThrownBy(() -> cluster.start("n2", CoordinatorNode.ClusterState.NEW))
                    .hasMessageContaining("exists with this node as a member that has taken part")
                    .hasMessageContaining("--initial-cluster-state replace").hasMessageContaining("remove-member n2");
            assertThat(cluster.isRunning("n2")).isFalse();
            assertThat(client.cluster().status().memberIds()).as("nothing changed").containsExactlyInAnyOrder("n1",
                    "n2", "n3");

            cluster.wipe("n2"); // whatever the refused start left
            cluster.start("n2", CoordinatorNode.ClusterState.REPLACE);
            TestingCluster.await(PATIENCE, () -> client.cluster().status().memberIds().contains("n2")
                    && cluster.node("n2").appliedIndex() > 0, "n2 is added back and copies the state");
            client.namespaces().create("after", null, Map.of());
            cluster.awaitIdenticalState(PATIENCE);
            try (CoordinationClient viaN2 = CoordinationClient.builder().endpoint(cluster.endpoint("n2")).build()) {
                assertThat(viaN2.namespaces().list(ReadConsistency.STALE)).extracting(NamespaceInfo::name)
                        .as("n2's own state").containsExactly("after", "before", "while-away");
            }

            // restarted later with the same setting, it recovers its data dir as always
            cluster.stop("n2");
            cluster.start("n2", CoordinatorNode.ClusterState.REPLACE);
            assertThat(client.cluster().status().memberIds()).containsExactlyInAnyOrder("n1", "n2", "n3");
            cluster.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("the members of a new cluster may start one after another: a member that never ran starts as new "
            + "although the others already elected a leader and count it")
    void newClusterMembersStartOneAfterAnother(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        Map<String, java.net.InetSocketAddress> peers = new java.util.LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                peers.put(id, new java.net.InetSocketAddress("127.0.0.1", s.getLocalPort()));
            }
        }
        List<CoordinatorNode> nodes = new java.util.ArrayList<>();
        try {
            for (String id : List.of("n1", "n2")) {
                nodes.add(CoordinatorNode.builder(id).cluster("staggered").peers(peers).dataDir(dir.resolve(id)).start());
            }
            String endpoints = nodes.stream().map(n -> "127.0.0.1:" + n.controlPlaneAddress().getPort())
                    .collect(java.util.stream.Collectors.joining(","));
            try (CoordinationClient client = CoordinationClient.builder().endpoints(List.of(endpoints.split(",")))
                    .build()) {
                TestingCluster.await(PATIENCE, () -> nodes.stream().anyMatch(CoordinatorNode::isLeader), "a leader");
                client.namespaces().create("early", null, Map.of());
                nodes.add(CoordinatorNode.builder("n3").cluster("staggered").peers(peers).dataDir(dir.resolve("n3"))
                        .start());
                TestingCluster.await(PATIENCE, () -> nodes.get(2).appliedIndex() >= nodes.get(0).appliedIndex(),
                        "n3 catches up");
            }
        } finally {
            nodes.forEach(CoordinatorNode::close);
        }
    }

    @Test
    @DisplayName("membership changes are refused clearly: an existing member, an unknown one, a bad id")
    void membershipRefusals() {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            assertThatThrownBy(() -> client.cluster().addMember("n1", cluster.raftAddress("n1")))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.ALREADY_EXISTS));
            assertThatThrownBy(() -> client.cluster().removeMember("n9"))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.NOT_FOUND)).hasMessageContaining("[n1]");
            assertThatThrownBy(() -> client.cluster().removeMember("n1"))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION)).hasMessageContaining("last");
            assertThatThrownBy(() -> client.cluster().addMember("bad id", "h:1"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node id");
            assertThatThrownBy(() -> client.cluster().addMember("n7", "127.0.0.1:1"))
                    .as("a member that is not running").isInstanceOfSatisfying(CoordinationException.class,
                            e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION));
            assertThat(client.cluster().status().memberIds()).containsExactly("n1");
        }
    }
}
