package dev.mailbox.coordination.server;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.server.internal.CoordinatorProcess;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * A coordinator cluster for tests: N coordinator nodes on free loopback ports, each with its own temporary
 * data dir, that a test can stop, kill, pause, restart and inspect, like Curator's {@code TestingCluster}.
 * Nodes run in this JVM by default (fast to start, {@link #node} gives direct access) or, with
 * {@link Builder#processes}, each in a child JVM, so that {@link #kill} is a real SIGKILL and {@link #pause}
 * a real SIGSTOP.
 *
 * <pre>{@code
 * try (TestingCluster cluster = TestingCluster.start(3)) {
 *     CoordinationClient client = cluster.client();
 *     Lease lease = client.leases().acquire("orders@node-a", holder);
 *     cluster.kill(cluster.awaitLeader(Duration.ofSeconds(10)));
 *     ...
 *     cluster.awaitIdenticalState(Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * Clients made by {@link #client} are closed with the cluster; {@link #close()} stops every node and
 * deletes the data dirs. Waits poll the nodes every 20 ms: Raft offers nothing to wait on for these.
 * Thread-safe for the operations a test makes from one thread while clients run on others.
 */
public final class TestingCluster implements AutoCloseable {

    private static final Duration STATUS_DEADLINE = Duration.ofSeconds(2);

    private final String name = "test-" + Long.toHexString(System.nanoTime());
    private final Path root;
    private final Builder settings;
    private final Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
    private final Map<String, InetSocketAddress> controlPlanes = new LinkedHashMap<>();
    private final Map<String, CoordinatorNode> inProcess = new ConcurrentHashMap<>();
    private final Map<String, Process> processes = new ConcurrentHashMap<>();
    private final Map<String, ManagedChannel> statusChannels = new ConcurrentHashMap<>();
    private final List<AutoCloseable> clients = new ArrayList<>();
    /** Nodes started at least once: every later start says the cluster exists. */
    private final java.util.Set<String> startedOnce = ConcurrentHashMap.newKeySet();

    private TestingCluster(Builder b) {
        this.settings = b;
        try {
            this.root = Files.createTempDirectory("testing-cluster-");
            for (int i = 1; i <= b.size; i++) {
                String id = "n" + i;
                peers.put(id, new InetSocketAddress("127.0.0.1", freePort()));
                controlPlanes.put(id, new InetSocketAddress("127.0.0.1", freePort()));
                Files.createDirectories(dataDir(id));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set up a testing cluster", e);
        }
    }

    /** @return a builder (3 nodes in this JVM by default) */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @param size how many nodes
     * @return a started cluster of that many nodes in this JVM
     */
    public static TestingCluster start(int size) {
        return builder().size(size).start();
    }

    private TestingCluster startAll() {
        try {
            for (String id : peers.keySet()) {
                start(id);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        return this;
    }

    // --- addresses -------------------------------------------------------------------------------

    /** @return the cluster's name (its Raft group is derived from it) */
    public String name() {
        return name;
    }

    /** @return the node ids, n1..nN */
    public List<String> nodeIds() {
        return List.copyOf(peers.keySet());
    }

    /** @return node id to Raft address, for every node */
    public Map<String, InetSocketAddress> peers() {
        return Map.copyOf(peers);
    }

    /**
     * @param id a node
     * @return its control-plane address, {@code host:port}
     */
    public String endpoint(String id) {
        InetSocketAddress a = Objects.requireNonNull(controlPlanes.get(id), () -> "no node " + id);
        return a.getHostString() + ":" + a.getPort();
    }

    /** @return every node's control-plane address, in node order */
    public List<String> endpoints() {
        return peers.keySet().stream().map(this::endpoint).toList();
    }

    /**
     * @param id a node
     * @return its data dir
     */
    public Path dataDir(String id) {
        return root.resolve(id);
    }

    // --- clients ---------------------------------------------------------------------------------

    /** @return a new client of every node (closed with the cluster) */
    public CoordinationClient client() {
        return client(peers.keySet().toArray(String[]::new));
    }

    /**
     * @param ids nodes
     * @return a new client of those nodes only (closed with the cluster)
     */
    public CoordinationClient client(String... ids) {
        CoordinationClient.Builder b = CoordinationClient.builder().callTimeout(Duration.ofSeconds(3))
                .security(settings.clientSecurity);
        for (String id : ids) {
            b.endpoint(endpoint(id));
        }
        CoordinationClient c = b.build();
        synchronized (clients) {
            clients.add(c);
        }
        return c;
    }

    // --- lifecycle of one node -------------------------------------------------------------------

    /**
     * Starts a node that is not running, on its ports and data dir (so it recovers what it had). Its first
     * start bootstraps the cluster ({@link CoordinatorNode.ClusterState#NEW}); every later one says the
     * cluster exists, as an operator would, so a node whose data dir was {@link #wipe wiped} refuses to start
     * while the cluster still counts it as a member.
     *
     * @param id the node
     */
    public void start(String id) {
        start(id, startedOnce.contains(id) ? CoordinatorNode.ClusterState.EXISTING : CoordinatorNode.ClusterState.NEW);
    }

    /**
     * Starts a node that is not running, saying how it starts if its data dir is empty (for example
     * {@link CoordinatorNode.ClusterState#REPLACE} for one that was {@link #wipe wiped}).
     *
     * @param id    the node
     * @param state its initial cluster state
     */
    public void start(String id, CoordinatorNode.ClusterState state) {
        if (isRunning(id)) {
            throw new IllegalStateException("node " + id + " is running");
        }
        if (settings.processes) {
            processes.put(id, launch(id, state));
        } else {
            CoordinatorNode.Builder b = CoordinatorNode.builder(id).cluster(name).peers(peers).dataDir(dataDir(id))
                    .controlPlane(controlPlanes.get(id)).electionTimeout(settings.electionTimeout)
                    .snapshotEvery(settings.snapshotEvery).clusterState(state);
            inProcess.put(id, settings.configure.apply(b).start());
        }
        startedOnce.add(id);
    }

    /**
     * Deletes a stopped node's data dir, as a lost disk would.
     *
     * @param id the node
     * @throws IllegalStateException if it is running
     */
    public void wipe(String id) {
        if (isRunning(id)) {
            throw new IllegalStateException("node " + id + " is running; stop or kill it first");
        }
        try (Stream<Path> files = Files.walk(dataDir(id))) {
            files.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dataDir(id))).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot wipe " + dataDir(id), e);
        }
    }

    /**
     * @param id a node
     * @return its Raft address, {@code host:port}
     */
    public String raftAddress(String id) {
        InetSocketAddress a = Objects.requireNonNull(peers.get(id), () -> "no node " + id);
        return a.getHostString() + ":" + a.getPort();
    }

    /**
     * Stops a node gracefully (SIGTERM for a child process).
     *
     * @param id the node
     */
    public void stop(String id) {
        CoordinatorNode node = inProcess.remove(id);
        if (node != null) {
            node.close();
        }
        Process p = processes.remove(id);
        if (p != null) {
            signal(p, "CONT"); // a paused process cannot run its shutdown hook
            p.destroy();
            awaitExit(p, id);
        }
    }

    /**
     * Stops a node as a crash would: SIGKILL for a child process; in this JVM, its Raft server stops
     * first, so the others see it vanish mid-flight.
     *
     * @param id the node
     */
    public void kill(String id) {
        CoordinatorNode node = inProcess.remove(id);
        if (node != null) {
            node.crash();
        }
        Process p = processes.remove(id);
        if (p != null) {
            p.destroyForcibly();
            awaitExit(p, id);
        }
    }

    /**
     * Freezes a child-process node (SIGSTOP): it answers nothing, then resumes believing whatever it
     * believed.
     *
     * @param id the node
     * @throws IllegalStateException for a cluster in this JVM
     */
    public void pause(String id) {
        signal(process(id), "STOP");
    }

    /**
     * Resumes a paused child-process node (SIGCONT).
     *
     * @param id the node
     */
    public void resume(String id) {
        signal(process(id), "CONT");
    }

    /**
     * @param id a node
     * @return whether it is running (a paused one is)
     */
    public boolean isRunning(String id) {
        Process p = processes.get(id);
        return inProcess.containsKey(id) || (p != null && p.isAlive());
    }

    /**
     * @param id a node running in this JVM
     * @return it
     * @throws IllegalStateException if it is not running, or the cluster runs child processes
     */
    public CoordinatorNode node(String id) {
        CoordinatorNode n = inProcess.get(id);
        if (n == null) {
            throw new IllegalStateException(settings.processes ? "nodes of this cluster run in child processes"
                    : "node " + id + " is not running");
        }
        return n;
    }

    /**
     * @param id a node running in a child process
     * @return its process id
     */
    public long pid(String id) {
        return process(id).pid();
    }

    // --- observing -------------------------------------------------------------------------------

    /**
     * @param id a running node
     * @return its status, or empty if it does not answer in time
     */
    public Optional<ClusterStatus> status(String id) {
        return statusReply(id, false).map(dev.mailbox.coordination.internal.Protos::fromProto);
    }

    /** @return the running node that says it leads, if one does */
    public Optional<String> leader() {
        for (String id : peers.keySet()) {
            if (!isRunning(id)) {
                continue;
            }
            CoordinatorNode n = inProcess.get(id);
            boolean leads = n != null ? n.isLeader() : status(id).map(ClusterStatus::isLeader).orElse(false);
            if (leads) {
                return Optional.of(id);
            }
        }
        return Optional.empty();
    }

    /**
     * @param timeout how long to wait
     * @return the id of the running node that leads
     * @throws AssertionError if none does in time
     */
    public String awaitLeader(Duration timeout) {
        String[] found = new String[1];
        await(timeout, () -> {
            Optional<String> l = leader();
            l.ifPresent(id -> found[0] = id);
            return l.isPresent();
        }, "a leader among the running nodes");
        return found[0];
    }

    /**
     * @param timeout how long to wait for a leader
     * @return a running node that does not lead
     */
    public String follower(Duration timeout) {
        String leader = awaitLeader(timeout);
        return peers.keySet().stream().filter(id -> !id.equals(leader) && isRunning(id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no running follower"));
    }

    /**
     * Waits until the given running nodes (all running ones when none are named) have applied the same
     * command, then checks their states are identical (by digest). States that differ at the same index are
     * a divergence and fail at once; a leader that keeps writing (expiries) only makes it wait.
     *
     * @param timeout how long to wait for one common index
     * @param ids     nodes, or none for every running node
     * @throws AssertionError on a divergence, or if they do not meet in time
     */
    public void awaitIdenticalState(Duration timeout, String... ids) {
        List<String> names = ids.length == 0 ? peers.keySet().stream().filter(this::isRunning).toList()
                : List.of(ids);
        awaitIdenticalState(timeout, names, id -> statusReply(id, true));
    }

    /**
     * The check behind {@link #awaitIdenticalState(Duration, String...)}, for coordinators this class did
     * not start (such as ones in network namespaces).
     *
     * @param status each node's ClusterStatus with the state digest, or empty while it does not answer
     */
    static void awaitIdenticalState(Duration timeout, List<String> names,
                                    Function<String, Optional<ClusterStatusReply>> status) {
        await(timeout, () -> {
            List<ClusterStatusReply> replies = new ArrayList<>();
            for (String id : names) {
                Optional<ClusterStatusReply> r = status.apply(id);
                if (r.isEmpty()) {
                    return false;
                }
                replies.add(r.get());
            }
            if (replies.stream().map(ClusterStatusReply::getStateIndex).distinct().count() > 1) {
                return false;
            }
            for (int i = 1; i < replies.size(); i++) {
                if (!replies.get(i).getStateDigest().equals(replies.get(0).getStateDigest())) {
                    throw new AssertionError("the state of " + names.get(i) + " differs from " + names.get(0)
                            + "'s at command index " + replies.get(0).getStateIndex());
                }
            }
            return true;
        }, names + " at one common applied index");
    }

    /**
     * Polls a condition every 20 ms.
     *
     * @param timeout   how long to wait
     * @param condition what to wait for
     * @param what      what it is, for the failure
     * @throws AssertionError if it does not hold in time
     */
    public static void await(Duration timeout, BooleanSupplier condition, String what) {
        long until = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - until > 0) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    private Optional<ClusterStatusReply> statusReply(String id, boolean digest) {
        if (!isRunning(id)) {
            return Optional.empty();
        }
        ManagedChannel channel = statusChannels.computeIfAbsent(id, k ->
                dev.mailbox.coordination.internal.Tls.channel(endpoint(k), settings.clientSecurity).build());
        try {
            return Optional.of(ControlPlaneGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(STATUS_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .clusterStatus(ClusterStatusRequest.newBuilder().setIncludeStateDigest(digest).build()));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    // --- child processes -------------------------------------------------------------------------

    private Process launch(String id, CoordinatorNode.ClusterState state) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(settings.javaOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(CoordinatorProcess.class.getName());
        cmd.addAll(CoordinatorProcess.arguments(id, name, dataDir(id), controlPlanes.get(id).getPort(),
                settings.electionTimeout, settings.snapshotEvery, state, peers));
        Path log = root.resolve(id + ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(log, StandardCharsets.UTF_8).contains(CoordinatorProcess.READY + " " + id)) {
                if (!p.isAlive() || System.nanoTime() - until > 0) {
                    p.destroyForcibly();
                    throw new IllegalStateException("coordinator " + id + " did not start; its log ends:\n"
                            + tail(log));
                }
                Thread.sleep(20);
            }
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start coordinator " + id, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting coordinator " + id, e);
        }
    }

    private Process process(String id) {
        if (!settings.processes) {
            throw new IllegalStateException("nodes of this cluster run in this JVM; build it with processes(true)");
        }
        Process p = processes.get(id);
        if (p == null) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        return p;
    }

    private static void signal(Process p, String signal) {
        if (!p.isAlive()) {
            return;
        }
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send SIG" + signal + " to " + p.pid(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitExit(Process p, String id) {
        try {
            if (!p.waitFor(15, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted stopping coordinator " + id, e);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Closes the clients it made, stops every node, and deletes the data dirs. */
    @Override
    public void close() {
        synchronized (clients) {
            for (AutoCloseable c : clients) {
                try {
                    c.close();
                } catch (Exception e) {
                    // a client of a cluster going away
                }
            }
            clients.clear();
        }
        statusChannels.values().forEach(ManagedChannel::shutdownNow);
        statusChannels.clear();
        for (String id : peers.keySet()) {
            if (processes.containsKey(id)) {
                signal(processes.get(id), "CONT");
                kill(id);
            } else {
                stop(id);
            }
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // temporary files; the OS cleans up
        }
    }

    @Override
    public String toString() {
        return "TestingCluster[" + name + ", " + peers.size() + " nodes" + (settings.processes ? " in child processes"
                : "") + "]";
    }

    /** Builds a {@link TestingCluster}. */
    public static final class Builder {
        private dev.mailbox.coordination.ClientSecurity clientSecurity = dev.mailbox.coordination.ClientSecurity.none();
        private int size = 3;
        private long snapshotEvery = java.util.Objects.requireNonNull(CoordinatorKeys.SNAPSHOT_EVERY.defaultValue());
        // the production default: tests see the failovers an operator would
        private Duration electionTimeout = java.util.Objects.requireNonNull(
                CoordinatorKeys.ELECTION_TIMEOUT_MIN.defaultValue());
        private boolean processes;
        private final List<String> javaOptions = new ArrayList<>(List.of("-Xmx256m"));
        private UnaryOperator<CoordinatorNode.Builder> configure = b -> b;

        private Builder() {
        }

        /**
         * @param size how many coordinators, 1 to 9 (default 3)
         * @return this builder
         */
        public Builder size(int size) {
            if (size < 1 || size > 9) {
                throw new IllegalArgumentException("size must be 1 to 9, was " + size);
            }
            this.size = size;
            return this;
        }

        /**
         * @param entries take a snapshot after this many log entries (default {@link CoordinatorKeys#SNAPSHOT_EVERY})
         * @return this builder
         */
        public Builder snapshotEvery(long entries) {
            this.snapshotEvery = CoordinatorKeys.SNAPSHOT_EVERY.require(entries);
            return this;
        }

        /**
         * @param timeout the shortest election timeout (default {@link CoordinatorKeys#ELECTION_TIMEOUT_MIN}); the
         *                longest is twice it
         * @return this builder
         */
        public Builder electionTimeout(Duration timeout) {
            this.electionTimeout = CoordinatorKeys.ELECTION_TIMEOUT_MIN.require(Objects.requireNonNull(timeout,
                    "timeout"));
            return this;
        }

        /**
         * @param children whether each node runs in a child JVM (default false: in this JVM)
         * @return this builder
         */
        public Builder processes(boolean children) {
            this.processes = children;
            return this;
        }

        /**
         * @param options JVM options for child processes (default {@code -Xmx256m})
         * @return this builder
         */
        public Builder javaOptions(String... options) {
            this.javaOptions.clear();
            this.javaOptions.addAll(List.of(options));
            return this;
        }

        /**
         * @param configure more settings for every in-JVM node's builder (ignored for child processes)
         * @return this builder
         */
        public Builder configure(UnaryOperator<CoordinatorNode.Builder> configure) {
            this.configure = Objects.requireNonNull(configure, "configure");
            return this;
        }

        /**
         * @param security how {@link TestingCluster#client()} and the cluster's own status calls reach the
         *                 nodes, for clusters configured with TLS or access rules (default: plaintext, no token)
         * @return this builder
         */
        public Builder clientSecurity(dev.mailbox.coordination.ClientSecurity security) {
            this.clientSecurity = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * @return the cluster, every node started (on other ports, up to three tries, when a port picked free was
         *         taken before its node could bind it)
         */
        public TestingCluster start() {
            for (int attempt = 1; ; attempt++) {
                try {
                    return new TestingCluster(this).startAll();
                } catch (RuntimeException e) {
                    // ports are picked free, then bound by the node a moment later: in between, any outgoing
                    // connection on the machine may take one from the same ephemeral range
                    if (attempt >= 3 || !portTaken(e)) {
                        throw e;
                    }
                }
            }
        }

        private static boolean portTaken(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                String m = String.valueOf(t.getMessage());
                if (m.contains("Address already in use") || m.contains("Failed to bind")) {
                    return true;
                }
            }
            return false;
        }
    }
}
