package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Coordinators and nodes put their meters in the registry the application gives them, and take them away. */
class MetricsTest {

    @Test
    @DisplayName("a coordinator and a node report to the application's registry, tagged, and remove their meters on close")
    void applicationRegistry() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (CoordinatorNode coordinator = CoordinatorNode.builder("m1")
                .peer("m1", new InetSocketAddress("127.0.0.1", 0)).dataDir(Files.createTempDirectory("metrics"))
                .meterRegistry(registry).start()) {
            TestingCluster.await(Duration.ofSeconds(10), coordinator::isLeader, "leader");
            try (CoordinationClient client = CoordinationClient.builder()
                    .endpoint("127.0.0.1:" + coordinator.controlPlaneAddress().getPort()).build();
                 MailboxNode node = MailboxNode.builder("node-m").coordinator(client).meterRegistry(registry).start()) {
                client.leases().acquire("metrics@node-m", new LeaseHolder("r", "node-m", node.address()));
                node.host(InMemoryMailbox.builder("metrics@node-m", Codec.bytes()).build());
                RemoteMailbox<String> m = RemoteMailbox.builder("metrics@node-m", Codec.utf8()).node(node.address())
                        .build();
                m.send("x");
                m.close();

                String text = registry.scrape();
                assertThat(text).contains("mailbox_coordinator_raft_role{coordinator=\"m1\",role=\"LEADER\"} 1.0")
                        .contains("mailbox_coordinator_leases{coordinator=\"m1\",state=\"ACTIVE\"} 1.0")
                        .contains("mailbox_coordinator_routes{coordinator=\"m1\"} 1.0")
                        .contains("mailbox_coordinator_nodes_up{coordinator=\"m1\"} 1.0")
                        .containsPattern("mailbox_controlplane_requests_seconds_count\\{coordinator=\"m1\","
                                + "method=\"AcquireLease\",status=\"OK\"\\} 1")
                        .contains("mailbox_coordinator_raft_term{coordinator=\"m1\"}")
                        .contains("mailbox_node_calls_total{node=\"node-m\",path=\"local\"} 1.0")
                        .containsPattern("mailbox_node_requests_seconds_count\\{method=\"Send\",node=\"node-m\","
                                + "status=\"OK\"\\} 1");
            }
            assertThat(registry.getMeters()).as("a closed node's meters").noneMatch(meter ->
                    "node-m".equals(meter.getId().getTag("node")));
        }
        assertThat(registry.getMeters()).as("a closed coordinator's meters").isEmpty();
    }
}
