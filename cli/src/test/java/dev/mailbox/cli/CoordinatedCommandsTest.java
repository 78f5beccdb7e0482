package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.time.Duration;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** mailboxctl against a real coordinator and mailbox node in this JVM. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoordinatedCommandsTest {

    private static TestingCluster coordinator;
    private static CoordinationClient client;
    private static MailboxNode node;
    private static String endpoint;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @BeforeAll
    static void start() throws Exception {
        coordinator = TestingCluster.start(1);
        endpoint = coordinator.endpoint("n1");
        client = coordinator.client();
        coordinator.awaitLeader(Duration.ofSeconds(20));
        node = MailboxNode.builder("node-x").coordinator(client).start();
        node.host(InMemoryMailbox.builder("inbox@node-x", Codec.bytes()).build());
        client.leases().acquire("inbox@node-x", new LeaseHolder("host", "node-x", node.address()));
    }

    @AfterAll
    static void stop() {
        node.close();
        coordinator.close();
    }

    @Test
    @DisplayName("namespaces create/list, nodes list, leases, routes and cluster status, as tables and as JSON")
    void controlPlane() throws Exception {
        CliRun created = run("namespaces", "create", "billing", "--ttl-ms", "4000", "--heartbeat-ms", "1000",
                "--label", "team=money", "-c", endpoint);
        assertThat(created.exitCode()).as(created.err()).isZero();
        assertThat(created.out()).contains("NAMESPACE").contains("billing").contains("4000ms");

        CliRun again = run("namespaces", "create", "billing", "-c", endpoint);
        assertThat(again.exitCode()).isEqualTo(1);
        assertThat(again.err()).contains("already exists");

        CliRun bad = run("namespaces", "create", "not ok", "-c", endpoint);
        assertThat(bad.exitCode()).isNotZero();
        assertThat(bad.err()).contains("namespace name");

        JsonNode namespaces = new ObjectMapper().readTree(run("namespaces", "list", "-o", "json", "-c", endpoint).out());
        assertThat(namespaces.get(0).get("name").asText()).isEqualTo("billing");
        assertThat(namespaces.get(0).get("ownerNodeId").asText()).isEqualTo("node-x");

        CliRun nodes = run("nodes", "list", "-c", endpoint);
        assertThat(nodes.out()).contains("node-x").contains("up").contains("256").contains("0-255");

        CliRun leases = run("leases", "list", "-c", endpoint);
        assertThat(leases.out()).contains("inbox@node-x").contains("ACTIVE").doesNotContain("_nodes");
        assertThat(run("leases", "get", "inbox@node-x", "-o", "json", "-c", endpoint).out())
                .contains("\"runnerId\" : \"host\"");
        assertThat(run("leases", "get", "nothing@here", "-c", endpoint).exitCode()).isEqualTo(1);

        CliRun routes = run("routes", "list", "-c", endpoint);
        assertThat(routes.out()).contains("revision").contains("inbox@node-x").contains(node.address());
        CliRun watch = run("routes", "watch", "--for-ms", "200", "-c", endpoint);
        assertThat(watch.out()).contains("inbox@node-x");

        CliRun status = run("cluster", "status", "-c", endpoint);
        assertThat(status.exitCode()).isZero();
        assertThat(status.out()).containsPattern("n1\\s+\\S+\\s+LEADER\\s+n1");
    }

    @Test
    @DisplayName("a --wait-ms that runs out before what it waits for exits non-zero, so a script does not go on")
    void waitThatTimesOutFails() {
        CliRun noRoute = run("routes", "list", "--mailbox", "never@node-x", "--wait-ms", "300", "-c", endpoint);
        assertThat(noRoute.exitCode()).as(noRoute.out()).isEqualTo(1);
        assertThat(noRoute.err()).contains("never@node-x");

        client.leases().acquire("waited@node-x", new LeaseHolder("w", "node-x", node.address()));
        CliRun routed = run("routes", "list", "--mailbox", "waited@node-x", "--wait-ms", "5000", "-c", endpoint);
        assertThat(routed.exitCode()).as(routed.err()).isZero();
        assertThat(routed.out()).contains("waited@node-x");

        // one of the two endpoints never answers: the wait for every endpoint runs out
        CliRun partial = run("cluster", "status", "--wait-ms", "300", "-c", endpoint + ",127.0.0.1:1",
                "--timeout-ms", "1000");
        assertThat(partial.out()).contains("UNREACHABLE").containsPattern("n1\\s+\\S+\\s+LEADER");
        assertThat(partial.exitCode()).isEqualTo(1);
        assertThat(run("cluster", "status", "--wait-ms", "300", "-c", endpoint).exitCode()).isZero();
    }

    @Test
    @DisplayName("revoke and reclaim a lease")
    void revokeReclaim() {
        client.leases().acquire("spare@node-x", new LeaseHolder("r", "node-x", node.address()));
        assertThat(run("leases", "revoke", "spare@node-x", "-c", endpoint).out()).contains("REVOKING");
        assertThat(run("leases", "reclaim", "spare@node-x", "-c", endpoint).out()).contains("REVOKED");
    }

    @Test
    @DisplayName("send, receive, count and purge through a mailbox node by URI")
    void mailboxCommands() {
        String uri = "node://" + node.address() + "/inbox@node-x";
        assertThat(run("send", uri, "hello", "world").exitCode()).isZero();
        assertThat(run("count", uri).out()).contains("2");
        CliRun got = run("receive", uri, "-n", "1", "-o", "json");
        assertThat(got.out()).contains("\"body\" : \"hello\"");
        assertThat(run("count", uri).out()).contains("1");
        assertThat(run("purge", uri).out()).contains("1");
        assertThat(run("count", uri, "-o", "json").out()).contains("\"count\" : 0");

        CliRun unknown = run("count", "nope://x");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown mailbox URI scheme");
    }

    @Test
    @DisplayName("the demo shows requests through the non-owning node, a runner kill and the takeover")
    void demo() {
        CliRun r = run("demo", "--requests", "2");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("[runner-1] acquired the lease of orders@node-a")
                .contains("answered: handled by runner-1: order-1")
                .contains("runner-1 killed")
                .contains("has no route (no lease holder)")
                .containsPattern("takeover: runner-2 holds orders@node-a \\(lease \\d+, epoch 2\\)")
                .contains("answered: handled by runner-2:")
                .contains("is RELEASED");
    }

    @Test
    @DisplayName("coordinator start serves a standalone node from a config file until killed")
    void coordinatorStart() throws Exception {
        java.nio.file.Path dir = Files.createTempDirectory("cli-start");
        int raft;
        int plane;
        int metrics;
        int listen;
        try (java.net.ServerSocket a = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             java.net.ServerSocket b = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             java.net.ServerSocket c = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             java.net.ServerSocket d = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            raft = a.getLocalPort();
            plane = b.getLocalPort();
            metrics = c.getLocalPort();
            listen = d.getLocalPort();
        }
        java.nio.file.Path config = dir.resolve("c.properties");
        Files.writeString(config, "id=s1\ncluster=cli\nraft=127.0.0.1:" + raft + "\ncontrol-plane=127.0.0.1:" + plane
                + "\nmetrics=127.0.0.1:" + metrics + "\nraft-listen=127.0.0.1:" + listen + "\ndata-dir=" + dir.resolve("data").toString().replace("\\", "/")
                + "\nelection-timeout-min-ms=200\nelection-timeout-max-ms=400\npre-vote=true\nleader-lease-ratio=0.8"
                + "\nsnapshot-every=5000\nsnapshot-retention=3\nread-consistency=get-lease=stale,list-routes=linearizable"
                + "\nlog-segment-bytes=1048576\n");
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                MailboxCtl.class.getName(), "coordinator", "start", "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile()).start();
        try {
            String target = "127.0.0.1:" + plane;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            CliRun status = run("cluster", "status", "-c", target, "--timeout-ms", "1000");
            // the role can read LEADER a moment before the node names itself as the leader
            while (!status.out().matches("(?s).*s1\\s+\\S+\\s+LEADER\\s+s1\\s.*") && System.nanoTime() < until) {
                Thread.sleep(200); // the child JVM starts and elects itself; nothing to wait on but polling
                status = run("cluster", "status", "-c", target, "--timeout-ms", "1000");
            }
            assertThat(status.out()).containsPattern("s1\\s+127.0.0.1:" + plane + "\\s+LEADER\\s+s1");
            assertThat(Files.readString(dir.resolve("out.log"))).contains("coordinator s1 of cluster 'cli'")
                    .contains("raft 127.0.0.1:" + raft + " (bound at 127.0.0.1:" + listen + ")")
                    .contains("metrics http://127.0.0.1:" + metrics + "/metrics");
            // raft-listen: the Raft server binds there; the address the cluster knows it by is only dialled
            try (java.net.Socket bound = new java.net.Socket("127.0.0.1", listen)) {
                assertThat(bound.isConnected()).isTrue();
            }
            assertThatThrownBy(() -> new java.net.Socket("127.0.0.1", raft).close())
                    .isInstanceOf(java.net.ConnectException.class);
            java.net.http.HttpResponse<String> scrape = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + metrics
                            + "/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("mailbox_coordinator_raft_role{coordinator=\"s1\",role=\"LEADER\"} 1.0")
                    .as("the warm-up's throwaway members (on by default) report nowhere").doesNotContain("warm-up");
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("coordinator start refuses bad Raft, snapshot and read settings, naming the flag or key")
    void badRaftSettings() throws Exception {
        java.nio.file.Path dir = Files.createTempDirectory("cli-bad");
        String data = dir.resolve("data").toString();
        CliRun low = run("coordinator", "start", "--data-dir", data, "--election-timeout-min-ms", "20");
        assertThat(low.exitCode()).isEqualTo(2);
        assertThat(low.err()).contains("--election-timeout-min-ms").contains("at least 50 ms, was 20 ms");
        CliRun inverted = run("coordinator", "start", "--data-dir", data, "--election-timeout-min-ms", "300",
                "--election-timeout-max-ms", "200");
        assertThat(inverted.exitCode()).isEqualTo(2);
        assertThat(inverted.err()).contains("more than the shortest (300 ms), was 200 ms");
        CliRun op = run("coordinator", "start", "--data-dir", data, "--read-consistency", "get-leases=stale");
        assertThat(op.exitCode()).isEqualTo(2);
        assertThat(op.err()).contains("unknown read operation 'get-leases'").contains("list-routes");
        CliRun level = run("coordinator", "start", "--data-dir", data, "--read-consistency", "get-lease=fresh");
        assertThat(level.exitCode()).isEqualTo(2);
        assertThat(level.err()).contains("stale, leader-lease or linearizable, was 'fresh'");
        java.nio.file.Path config = dir.resolve("c.properties");
        Files.writeString(config, "pre-vote=maybe\n");
        CliRun preVote = run("coordinator", "start", "--data-dir", data, "--config", config.toString());
        assertThat(preVote.exitCode()).isEqualTo(2);
        assertThat(preVote.err()).contains("pre-vote").contains("true or false, was 'maybe'");
        Files.writeString(config, "snapshot-every=often\n");
        CliRun every = run("coordinator", "start", "--data-dir", data, "--config", config.toString());
        assertThat(every.exitCode()).isEqualTo(2);
        assertThat(every.err()).contains("key snapshot-every").contains("whole number, was 'often'");
        CliRun segment = run("coordinator", "start", "--data-dir", data, "--log-segment-bytes", "100");
        assertThat(segment.exitCode()).isEqualTo(2);
        assertThat(segment.err()).contains("--log-segment-bytes").contains("at least 4096 bytes, was 100");
        CliRun warmUp = run("coordinator", "start", "--data-dir", data, "--warm-up", "yes");
        assertThat(warmUp.exitCode()).isEqualTo(2);
        assertThat(warmUp.err()).contains("--warm-up (key warm-up)").contains("true or false, was 'yes'");
        CliRun ratio = run("coordinator", "start", "--data-dir", data, "--leader-lease-ratio", "2");
        assertThat(ratio.exitCode()).isEqualTo(2);
        assertThat(ratio.err()).contains("more than 0 and at most 1, was 2.0");
        assertThat(Files.exists(dir.resolve("data"))).as("nothing is created for a refused start").isFalse();
    }
}
