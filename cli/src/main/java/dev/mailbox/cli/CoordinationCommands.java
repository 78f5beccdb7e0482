package dev.mailbox.cli;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.coordination.server.CoordinatorNode;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import dev.mailbox.console.Console;
import dev.mailbox.console.ConsoleAccess;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** The coordinator's commands: start a node, and look at or change what the cluster holds. */
final class CoordinationCommands {

    private CoordinationCommands() {
    }

    static InetSocketAddress address(String hostPort, String what) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(what + " must be host:port, was '" + hostPort + "'");
        }
        try {
            return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be host:port, was '" + hostPort + "'");
        }
    }

    static String ms(long epochMillis) {
        return epochMillis == 0 ? "-" : Instant.ofEpochMilli(epochMillis).toString();
    }

    @Command(name = "coordinator", description = "Run a coordinator node.", mixinStandardHelpOptions = true,
            subcommands = {Start.class})
    static final class Coordinator {
    }

    @Command(name = "start", mixinStandardHelpOptions = true,
            description = {"Start a coordinator node and serve until stopped (Ctrl-C).",
                    "Standalone: --id n1 --raft 127.0.0.1:7000. Cluster member: also --peer n2=host:port for each "
                            + "other member, or all of it in --config FILE (keys: id, cluster, data-dir, raft, "
                            + "raft-listen, control-plane, metrics, initial-cluster-state, "
                            + "peers=n1=host:port,n2=host:port, "
                            + "tls-cert, tls-key, tls-ca, tls-client-auth, tokens, access, require-security, "
                            + "election-timeout-min-ms, election-timeout-max-ms, raft-request-timeout-ms, pre-vote, "
                            + "leader-lease-ratio, snapshot-every, snapshot-retention, log-segment-bytes, warm-up, "
                            + "read-consistency=OPERATION=LEVEL,..., log-format).",
                    "A flag wins over the same key in the file; a key the file should not hold (a misspelling) is an "
                            + "error."})
    static final class Start implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", description = "a properties file with the settings below")
        Path config;

        @Option(names = "--id", description = "this node's id (default: n1)")
        String id;

        @Option(names = "--cluster", description = "the cluster's name (default: mailbox)")
        String cluster;

        @Option(names = "--data-dir", description = "where the Raft log and snapshots live (default: ./coordinator-<id>)")
        Path dataDir;

        @Option(names = "--raft", description = "this node's Raft address (default: 127.0.0.1:7000)")
        String raft;

        @Option(names = "--raft-listen", description = "where this node's Raft server binds, when the others reach "
                + "it at another address (--raft, which they dial): a port published by a container or NAT, or a "
                + "proxy in front of it (default: the --raft address)")
        String raftListen;

        @Option(names = "--control-plane", description = "the gRPC control plane address (default: 127.0.0.1:7100)")
        String controlPlane;

        @Option(names = "--metrics", description = "serve the operations port at ADDRESS: Prometheus metrics at "
                + "/metrics, probes at /health/live and /health/ready, the web console at /ui/ (https:// with the "
                + "server's --tls-cert)")
        String metrics;

        @Option(names = "--peer", description = "another member, id=host:port (repeatable)")
        List<String> peers = new ArrayList<>();

        @Mixin
        ServerSecurity security;

        @Option(names = "--initial-cluster-state", description = "new: bootstrap a new cluster (its very first "
                + "start only; refused if the cluster has heard from this node before: its data was lost); "
                + "existing: the cluster exists (every later start, and a member being added); replace: this "
                + "node's data was lost and it takes its place again (it has the cluster remove it, starts empty and "
                + "has itself added back; see docs/operations-hardening.md). Only matters when the data dir is "
                + "empty (default: new)")
        String clusterState;

        @Option(names = "--election-timeout-min-ms", description = "the shortest election timeout: how long a "
                + "follower waits without a heartbeat before it asks for votes; heartbeats go every half of it "
                + "(default: 300)")
        Long electionMin;

        @Option(names = "--election-timeout-max-ms", description = "the longest election timeout; each wait is drawn "
                + "between the two (default: twice the shortest)")
        Long electionMax;

        @Option(names = "--raft-request-timeout-ms", description = "how long a Raft request between coordinators may "
                + "take before it is sent again, at least the longest election timeout (default: 3000)")
        Long raftRequestTimeout;

        @Option(names = "--pre-vote", arity = "1", paramLabel = "true|false", description = "ask for a pre-vote "
                + "before a real election, so that a node that was cut off cannot depose a healthy leader "
                + "(default: true)")
        String preVote;

        @Option(names = "--warm-up", arity = "1", paramLabel = "true|false", description = "before joining, run "
                + "an election and a term as leader once in a throwaway in-process cluster on free loopback ports, so "
                + "that this node's first real term as leader does not spend 100-250 ms loading that code; adds "
                + "2-4 s to the start (default: true)")
        String warmUp;

        @Option(names = "--leader-lease-ratio", description = "the leader serves leader-lease reads and renewals "
                + "from its own state for this fraction of the shortest election timeout after a majority last "
                + "acknowledged it, (0, 1] (default: 0.9)")
        String leaderLeaseRatio;

        @Option(names = "--snapshot-every", description = "take a snapshot after this many log entries (default: 10000)")
        Long snapshotEvery;

        @Option(names = "--snapshot-retention", description = "how many snapshots to keep (default: 2)")
        Integer snapshotRetention;

        @Option(names = "--log-segment-bytes", description = "how large a file of the Raft log grows before the "
                + "next one starts; the log before a snapshot is deleted a whole file at a time, so smaller files "
                + "free disk sooner, and the open file's entries are kept in memory (at least 4096; default: 8388608, 8 MiB)")
        Long logSegmentBytes;

        @Option(names = "--read-consistency", paramLabel = "OPERATION=LEVEL", description = "the consistency of a read "
                + "whose request does not choose one (repeatable). OPERATION: get-lease, list-leases, list-nodes, "
                + "partition-map, get-namespace, list-namespaces, list-routes, export-state, get-queue, list-queues; "
                + "LEVEL: stale, leader-lease, linearizable (default: leader-lease for every read)")
        List<String> readConsistency = new ArrayList<>();

        @Option(names = "--log-format", paramLabel = "text|json", description = JsonLogProvider.OPTION_HELP)
        String logFormat;

        /** Every key a coordinator's --config file may hold: each one this command reads. */
        static final java.util.Set<String> CONFIG_KEYS = java.util.Set.of("id", "cluster", "data-dir", "raft",
                "raft-listen", "control-plane", "metrics", "initial-cluster-state", "peers", "tls-cert", "tls-key",
                "tls-ca", "tls-client-auth", "tokens", "access", "require-security", "election-timeout-min-ms",
                "election-timeout-max-ms", "raft-request-timeout-ms", "pre-vote", "leader-lease-ratio",
                "snapshot-every", "snapshot-retention", "log-segment-bytes", "warm-up", "read-consistency",
                "log-format");

        @Override
        public Integer call() throws Exception {
            Properties p;
            try {
                p = ConfigFile.load(config, CONFIG_KEYS);
                JsonLogProvider.requireFormat(logFormat, p);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            String nodeId = id != null ? id : p.getProperty("id", "n1");
            String name = cluster != null ? cluster : p.getProperty("cluster", "mailbox");
            Path dir = dataDir != null ? dataDir : Path.of(p.getProperty("data-dir", "coordinator-" + nodeId));
            String self = raft != null ? raft : p.getProperty("raft", "127.0.0.1:7000");
            String plane = controlPlane != null ? controlPlane : p.getProperty("control-plane", "127.0.0.1:7100");
            String metricsAt = metrics != null ? metrics : p.getProperty("metrics");
            MetricsEndpoint.checkSecurity(metricsAt == null ? null : address(metricsAt, "--metrics"),
                    security.tls(p) != null, security.require(p));
            String stateName = clusterState != null ? clusterState : p.getProperty("initial-cluster-state", "new");
            CoordinatorNode.ClusterState state;
            try {
                state = CoordinatorNode.ClusterState.valueOf(stateName.trim().toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--initial-cluster-state must be new, existing or replace, was '" + stateName + "'");
            }
            Map<String, InetSocketAddress> members = new LinkedHashMap<>();
            members.put(nodeId, address(self, "--raft"));
            List<String> others = new ArrayList<>(peers);
            if (p.getProperty("peers") != null) {
                others.addAll(List.of(p.getProperty("peers").split(",")));
            }
            for (String peer : others) {
                int eq = peer.indexOf('=');
                if (eq <= 0) {
                    throw new CommandLine.ParameterException(spec.commandLine(),
                            "--peer must be id=host:port, was '" + peer + "'");
                }
                String peerId = peer.substring(0, eq).trim();
                if (!peerId.equals(nodeId)) {
                    members.put(peerId, address(peer.substring(eq + 1).trim(), "--peer " + peerId));
                }
            }
            CoordinatorNode.Builder b = CoordinatorNode.builder(nodeId).cluster(name).peers(members).dataDir(dir)
                    .controlPlane(address(plane, "--control-plane")).clusterState(state)
                    .requireSecurity(security.require(p));
            String listen = raftListen != null ? raftListen : p.getProperty("raft-listen");
            if (listen != null) {
                b.raftListen(address(listen, "--raft-listen"));
            }
            try {
                raftSettings(this, b, p);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            dev.mailbox.coordination.TlsFiles tls = security.tls(p);
            if (tls != null) {
                b.tls(tls);
            }
            dev.mailbox.coordination.server.Access access = security.access(p);
            if (access != null) {
                b.access(access);
            }
            boolean fresh = !Files.exists(dir);
            // only once every setting has been read: a refused start creates nothing; 0700, the state is in there
            dev.mailbox.coordination.server.internal.PrivateFiles.directory(dir);
            // the console shows this coordinator once it has started, to whom its access rules allow
            Console console = Console.builder()
                    .access(access != null ? access.forConsole() : ConsoleAccess.open()).build();
            MetricsEndpoint endpoint = metricsAt == null ? null
                    : MetricsEndpoint.start(address(metricsAt, "--metrics"), security.httpsContext(p),
                            security.require(p), console);
            if (endpoint != null) {
                b.meterRegistry(endpoint.registry());
            }
            // a node that hit an Error (out of memory) or whose Raft server stopped by itself cannot be trusted
            // to go on: exit, so that the supervisor restarts it from its data dir
            b.onFatal(CoordinationCommands::exitAfterFatal);
            Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
                if (e instanceof Error) {
                    exitAfterFatal(e);
                }
                System.err.println("uncaught exception in " + thread.getName() + ": " + e);
            });
            CoordinatorNode node;
            try {
                node = b.start();
            } catch (RuntimeException e) {
                if (fresh) {
                    // refused before it stored anything (its security checks, say): leave no empty data dir behind
                    try {
                        Files.deleteIfExists(dir);
                    } catch (java.io.IOException notEmpty) {
                        // it wrote something after all: keep it
                    }
                }
                if (endpoint != null) {
                    endpoint.close();
                }
                throw e;
            }
            if (endpoint != null) {
                endpoint.health(ProcessHealth.of(node));
                console.serve(node.consoleSource());
            }
            PrintWriter out = spec.commandLine().getOut();
            out.printf("coordinator %s of cluster '%s' (%d member(s)): raft %s, control plane %s%s, data %s%n", nodeId,
                    name, members.size(), listen == null ? self : self + " (bound at " + listen + ")",
                    node.controlPlaneAddress(), endpoint == null ? ""
                            : ", " + endpoint.describe(), dir.toAbsolutePath());
            out.flush();
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                node.close();
                if (endpoint != null) {
                    endpoint.close();
                }
                stopped.countDown();
            }));
            stopped.await();
            return 0;
        }
    }

    /**
     * Applies the Raft timings, snapshot and read settings from the flags, else from the config file's keys
     * of the same names; what neither gives keeps the builder's default.
     *
     * @throws IllegalArgumentException naming the flag or key and what it takes, for a bad value
     */
    static void raftSettings(Start s, CoordinatorNode.Builder b, Properties p) {
        Long min = longSetting(s.electionMin, p, "election-timeout-min-ms");
        Long max = longSetting(s.electionMax, p, "election-timeout-max-ms");
        if (min != null || max != null) {
            long lo = min != null ? min : 150;
            long hi = max != null ? max : (min != null ? lo * 2 : 300);
            try {
                b.electionTimeout(java.time.Duration.ofMillis(lo), java.time.Duration.ofMillis(hi));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--election-timeout-min-ms/--election-timeout-max-ms: "
                        + e.getMessage(), e);
            }
        }
        Long request = longSetting(s.raftRequestTimeout, p, "raft-request-timeout-ms");
        if (request != null) {
            b.raftRequestTimeout(java.time.Duration.ofMillis(request));
        }
        Boolean preVote = booleanSetting(s.preVote, p, "pre-vote");
        if (preVote != null) {
            b.preVote(preVote);
        }
        Boolean warmUp = booleanSetting(s.warmUp, p, "warm-up");
        b.warmUp(warmUp == null || warmUp); // on unless turned off: a restarted node's first term is faster
        String ratio = s.leaderLeaseRatio != null ? s.leaderLeaseRatio : p.getProperty("leader-lease-ratio");
        if (ratio != null) {
            double r;
            try {
                r = Double.parseDouble(ratio.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--leader-lease-ratio (key leader-lease-ratio) must be a number in "
                        + "(0, 1], was '" + ratio + "'");
            }
            try {
                b.leaderLeaseRatio(r);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--leader-lease-ratio: " + e.getMessage(), e);
            }
        }
        Long every = longSetting(s.snapshotEvery, p, "snapshot-every");
        if (every != null) {
            try {
                b.snapshotEvery(every);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--snapshot-every: " + e.getMessage(), e);
            }
        }
        Long retention = longSetting(s.snapshotRetention == null ? null : s.snapshotRetention.longValue(), p,
                "snapshot-retention");
        if (retention != null) {
            if (retention < 1 || retention > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("--snapshot-retention must be 1 or more, was " + retention);
            }
            b.snapshotRetention(retention.intValue());
        }
        Long segment = longSetting(s.logSegmentBytes, p, "log-segment-bytes");
        if (segment != null) {
            try {
                b.logSegmentSize(segment);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--log-segment-bytes: " + e.getMessage(), e);
            }
        }
        List<String> reads = new ArrayList<>();
        if (p.getProperty("read-consistency") != null) {
            reads.addAll(List.of(p.getProperty("read-consistency").split(",")));
        }
        reads.addAll(s.readConsistency); // flags last: they win
        for (String read : reads) {
            if (read.isBlank()) {
                continue;
            }
            int eq = read.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--read-consistency must be OPERATION=LEVEL, was '" + read + "'");
            }
            dev.mailbox.coordination.server.ReadOperation op;
            try {
                op = dev.mailbox.coordination.server.ReadOperation.parse(read.substring(0, eq));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--read-consistency: " + e.getMessage(), e);
            }
            String level = read.substring(eq + 1).trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_');
            dev.mailbox.coordination.ReadConsistency c;
            try {
                c = dev.mailbox.coordination.ReadConsistency.valueOf(level);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--read-consistency " + op.key() + ": the level must be stale, "
                        + "leader-lease or linearizable, was '" + read.substring(eq + 1).trim() + "'");
            }
            b.readConsistency(op, c);
        }
    }

    private static Boolean booleanSetting(String flag, Properties p, String key) {
        String v = flag != null ? flag : p.getProperty(key);
        if (v == null) {
            return null;
        }
        String t = v.trim().toLowerCase(java.util.Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException("--" + key + " (key " + key + ") must be true or false, was '" + v + "'");
        }
        return Boolean.parseBoolean(t);
    }

    private static Long longSetting(Long flag, Properties p, String key) {
        if (flag != null) {
            return flag;
        }
        String v = p.getProperty(key);
        if (v == null) {
            return null;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("key " + key + " in --config must be a whole number, was '" + v + "'");
        }
    }

    /** The exit status of a coordinator that stopped after a fatal error (EX_SOFTWARE). */
    static final int EXIT_FATAL = 70;

    private static void exitAfterFatal(Throwable cause) {
        System.err.println("coordinator stopping after a fatal error: " + cause);
        Runtime.getRuntime().halt(EXIT_FATAL); // not exit(): shutdown hooks may need the heap that ran out
    }

    @Command(name = "cluster", description = "The coordinator cluster.", mixinStandardHelpOptions = true,
            subcommands = {Status.class, AddMember.class, RemoveMember.class, Export.class, Import.class})
    static final class Cluster {
    }

    abstract static class MemberChange implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;

        abstract Map<String, String> change(CoordinationClient client);

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                Map<String, String> members = change(client);
                List<List<?>> rows = new ArrayList<>();
                members.forEach((id, address) -> rows.add(List.of(id, address)));
                output.print(spec.commandLine().getOut(), members, List.of("MEMBER", "RAFT ADDRESS"), rows);
                return 0;
            }
        }
    }

    @Command(name = "add-member", mixinStandardHelpOptions = true,
            description = {"Add a coordinator to the cluster: start it first, with an empty data dir and "
                    + "--initial-cluster-state existing; the leader copies it the state.",
                    "Argument: ID=HOST:PORT, its Raft address."})
    static final class AddMember extends MemberChange {
        @Parameters(paramLabel = "ID=HOST:PORT")
        String member;

        @Override
        Map<String, String> change(CoordinationClient client) {
            int eq = member.indexOf('=');
            if (eq <= 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "expected ID=HOST:PORT, was '"
                        + member + "'");
            }
            return client.cluster().addMember(member.substring(0, eq), member.substring(eq + 1));
        }
    }

    @Command(name = "remove-member", mixinStandardHelpOptions = true,
            description = {"Remove a coordinator from the cluster (then stop it).",
                    "To replace one whose data was lost: remove it, empty its data dir, start it with "
                            + "--initial-cluster-state existing, and add-member it back."})
    static final class RemoveMember extends MemberChange {
        @Parameters(paramLabel = "ID")
        String id;

        @Override
        Map<String, String> change(CoordinationClient client) {
            return client.cluster().removeMember(id);
        }
    }

    @Command(name = "export", mixinStandardHelpOptions = true,
            description = {"Back up the cluster: write its whole state, as the leader holds it now, to FILE.",
                    "The file is a snapshot in the coordinator's versioned format, with its SHA-256 in its end record; "
                            + "it comes in checksummed chunks of at most 1 MiB whatever its size, is written beside FILE, "
                            + "synced, then renamed (mode 0600); import it into a new cluster."})
    static final class Export implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Parameters(paramLabel = "FILE")
        Path file;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                dev.mailbox.coordination.Cluster.Exported e = client.cluster().exportState(file);
                spec.commandLine().getOut().printf("exported %d bytes to %s (state as of log index %d, sha256 %s)%n",
                        e.bytes(), file, e.appliedIndex(), e.sha256());
                return 0;
            }
        }
    }

    @Command(name = "import", mixinStandardHelpOptions = true,
            description = {"Restore a backup (from cluster export) into a new cluster, which must hold nothing yet.",
                    "The file is checked first (its SHA-256), then sent in chunks of at most 1 MiB, whatever its size; "
                            + "an import that breaks off resumes where the cluster got to when run again with the same "
                            + "FILE. Epochs carry over; active leases get a full TTL from the import."})
    static final class Import implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Parameters(paramLabel = "FILE")
        Path file;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                dev.mailbox.coordination.Cluster.Imported imported = client.cluster().importState(file);
                spec.commandLine().getOut().printf("imported %s: %d namespace(s), %d lease(s), %d node(s), %d queue(s)%n",
                        file, imported.namespaces(), imported.leases(), imported.nodes(), imported.queues());
                return 0;
            }
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Each coordinator's view: role, leader, term, applied index.")
    static final class Status implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--wait-ms", defaultValue = "0", description = "wait up to this long until every endpoint "
                + "answers and one of them leads, and exit 1 if they do not by then (for scripts that start a "
                + "cluster; default: do not wait)")
        long waitMillis;

        @Override
        public Integer call() throws InterruptedException {
            try (CoordinationClient client = coordinator.client()) {
                Map<String, ClusterStatus> each = client.cluster().statusOfEach();
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
                while ((each.size() < coordinator.endpoints().size()
                        || each.values().stream().noneMatch(ClusterStatus::isLeader))
                        && System.nanoTime() - deadline < 0) {
                    Thread.sleep(100); // polling a cluster that is starting: there is nothing to wait on
                    each = client.cluster().statusOfEach();
                }
                List<List<?>> rows = new ArrayList<>();
                each.forEach((endpoint, s) -> rows.add(List.of(s.nodeId(), endpoint, s.role(),
                        s.leaderId() == null ? "-" : s.leaderId(), s.term(), s.appliedIndex(), s.commitIndex(),
                        s.fault() == null ? "-" : s.fault())));
                for (String e : coordinator.endpoints()) {
                    if (!each.containsKey(e)) {
                        rows.add(List.of("?", e, "UNREACHABLE", "-", "-", "-", "-", "-"));
                    }
                }
                output.print(spec.commandLine().getOut(), each,
                        List.of("NODE", "ENDPOINT", "ROLE", "LEADER", "TERM", "APPLIED", "COMMITTED", "FAULT"), rows);
                if (each.isEmpty()) {
                    return 1;
                }
                if (waitMillis > 0 && (each.size() < coordinator.endpoints().size()
                        || each.values().stream().noneMatch(ClusterStatus::isLeader))) {
                    // the wait ran out before every endpoint answered with a leader among them: a script that
                    // waited for a cluster must not go on as if it had one
                    spec.commandLine().getErr().println("mailboxctl: within " + waitMillis + " ms, "
                            + (each.values().stream().noneMatch(ClusterStatus::isLeader) ? "no coordinator leads"
                            : "not every endpoint answered"));
                    return 1;
                }
                return 0;
            }
        }
    }

    @Command(name = "leases", description = "Mailbox leases.", mixinStandardHelpOptions = true,
            subcommands = {LeasesList.class, LeasesGet.class, LeasesRevoke.class, LeasesReclaim.class})
    static final class Leases {
    }

    static List<List<?>> leaseRows(List<Lease> leases) {
        List<List<?>> rows = new ArrayList<>();
        for (Lease l : leases) {
            rows.add(List.of(l.mailboxId(), l.leaseId(), l.epoch(), l.state(), l.runnerId(), l.nodeId(), l.address(),
                    l.ttlMillis() + "ms", ms(l.grantedAtMillis())));
        }
        return rows;
    }

    static final List<String> LEASE_HEADERS = List.of("MAILBOX", "LEASE", "EPOCH", "STATE", "RUNNER", "NODE",
            "ADDRESS", "TTL", "GRANTED");

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every mailbox's latest lease.")
    static final class LeasesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--namespace", defaultValue = "", description = "only this namespace")
        String namespace;
        @Option(names = "--stale", description = "read from whichever coordinator answers, not the leader")
        boolean stale;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                List<Lease> leases = client.leases().list(namespace, stale ? ReadConsistency.STALE : ReadConsistency.LEADER_LEASE)
                        .stream().filter(l -> !l.namespace().equals(CoordinationLimits.NODES_NAMESPACE) || namespace.equals(CoordinationLimits.NODES_NAMESPACE))
                        .toList();
                output.print(spec.commandLine().getOut(), leases, LEASE_HEADERS, leaseRows(leases));
                return 0;
            }
        }
    }

    @Command(name = "get", mixinStandardHelpOptions = true, description = "One mailbox's latest lease.")
    static final class LeasesGet implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Parameters(paramLabel = "MAILBOX")
        String mailbox;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                var lease = client.leases().get(mailbox);
                if (lease.isEmpty()) {
                    spec.commandLine().getErr().println("no lease for mailbox '" + mailbox + "'");
                    return 1;
                }
                output.print(spec.commandLine().getOut(), lease.get(), LEASE_HEADERS, leaseRows(List.of(lease.get())));
                return 0;
            }
        }
    }

    /** A command that changes one mailbox's lease and prints the result. */
    abstract static class LeaseChange implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Parameters(paramLabel = "MAILBOX")
        String mailbox;

        abstract Lease change(CoordinationClient client, String mailbox);

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                Lease l = change(client, mailbox);
                output.print(spec.commandLine().getOut(), l, LEASE_HEADERS, leaseRows(List.of(l)));
                return 0;
            }
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Revoke a mailbox's lease: the holder loses it and the mailbox stays unavailable until reclaimed.")
    static final class LeasesRevoke extends LeaseChange {
        @Override
        Lease change(CoordinationClient client, String mailbox) {
            return client.leases().revoke(mailbox);
        }
    }

    @Command(name = "reclaim", mixinStandardHelpOptions = true,
            description = "Finish a revoke: the mailbox can be acquired again.")
    static final class LeasesReclaim extends LeaseChange {
        @Override
        Lease change(CoordinationClient client, String mailbox) {
            return client.leases().reclaim(mailbox);
        }
    }

    @Command(name = "routes", description = "The routing table.", mixinStandardHelpOptions = true,
            subcommands = {RoutesList.class, RoutesWatch.class})
    static final class Routes {
    }

    static final List<String> ROUTE_HEADERS = List.of("MAILBOX", "NODE", "ADDRESS", "RUNNER", "PARTITION", "LEASE", "EPOCH");

    static List<Object> routeRow(Route r) {
        return List.of(r.mailboxId(), r.nodeId(), r.address(), r.runnerId(), r.partition(), r.leaseId(), r.epoch());
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The routing table and its revision.")
    static final class RoutesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--mailbox", description = "only this mailbox's route")
        String mailbox;
        @Option(names = "--wait-ms", defaultValue = "0", description = "with --mailbox: wait up to this long for it "
                + "to have a route, and exit 1 if it has none by then (default: do not wait)")
        long waitMillis;

        @Override
        public Integer call() throws InterruptedException {
            try (CoordinationClient client = coordinator.client()) {
                RoutingSnapshot routes = client.routes().list();
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
                while (mailbox != null && routes.routes().stream().noneMatch(r -> r.mailboxId().equals(mailbox))
                        && System.nanoTime() - deadline < 0) {
                    Thread.sleep(100); // polling for a runner to take the lease: nothing to wait on
                    routes = client.routes().list();
                }
                if (mailbox != null) {
                    routes = new RoutingSnapshot(routes.revision(), routes.routes().stream()
                            .filter(r -> r.mailboxId().equals(mailbox)).toList());
                }
                List<List<?>> rows = new ArrayList<>();
                routes.routes().forEach(r -> rows.add(routeRow(r)));
                PrintWriter out = spec.commandLine().getOut();
                if (output.format == Output.Format.table) {
                    out.println("revision " + routes.revision());
                }
                output.print(out, routes, ROUTE_HEADERS, rows);
                if (mailbox != null && waitMillis > 0 && rows.isEmpty()) {
                    // what a script waited for never came: say so, and do not let it go on as if it had
                    spec.commandLine().getErr().println("mailboxctl: no route for mailbox '" + mailbox + "' within "
                            + waitMillis + " ms");
                    return 1;
                }
                return 0;
            }
        }
    }

    @Command(name = "watch", mixinStandardHelpOptions = true,
            description = "Print the routing table, then every change, until stopped (or --for elapses).")
    static final class RoutesWatch implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--for-ms", defaultValue = "0", description = "stop after this long (default: never)")
        long forMillis;

        @Override
        public Integer call() throws InterruptedException {
            if (forMillis < 0) {
                // 0 is "never stop"; a negative time is a mistake, not a longer forever
                throw new CommandLine.ParameterException(spec.commandLine(), "--for-ms must be 0 (never stop) or "
                        + "more, was " + forMillis);
            }
            PrintWriter out = spec.commandLine().getOut();
            try (CoordinationClient client = coordinator.client(); RoutingTable table = client.routes().table()) {
                if (!table.await(RoutingTable::isSynced, Duration.ofMillis(coordinator.timeoutMillis))) {
                    spec.commandLine().getErr().println("no coordinator answered at " + coordinator.coordinator);
                    return 1;
                }
                table.addListener((mailbox, route, revision) -> {
                    synchronized (out) {
                        if (output.format == Output.Format.json) {
                            Map<String, Object> event = new LinkedHashMap<>();
                            event.put("revision", revision);
                            event.put("mailboxId", mailbox);
                            event.put("route", route);
                            Output.json(out, event);
                        } else {
                            out.println("rev " + revision + "  " + mailbox + "  " + (route == null ? "removed"
                                    : "-> " + route.nodeId() + " " + route.address() + " runner " + route.runnerId()
                                            + " lease " + route.leaseId() + "/" + route.epoch()));
                            out.flush();
                        }
                    }
                });
                synchronized (out) {
                    List<List<?>> rows = new ArrayList<>();
                    table.routes().values().forEach(r -> rows.add(routeRow(r)));
                    if (output.format == Output.Format.table) {
                        out.println("revision " + table.revision());
                    }
                    output.print(out, table.routes().values(), ROUTE_HEADERS, rows);
                }
                if (forMillis > 0) {
                    Thread.sleep(forMillis);
                } else {
                    new CountDownLatch(1).await();
                }
                return 0;
            }
        }
    }

    @Command(name = "namespaces", description = "Namespaces.", mixinStandardHelpOptions = true,
            subcommands = {NamespacesCreate.class, NamespacesList.class})
    static final class Namespaces {
    }

    static final List<String> NAMESPACE_HEADERS = List.of("NAMESPACE", "PARTITION", "OWNER", "TTL", "HEARTBEAT", "GRACE",
            "CREATED");

    static List<Object> namespaceRow(NamespaceInfo n) {
        return java.util.Arrays.asList(n.name(), n.partition(), n.ownerNodeId(), n.policy().ttl().toMillis() + "ms",
                n.policy().heartbeatInterval().toMillis() + "ms", n.policy().grace().toMillis() + "ms",
                ms(n.createdAtMillis()));
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a namespace with its lease policy.")
    static final class NamespacesCreate implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Parameters(paramLabel = "NAME")
        String name;
        @Option(names = "--ttl-ms", description = "lease TTL (default: 10000)")
        Long ttl;
        @Option(names = "--heartbeat-ms", description = "heartbeat interval (default: 3000)")
        Long heartbeat;
        @Option(names = "--grace-ms", description = "grace after the TTL before expiry (default: 2000)")
        Long grace;
        @Option(names = "--label", description = "key=value (repeatable)")
        Map<String, String> labels = new LinkedHashMap<>();

        @Override
        public Integer call() {
            LeasePolicy policy = null;
            if (ttl != null || heartbeat != null || grace != null) {
                LeasePolicy d = LeasePolicy.DEFAULT;
                policy = new LeasePolicy(Duration.ofMillis(ttl != null ? ttl : d.ttl().toMillis()),
                        Duration.ofMillis(heartbeat != null ? heartbeat : d.heartbeatInterval().toMillis()),
                        Duration.ofMillis(grace != null ? grace : d.grace().toMillis()));
            }
            try (CoordinationClient client = coordinator.client()) {
                NamespaceInfo n = client.namespaces().create(name, policy, labels);
                output.print(spec.commandLine().getOut(), n, NAMESPACE_HEADERS, List.of(namespaceRow(n)));
                return 0;
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every namespace with its owner node.")
    static final class NamespacesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                List<NamespaceInfo> all = client.namespaces().list();
                List<List<?>> rows = new ArrayList<>();
                all.forEach(n -> rows.add(namespaceRow(n)));
                output.print(spec.commandLine().getOut(), all, NAMESPACE_HEADERS, rows);
                return 0;
            }
        }
    }

    @Command(name = "nodes", description = "Mailbox nodes.", mixinStandardHelpOptions = true, subcommands = {NodesList.class})
    static final class Nodes {
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Registered mailbox nodes, whether each is up, and its partition ranges.")
    static final class NodesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;

        @Override
        public Integer call() {
            try (CoordinationClient client = coordinator.client()) {
                List<NodeInfo> nodes = client.nodes().list();
                PartitionMap map = client.nodes().partitionMap();
                List<List<?>> rows = new ArrayList<>();
                for (NodeInfo n : nodes) {
                    List<PartitionMap.Range> ranges = map.rangesOf(n.id());
                    int count = ranges.stream().mapToInt(PartitionMap.Range::size).sum();
                    rows.add(List.of(n.id(), n.address(), n.up() ? "up" : "down", count,
                            ranges.stream().map(r -> r.start() == r.end() ? "" + r.start() : r.start() + "-" + r.end())
                                    .reduce((x, y) -> x + "," + y).orElse("-"),
                            n.region().isEmpty() ? "-" : n.region(), n.version().isEmpty() ? "-" : n.version()));
                }
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("nodes", nodes);
                json.put("partitionRanges", map.ranges());
                output.print(spec.commandLine().getOut(), json,
                        List.of("NODE", "ADDRESS", "STATE", "PARTITIONS", "RANGES", "REGION", "VERSION"), rows);
                return 0;
            }
        }
    }

}
