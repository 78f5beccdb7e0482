package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MetricsTest {

    private static String get(InetSocketAddress at) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + at.getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    @Test
    @DisplayName("a coordinator and a node serve Prometheus metrics over HTTP on loopback")
    void prometheus() throws Exception {
        try (CoordinatorNode coordinator = CoordinatorNode.builder("m1")
                .peer("m1", new InetSocketAddress("127.0.0.1", 0)).dataDir(Files.createTempDirectory("metrics"))
                .metrics(new InetSocketAddress("127.0.0.1", 0)).start()) {
            TestCluster.await(Duration.ofSeconds(10), coordinator::isLeader, "leader");
            try (CoordinationClient client = CoordinationClient.builder()
                    .endpoint("127.0.0.1:" + coordinator.controlPlaneAddress().getPort()).build();
                 MailboxNode node = MailboxNode.builder("node-m").coordinator(client)
                         .metrics(new InetSocketAddress("127.0.0.1", 0)).start()) {
                client.acquire("metrics@node-m", new LeaseHolder("r", "node-m", node.address()));
                node.host(InMemoryMailbox.builder("metrics@node-m", Codec.bytes()).build());
                RemoteMailbox<String> m = RemoteMailbox.builder("metrics@node-m", Codec.utf8()).node(node.address())
                        .build();
                m.send("x");
                m.close();

                String text = get(coordinator.metricsAddress().orElseThrow());
                assertThat(text).contains("mailbox_coordinator_raft_role{role=\"LEADER\"} 1.0")
                        .contains("mailbox_coordinator_leases{state=\"ACTIVE\"} 1.0")
                        .contains("mailbox_coordinator_routes 1.0")
                        .contains("mailbox_coordinator_nodes_up 1.0")
                        .containsPattern("mailbox_controlplane_requests_seconds_count\\{method=\"AcquireLease\",status=\"OK\"\\} 1")
                        .contains("mailbox_coordinator_raft_term");
                String nodeText = get(node.metricsAddress().orElseThrow());
                assertThat(nodeText).contains("mailbox_node_calls_total{path=\"local\"} 1.0")
                        .containsPattern("mailbox_node_requests_seconds_count\\{method=\"Send\",status=\"OK\"\\} 1");
            }
        }
    }
}
