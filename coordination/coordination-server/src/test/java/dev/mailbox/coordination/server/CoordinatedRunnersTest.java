package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.RoutingTable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * End to end: a 3-node coordinator cluster, three mailbox nodes, leased runners in child JVMs that are
 * killed for real, and a MainLoopClient that sends through a node that does not own the mailbox.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoordinatedRunnersTest {

    private static final String REQUESTS = "orders@node-a";
    private static final String REPLIES = "replies@node-c";

    private TestingCluster cluster;
    private CoordinationClient client;
    private MailboxNode a;
    private MailboxNode b;
    private MailboxNode c;
    private final List<Child> children = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void start() {
        cluster = TestingCluster.builder().size(3).snapshotEvery(10_000).start();
        client = cluster.client();
        a = MailboxNode.builder("node-a").coordinator(client).start();
        b = MailboxNode.builder("node-b").coordinator(client).start();
        c = MailboxNode.builder("node-c").coordinator(client).start();
    }

    @AfterEach
    void stop() throws Exception {
        children.forEach(Child::kill);
        for (AutoCloseable x : closeables) {
            x.close();
        }
        c.close();
        b.close();
        a.close();
        cluster.close();
    }

    @Test
    @DisplayName("requests through a non-owning node are all answered across a runner kill, a takeover and a leader kill")
    void runnerKillTakeoverAndLeaderKill() throws Exception {
        client.namespaces().create("orders", new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500),
                Duration.ofMillis(500)), Map.of());
        Mailbox<byte[]> hostedRequests = InMemoryMailbox.builder(REQUESTS, Codec.bytes()).build();
        Mailbox<byte[]> hostedReplies = InMemoryMailbox.builder(REPLIES, Codec.bytes()).build();
        closeables.add(hostedRequests);
        closeables.add(hostedReplies);
        a.host(hostedRequests);
        c.publish(hostedReplies);

        Child first = runner("runner-1");
        first.await("ACQUIRED");
        Child second = runner("runner-2");

        MainLoopClient<String, String> caller = MainLoopClient.<String, String>builder(
                        RemoteMailbox.builder(REQUESTS, MainLoopCodecs.requests(String.class)).node(b.address()).build(),
                        name -> RemoteMailbox.builder(name, MainLoopCodecs.<String>results(String.class))
                                .node(b.address()).build())
                .responseMailboxName(REPLIES).receiveWait(Duration.ofSeconds(1)).build();
        closeables.add(0, caller);
        assertThat(b.hosted()).doesNotContain(REQUESTS, REPLIES);

        // 1. through node B to the runner behind node A
        Set<String> answers = new HashSet<>(callAll(caller, "warm", 20));
        assertThat(answers).hasSize(20).allMatch(s -> s.startsWith("runner-1:"));

        // 2. kill the lease holder: its lease expires and the waiting runner takes over
        List<CompletableFuture<String>> during = send(caller, "takeover", 20);
        first.kill();
        second.await("ACQUIRED");
        Lease taken = client.leases().get(REQUESTS).orElseThrow();
        assertThat(taken.runnerId()).isEqualTo("runner-2");
        for (MailboxNode n : List.of(a, b, c)) {
            RoutingTable routes = n.routingTable().orElseThrow();
            assertThat(routes.await(t -> t.route(REQUESTS).map(r -> r.runnerId().equals("runner-2")).orElse(false),
                    Duration.ofSeconds(10))).as("node %s sees the new route", n.id()).isTrue();
        }
        answers.addAll(join(during));
        List<String> after = callAll(caller, "after", 20);
        assertThat(after).allMatch(s -> s.startsWith("runner-2:"));
        answers.addAll(after);

        // 3. kill the coordinator leader while requests flow: none is lost
        List<CompletableFuture<String>> flowing = send(caller, "failover", 30);
        String leader = cluster.awaitLeader(Duration.ofSeconds(10));
        cluster.stop(leader);
        answers.addAll(join(flowing));
        answers.addAll(callAll(caller, "new-leader", 10));

        assertThat(answers).hasSize(100);
        assertThat(answers.stream().map(s -> s.substring(s.indexOf(':') + 1)).distinct().count()).isEqualTo(100);
    }

    @Test
    @DisplayName("a route change is seen by every watcher; a watcher whose coordinator dies resumes elsewhere")
    void everyWatcherSeesRouteChanges() throws Exception {
        List<RoutingTable> watchers = new ArrayList<>();
        for (MailboxNode n : List.of(a, b, c)) {
            watchers.add(n.routingTable().orElseThrow());
        }
        List<String> ids = new ArrayList<>(cluster.nodeIds());
        for (int i = 0; i < ids.size(); i++) {
            // each watcher starts on a different coordinator and knows the others to fail over to
            List<String> order = new ArrayList<>(ids.subList(i, ids.size()));
            order.addAll(ids.subList(0, i));
            RoutingTable t = cluster.client(order.toArray(String[]::new)).routes().table();
            closeables.add(t);
            watchers.add(t);
        }
        Lease lease = client.leases().acquire("billing@node-b", new LeaseHolder("r1", "node-b", b.address()));
        for (RoutingTable t : watchers) {
            assertThat(t.await(x -> x.route("billing@node-b").map(r -> r.leaseId() == lease.leaseId()).orElse(false),
                    Duration.ofSeconds(10))).as("%s sees the grant", t).isTrue();
        }
        long snapshotsBefore = watchers.stream().mapToLong(RoutingTable::snapshotsReceived).sum();

        String leader = cluster.awaitLeader(Duration.ofSeconds(10));
        cluster.stop(leader);
        client.leases().revoke("billing@node-b");
        for (RoutingTable t : watchers) {
            assertThat(t.await(x -> x.route("billing@node-b").isEmpty(), Duration.ofSeconds(15)))
                    .as("%s sees the revoke", t).isTrue();
        }
        // the watcher of the stopped node reconnected to another and resumed: no node sent a new snapshot
        assertThat(watchers.stream().mapToLong(RoutingTable::snapshotsReceived).sum()).isEqualTo(snapshotsBefore);
        long revision = client.routes().list().revision();
        for (RoutingTable t : watchers) {
            assertThat(t.await(x -> x.revision() >= revision, Duration.ofSeconds(10))).isTrue();
        }
    }

    @Test
    @DisplayName("nodes register and go down, namespaces are created once, partition ranges cover 0..255")
    void nodesNamespacesAndPartitions() throws Exception {
        List<NodeInfo> nodes = client.nodes().list();
        assertThat(nodes).extracting(NodeInfo::id).containsExactly("node-a", "node-b", "node-c");
        assertThat(nodes).allMatch(NodeInfo::up);
        PartitionMap map = client.nodes().partitionMap();
        assertThat(map.ranges().stream().mapToInt(PartitionMap.Range::size).sum()).isEqualTo(256);
        assertThat(map).isEqualTo(PartitionMap.of(List.of("node-a", "node-b", "node-c")));

        NamespaceInfo ns = client.namespaces().create("payments", null, Map.of("team", "ledger"));
        assertThat(ns.partition()).isEqualTo(PartitionMap.partition("payments"));
        assertThat(ns.ownerNodeId()).isEqualTo(map.ownerOf(ns.partition()));
        assertThat(ns.policy()).isEqualTo(LeasePolicy.DEFAULT);
        assertThat(client.namespaces().create("payments", null, Map.of("team", "ledger")))
                .as("a create asking exactly what exists (a retry whose first answer was lost) returns it").isEqualTo(ns);
        assertThatThrownBy(() -> client.namespaces().create("payments", null, Map.of()))
                .isInstanceOf(CoordinationException.class)
                .satisfies(e -> assertThat(((CoordinationException) e).reason())
                        .isEqualTo(CoordinationException.Reason.ALREADY_EXISTS));
        assertThatThrownBy(() -> client.namespaces().create("bad name", null, Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("namespace name");
        assertThatThrownBy(() -> client.leases().acquire("_nodes@x", new LeaseHolder("r", "n", "a:1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
        assertThat(client.namespaces().list()).extracting(NamespaceInfo::name).containsExactly("payments");

        // node C stops heartbeating: it is marked down, and only its partitions move
        MailboxNode shortLived = MailboxNode.builder("node-d").coordinator(client)
                .registrationTtl(Duration.ofSeconds(1)).start();
        TestingCluster.await(Duration.ofSeconds(10), () -> client.nodes().partitionMap().nodes().contains("node-d"), "node-d up");
        PartitionMap withD = client.nodes().partitionMap();
        shortLived.close();
        TestingCluster.await(Duration.ofSeconds(15), () -> client.nodes().list().stream()
                .anyMatch(n -> n.id().equals("node-d") && !n.up()), "node-d marked down");
        PartitionMap withoutD = client.nodes().partitionMap();
        assertThat(withoutD).isEqualTo(map);
        int owned = withD.ranges().stream().filter(r -> r.nodeId().equals("node-d"))
                .mapToInt(PartitionMap.Range::size).sum();
        assertThat(owned).isPositive();
        assertThat(withD.moved(withoutD)).isEqualTo(owned);
    }

    private Child runner(String id) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> endpoints = cluster.nodeIds().stream().map(cluster::endpoint).toList();
        Process p = new ProcessBuilder(java, "-Xmx128m", "-cp", System.getProperty("java.class.path"),
                RunnerMain.class.getName(), id, "node-a", a.address(), REQUESTS, String.join(",", endpoints))
                .redirectError(Path.of(System.getProperty("java.io.tmpdir"), "runner-" + id + "-" + ProcessHandle.current().pid()
                        + ".log").toFile()).start();
        Child child = new Child(id, p);
        children.add(child);
        return child;
    }

    private static List<CompletableFuture<String>> send(MainLoopClient<String, String> caller, String tag, int n) {
        List<CompletableFuture<String>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(caller.call(tag + "-" + i, Duration.ofSeconds(60)));
        }
        return out;
    }

    private static List<String> callAll(MainLoopClient<String, String> caller, String tag, int n) throws Exception {
        return join(send(caller, tag, n));
    }

    private static List<String> join(List<CompletableFuture<String>> futures) throws Exception {
        List<String> out = new ArrayList<>();
        for (CompletableFuture<String> f : futures) {
            out.add(f.get(90, TimeUnit.SECONDS));
        }
        return out;
    }

    /** A runner JVM and the lines it prints. */
    private static final class Child {
        final String id;
        final Process process;
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

        Child(String id, Process process) {
            this.id = id;
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException ignored) {
                    // the process died
                }
            }, "child-" + id);
            reader.setDaemon(true);
            reader.start();
        }

        void await(String prefix) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < until) {
                String line = lines.poll(1, TimeUnit.SECONDS);
                if (line != null && line.startsWith(prefix)) {
                    return;
                }
                if (!process.isAlive() && lines.isEmpty()) {
                    throw new AssertionError(id + " exited with " + process.exitValue() + " before printing " + prefix);
                }
            }
            throw new AssertionError(id + " did not print " + prefix + " in time");
        }

        void kill() {
            process.destroyForcibly(); // SIGKILL: no release, no goodbye
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
