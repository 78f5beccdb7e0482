package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.console.ConsoleSource;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What the console reads from a coordinator and from a node, on a three-member cluster: the coordinator's own
 * state (time left on the leader only), a node's mailboxes (never creating a node-local one), and coordinators
 * that stop answering.
 */
@DisplayName("The console's sources on a coordinator and a node")
class ConsoleSourcesTest {

    private static TestingCluster cluster;
    private static CoordinationClient client;
    private static MailboxNode node;
    private static CoordinationClient nodeClient;

    @BeforeAll
    static void start() {
        cluster = TestingCluster.start(3);
        cluster.awaitLeader(Duration.ofSeconds(30));
        client = cluster.client();
        client.namespaces().create("orders", new LeasePolicy(Duration.ofSeconds(30), Duration.ofSeconds(5),
                Duration.ofSeconds(2)), Map.of());
        nodeClient = CoordinationClient.builder().endpoints(cluster.endpoints()).build();
        node = MailboxNode.builder("node-a").coordinator(nodeClient).start();
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.close();
            nodeClient.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @DisplayName("a coordinator shows its own state; only the leader knows a lease's time left")
    void coordinator() {
        Lease lease = client.leases().acquire("orders@node-a", new LeaseHolder("r1", "node-a", node.address()));
        String leader = cluster.awaitLeader(Duration.ofSeconds(30));
        String follower = cluster.follower(Duration.ofSeconds(30));
        cluster.awaitIdenticalState(Duration.ofSeconds(30), leader, follower);

        ConsoleSource onLeader = cluster.node(leader).consoleSource();
        ConsoleSource onFollower = cluster.node(follower).consoleSource();

        ClusterStatus self = onLeader.coordinators().get(0);
        assertThat(self.nodeId()).isEqualTo(leader);
        assertThat(self.role()).isEqualTo("LEADER");
        assertThat(self.members()).hasSize(3);
        assertThat(onFollower.coordinators().get(0).role()).isEqualTo("FOLLOWER");
        assertThat(onFollower.coordinators().get(0).leaderId()).isEqualTo(leader);

        Lease seen = onFollower.leases().stream().filter(l -> l.mailboxId().equals("orders@node-a")).findFirst()
                .orElseThrow();
        assertThat(seen.runnerId()).isEqualTo("r1");
        assertThat(seen.epoch()).isEqualTo(lease.epoch());
        assertThat(onLeader.timeLeftMillis(seen)).isBetween(1L, 32_000L); // TTL plus grace, counting down
        assertThat(onFollower.timeLeftMillis(seen)).isEqualTo(-1);
        assertThat(onLeader.namespaces()).extracting(n -> n.name()).contains("orders");
        assertThat(onLeader.nodes()).extracting(n -> n.id()).contains("node-a");
        assertThat(onLeader.routes().routes()).extracting(r -> r.mailboxId()).contains("orders@node-a");
        assertThat(onLeader.mailboxIds()).as("a coordinator holds no messages").isEmpty();
        client.leases().release(lease);
    }

    @Test
    @DisplayName("a node lists what it hosts and what is routed to it, and never opens a node-local mailbox elsewhere")
    void node() throws InterruptedException {
        Mailbox<byte[]> hosted = InMemoryMailbox.builder("hosted@node-a", Codec.bytes()).build();
        node.host(hosted);
        Lease here = client.leases().acquire("routed@node-a", new LeaseHolder("r2", "node-a", node.address()));
        Lease elsewhere = client.leases().acquire("other@node-b", new LeaseHolder("r3", "node-b", "127.0.0.1:1"));
        node.routingTable().orElseThrow().await(t -> t.route("other@node-b").isPresent(), Duration.ofSeconds(10));

        ConsoleSource source = node.consoleSource();

        assertThat(source.kind()).isEqualTo("node");
        assertThat(source.mailboxIds()).contains("hosted@node-a", "routed@node-a").doesNotContain("other@node-b");
        assertThat(source.mailbox("hosted@node-a")).containsSame(hosted);
        assertThat(source.mailbox("routed@node-a")).as("no backend to open it from").isEmpty();
        assertThat(source.nodes()).extracting(n -> n.id()).contains("node-a");
        // every coordinator answers (one another test killed may still be starting again)
        TestingCluster.await(Duration.ofSeconds(30), () -> source.coordinators().stream()
                .filter(s -> s.fault() == null && !s.role().equals("UNREACHABLE")).count() == 3, "three answers");
        client.leases().release(here);
        client.leases().release(elsewhere);
        node.unhost("hosted@node-a");
    }

    @Test
    @DisplayName("a node shows a coordinator that does not answer as unreachable")
    void unreachable() {
        String victim = cluster.follower(Duration.ofSeconds(30));
        cluster.kill(victim);
        try {
            List<ClusterStatus> seen = node.consoleSource().coordinators();
            assertThat(seen).hasSize(3);
            assertThat(seen).filteredOn(s -> s.role().equals("UNREACHABLE")).singleElement()
                    .satisfies(s -> assertThat(s.fault()).isEqualTo("no answer from " + cluster.endpoint(victim)));
        } finally {
            cluster.start(victim);
            cluster.awaitIdenticalState(Duration.ofSeconds(30), cluster.nodeIds().toArray(String[]::new));
        }
    }
}
