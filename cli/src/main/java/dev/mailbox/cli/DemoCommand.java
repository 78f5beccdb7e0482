package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The coordinated demo, all on loopback: an embedded single-node coordinator, two mailbox nodes, two
 * leased runners in their own JVMs, requests sent through the node that does not own the mailbox, a
 * runner killed with SIGKILL, its lease expiring and the other runner taking over.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Start an embedded coordinator, two mailbox nodes and two leased runners (child JVMs) on "
                + "127.0.0.1, send requests through the node that does not own the mailbox, kill the runner that "
                + "holds the lease, and watch the other one take over.", "Needs nothing but a JDK; takes well under a minute."},
        footer = {"  mailboxctl demo", "  mailboxctl demo --requests 5 --ttl-ms 3000"})
final class DemoCommand implements Callable<Integer> {

    private static final String MAILBOX = "orders@node-a";
    private static final String REPLIES = "demo-replies@node-b";

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--requests", defaultValue = "3", description = "requests per round (default: ${DEFAULT-VALUE})")
    int requests;

    @Option(names = "--ttl-ms", defaultValue = "2000", description = "the runners' lease TTL (default: ${DEFAULT-VALUE})")
    long ttlMillis;

    private PrintWriter out;
    private final long started = System.nanoTime();
    private int sent;

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        if (requests < 1 || requests > 100) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--requests must be between 1 and 100, was "
                    + requests);
        }
        LeasePolicy policy;
        try {
            policy = new LeasePolicy(Duration.ofMillis(ttlMillis), Duration.ofMillis(Math.max(100, ttlMillis / 4)),
                    Duration.ofMillis(ttlMillis / 4));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--ttl-ms: " + e.getMessage());
        }
        List<AutoCloseable> closing = new ArrayList<>();
        List<Runner> runners = new ArrayList<>();
        try {
            heading("1. an embedded coordinator and two mailbox nodes");
            // one coordinator on free loopback ports with a temporary data dir, removed when the demo ends
            TestingCluster coordinators = TestingCluster.start(1);
            closing.add(0, coordinators);
            String endpoint = coordinators.endpoint("n1");
            CoordinationClient client = coordinators.client();
            coordinators.awaitLeader(Duration.ofSeconds(30));
            say("coordinator n1 (standalone Raft group) serves its control plane on " + endpoint);
            MailboxNode a = MailboxNode.builder("node-a").coordinator(client).start();
            closing.add(0, a);
            MailboxNode b = MailboxNode.builder("node-b").coordinator(client).start();
            closing.add(0, b);
            say("node-a serves mailboxes on " + a.address() + ", node-b on " + b.address());
            NamespaceInfo ns = client.namespaces().create("orders", policy, Map.of("demo", "true"));
            say("namespace 'orders' created: partition " + ns.partition() + ", lease ttl " + ttlMillis + " ms, heartbeat "
                    + policy.heartbeatInterval().toMillis() + " ms, grace " + policy.grace().toMillis() + " ms");
            printNodes(client);

            Mailbox<byte[]> requestsHosted = InMemoryMailbox.builder(MAILBOX, Codec.bytes()).build();
            closing.add(requestsHosted);
            a.host(requestsHosted);
            Mailbox<byte[]> repliesHosted = InMemoryMailbox.builder(REPLIES, Codec.bytes()).build();
            closing.add(repliesHosted);
            b.publish(repliesHosted);
            say("node-a hosts " + MAILBOX + "; node-b hosts (and leases) the client's reply mailbox " + REPLIES);
            RoutingTable watch = client.routes().table();
            closing.add(0, watch);
            watch.await(RoutingTable::isSynced, Duration.ofSeconds(10));
            watch.addListener((mailbox, route, revision) -> {
                if (mailbox.equals(MAILBOX)) {
                    say("  route change (revision " + revision + "): " + mailbox + (route == null
                            ? " has no route (no lease holder)" : " -> " + route.nodeId() + " " + route.address()
                            + ", runner " + route.runnerId() + ", lease " + route.leaseId() + "/" + route.epoch()));
                }
            });

            heading("2. two leased runners for " + MAILBOX + ", each in its own JVM");
            Runner first = new Runner("runner-1", endpoint, a);
            runners.add(first);
            first.acquired.await(60, TimeUnit.SECONDS);
            Runner second = new Runner("runner-2", endpoint, a);
            runners.add(second);
            second.waiting.await(60, TimeUnit.SECONDS);
            printLeases(client);
            printRoutes(client);

            heading("3. requests sent through node-b, which does not own " + MAILBOX);
            MainLoopClient<String, String> caller = MainLoopClient.<String, String>builder(
                            RemoteMailbox.builder(MAILBOX, MainLoopCodecs.requests(String.class)).node(b.address()).build(),
                            name -> RemoteMailbox.builder(name, MainLoopCodecs.results(String.class)).node(b.address())
                                    .build())
                    .responseMailboxName(REPLIES).receiveWait(Duration.ofSeconds(1)).build();
            closing.add(0, caller);
            round(caller, "order");

            heading("4. kill runner-1 (SIGKILL: no release, no goodbye)");
            List<CompletableFuture<String>> inFlight = send(caller, "order");
            long killedAt = System.nanoTime();
            first.process.destroyForcibly();
            first.process.waitFor(10, TimeUnit.SECONDS);
            say("runner-1 killed; its lease runs out " + ttlMillis + " ms + grace after its last heartbeat, "
                    + "meanwhile runner-2 waits and the requests wait in " + MAILBOX);
            if (!second.acquired.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("runner-2 did not take over");
            }
            Lease now = client.leases().get(MAILBOX).orElseThrow();
            say(String.format("takeover: %s holds %s (lease %d, epoch %d), %.1f s after the kill", now.runnerId(),
                    MAILBOX, now.leaseId(), now.epoch(), (System.nanoTime() - killedAt) / 1e9));
            for (CompletableFuture<String> f : inFlight) {
                say("  answered: " + f.get(60, TimeUnit.SECONDS));
            }
            printLeases(client);

            heading("5. more requests through node-b, now answered by runner-2");
            round(caller, "order");

            heading("6. stop runner-2 gracefully (SIGTERM): it releases its lease");
            second.process.destroy();
            second.process.waitFor(20, TimeUnit.SECONDS);
            Lease last = client.leases().get(MAILBOX).orElseThrow();
            say("lease " + last.leaseId() + " of " + MAILBOX + " held by " + last.runnerId() + " is " + last.state());
            printRoutes(client);
            say(String.format("demo finished in %.1f s", (System.nanoTime() - started) / 1e9));
            return 0;
        } finally {
            for (Runner r : runners) {
                r.process.destroyForcibly();
            }
            for (AutoCloseable c : closing) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // best effort at the end of a demo
                }
            }
        }
    }

    private void round(MainLoopClient<String, String> caller, String prefix) throws Exception {
        List<CompletableFuture<String>> answers = send(caller, prefix);
        for (CompletableFuture<String> f : answers) {
            say("  answered: " + f.get(60, TimeUnit.SECONDS));
        }
    }

    private List<CompletableFuture<String>> send(MainLoopClient<String, String> caller, String prefix) {
        List<CompletableFuture<String>> out = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            String body = prefix + "-" + (++sent);
            say("  sent " + body + " to node-b");
            out.add(caller.call(body, Duration.ofSeconds(60)));
        }
        return out;
    }

    private void printNodes(CoordinationClient client) {
        PartitionMap map = client.nodes().partitionMap();
        List<List<?>> rows = new ArrayList<>();
        for (NodeInfo n : client.nodes().list()) {
            rows.add(List.of(n.id(), n.address(), n.up() ? "up" : "down",
                    map.rangesOf(n.id()).stream().mapToInt(PartitionMap.Range::size).sum()));
        }
        synchronized (out) {
            Output.table(out, List.of("NODE", "ADDRESS", "STATE", "PARTITIONS"), rows);
        }
    }

    private void printLeases(CoordinationClient client) {
        List<Lease> leases = client.leases().list("orders");
        synchronized (out) {
            out.println("leases:");
            Output.table(out, CoordinationCommands.LEASE_HEADERS, CoordinationCommands.leaseRows(leases));
        }
    }

    private void printRoutes(CoordinationClient client) {
        RoutingSnapshot routes = client.routes().list();
        List<List<?>> rows = new ArrayList<>();
        for (Route r : routes.routes()) {
            rows.add(CoordinationCommands.routeRow(r));
        }
        synchronized (out) {
            out.println("routes (revision " + routes.revision() + "):");
            Output.table(out, CoordinationCommands.ROUTE_HEADERS, rows);
        }
    }

    private void heading(String title) {
        say("");
        say("== " + title + " " + "=".repeat(Math.max(3, 96 - title.length())));
    }

    private void say(String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }



    /** A runner JVM started with this program's own classpath; its lines are printed with its name. */
    private final class Runner {
        final String id;
        final Process process;
        final CountDownLatch waiting = new CountDownLatch(1);
        final CountDownLatch acquired = new CountDownLatch(1);

        Runner(String id, String coordinator, MailboxNode node) throws IOException {
            this.id = id;
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = List.of(java, "-Xmx192m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), MailboxCtl.class.getName(), "runner", "--id", id,
                    "--coordinator", coordinator, "--mailbox", MAILBOX, "--node", node.address(), "--node-id", node.id());
            this.process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        say("  [" + id + "] " + line);
                        if (line.startsWith("waiting")) {
                            waiting.countDown();
                        } else if (line.startsWith("acquired")) {
                            acquired.countDown();
                        }
                    }
                } catch (IOException ignored) {
                    // the process is gone
                }
            }, "demo-" + id);
            reader.setDaemon(true);
            reader.start();
            say("started " + id + " (pid " + process.pid() + ")");
        }
    }
}
