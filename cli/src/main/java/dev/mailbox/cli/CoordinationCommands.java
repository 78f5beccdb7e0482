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
import dev.mailbox.coordination.server.CoordinatorKeys;
import dev.mailbox.coordination.server.CoordinatorNode;
import dev.mailbox.coordination.server.SecurityKeys;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
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

    static String ms(long epochMillis) {
        return epochMillis == 0 ? "-" : Instant.ofEpochMilli(epochMillis).toString();
    }

    @Command(name = "coordinator", description = "Run a coordinator: a member of the replicated control plane.",
            mixinStandardHelpOptions = true, subcommands = {Start.class},
            footer = {"  mailboxctl coordinator start --id n1 --raft 127.0.0.1:7000",
                    "  mailboxctl coordinator start --help"})
    static final class Coordinator {
    }

    @Command(name = "start", mixinStandardHelpOptions = true, modelTransformer = Start.Options.class,
            description = {"Start a coordinator and serve until stopped (Ctrl-C or SIGTERM).",
                    "Standalone: --id n1 --raft 127.0.0.1:7000. Cluster member: also --peer n2=host:port for each "
                            + "other member. Every option below is also a key of --config FILE, a properties file: "
                            + "the option's name without the dashes (peers, comma-separated, for the repeatable "
                            + "--peer). A flag wins over the same key in the file; a key the file should not hold (a "
                            + "misspelling) is an error."},
            footer = {"  mailboxctl coordinator start --id n1 --raft 127.0.0.1:7000 --data-dir ./n1",
                    "  mailboxctl coordinator start --id n2 --raft h2:7000 --peer n1=h1:7000 \\",
                    "      --peer n3=h3:7000 --control-plane h2:7100 --metrics h2:9100",
                    "  mailboxctl coordinator start --config n2.properties",
                    "  mailboxctl coordinator start --id n4 --initial-cluster-state existing"})
    static final class Start implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", description = "a properties file with the settings below, "
                + "one key per option (default: none)")
        Path config;

        /** Every setting of a coordinator process: the builder's, its security, and the process's own. */
        static final List<Setting<?>> SETTINGS = settings();

        /** Every key a coordinator's --config file may hold: each one this command reads. */
        static final java.util.Set<String> CONFIG_KEYS = SettingOptions.keys(SETTINGS);

        private static List<Setting<?>> settings() {
            List<Setting<?>> all = new ArrayList<>(CoordinatorKeys.ALL);
            all.addAll(SecurityKeys.COORDINATOR);
            all.add(CliKeys.METRICS);
            all.add(CliKeys.LOG_FORMAT);
            return List.copyOf(all);
        }

        /** Adds an option for each of {@link #SETTINGS}. */
        static final class Options implements CommandLine.IModelTransformer {
            @Override
            public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
                return SettingOptions.add(spec, SETTINGS);
            }
        }

        @Override
        public Integer call() throws Exception {
            Settings s = SettingOptions.read(spec, SETTINGS, config);
            ServerSecurity security = new ServerSecurity(s);
            String nodeId = s.get(CoordinatorKeys.ID);
            String name = s.get(CoordinatorKeys.CLUSTER);
            Path dir = s.get(CoordinatorKeys.DATA_DIR);
            InetSocketAddress self = s.get(CoordinatorKeys.RAFT);
            InetSocketAddress metricsAt = s.get(CliKeys.METRICS);
            MetricsEndpoint.checkSecurity(metricsAt, security.tls() != null, security.require());
            Map<String, InetSocketAddress> members = new LinkedHashMap<>();
            members.put(nodeId, self);
            for (Map.Entry<String, InetSocketAddress> peer : s.get(CoordinatorKeys.PEERS)) {
                if (!peer.getKey().equals(nodeId)) {
                    members.put(peer.getKey(), peer.getValue());
                }
            }
            CoordinatorNode.Builder b = CoordinatorNode.builder(nodeId).peers(members).dataDir(dir).settings(s);
            InetSocketAddress listen = s.get(CoordinatorKeys.RAFT_LISTEN);
            dev.mailbox.coordination.TlsFiles tls = security.tls();
            if (tls != null) {
                b.tls(tls);
            }
            dev.mailbox.coordination.server.Access access = security.access();
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
                    : MetricsEndpoint.start(metricsAt, security.httpsContext(), security.require(), console);
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
                    name, members.size(), listen == null ? Setting.hostPort(self) : Setting.hostPort(self)
                            + " (bound at " + Setting.hostPort(listen) + ")",
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

    private static void exitAfterFatal(Throwable cause) {
        System.err.println("coordinator stopping after a fatal error: " + cause);
        Runtime.getRuntime().halt(ExitStatus.FATAL); // not exit(): shutdown hooks may need the heap that ran out
    }

    @Command(name = "cluster", description = "The coordinator cluster.", mixinStandardHelpOptions = true,
            subcommands = {Status.class, AddMember.class, RemoveMember.class, Export.class, Import.class},
            footer = {"  mailboxctl cluster status -c h1:7100,h2:7100,h3:7100",
                    "  mailboxctl cluster export backup.snapshot"})
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
                    "Argument: ID=HOST:PORT, its Raft address."},
            footer = {"  mailboxctl cluster add-member n4=10.0.0.4:7000 -c 10.0.0.1:7100"})
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
                            + "--initial-cluster-state existing, and add-member it back."},
            footer = {"  mailboxctl cluster remove-member n3 -c 10.0.0.1:7100"})
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
                            + "it comes in checksummed chunks of at most "
                            + (CoordinationLimits.MAX_IMPORT_CHUNK_BYTES >> 10) + " KiB whatever its size, is written "
                            + "beside FILE, synced, then renamed (mode 0600); import it into a new cluster."},
            footer = {"  mailboxctl cluster export /var/backups/mailbox.snapshot -c 10.0.0.1:7100"})
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
                    "The file is checked first (its SHA-256), then sent in chunks of at most "
                            + (CoordinationLimits.MAX_IMPORT_CHUNK_BYTES >> 10) + " KiB, whatever its size; "
                            + "an import that breaks off resumes where the cluster got to when run again with the same "
                            + "FILE. Epochs carry over; active leases get a full TTL from the import."},
            footer = {"  mailboxctl cluster import backup.snapshot -c 10.0.0.1:7100"})
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

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Each coordinator's view: role, leader, term, applied index.",
            footer = {"  mailboxctl cluster status -c 127.0.0.1:7100",
                    "  mailboxctl cluster status --wait-ms 30000 -c h1:7100,h2:7100,h3:7100",
                    "  mailboxctl cluster status -o json"})
    static final class Status implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--wait-ms", defaultValue = "0", description = "wait up to this long until every endpoint "
                + "answers and one of them leads, and exit 1 if they do not by then (for scripts that start a "
                + "cluster; default: 0, do not wait)")
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
            subcommands = {LeasesList.class, LeasesGet.class, LeasesRevoke.class, LeasesReclaim.class},
            footer = {"  mailboxctl leases list", "  mailboxctl leases get orders@node-a"})
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

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every mailbox's latest lease.",
            footer = {"  mailboxctl leases list", "  mailboxctl leases list --namespace orders -o json",
                    "  mailboxctl leases list --stale -c 10.0.0.2:7100"})
    static final class LeasesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--namespace", defaultValue = "", description = "only this namespace (default: every "
                + "namespace but the nodes' own, _nodes)")
        String namespace;
        @Option(names = "--stale", description = "read from whichever coordinator answers, not the leader "
                + "(default: off, a leader read)")
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

    @Command(name = "get", mixinStandardHelpOptions = true, description = "One mailbox's latest lease.",
            footer = {"  mailboxctl leases get orders@node-a", "  mailboxctl leases get orders@node-a -o json"})
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
            description = "Revoke a mailbox's lease: the holder loses it and the mailbox stays unavailable until reclaimed.",
            footer = {"  mailboxctl leases revoke orders@node-a", "  mailboxctl leases revoke orders@node-a -o json"})
    static final class LeasesRevoke extends LeaseChange {
        @Override
        Lease change(CoordinationClient client, String mailbox) {
            return client.leases().revoke(mailbox);
        }
    }

    @Command(name = "reclaim", mixinStandardHelpOptions = true,
            description = "Finish a revoke: the mailbox can be acquired again.",
            footer = {"  mailboxctl leases reclaim orders@node-a"})
    static final class LeasesReclaim extends LeaseChange {
        @Override
        Lease change(CoordinationClient client, String mailbox) {
            return client.leases().reclaim(mailbox);
        }
    }

    @Command(name = "routes", description = "The routing table.", mixinStandardHelpOptions = true,
            subcommands = {RoutesList.class, RoutesWatch.class},
            footer = {"  mailboxctl routes list", "  mailboxctl routes watch --for-ms 60000"})
    static final class Routes {
    }

    static final List<String> ROUTE_HEADERS = List.of("MAILBOX", "NODE", "ADDRESS", "RUNNER", "PARTITION", "LEASE", "EPOCH");

    static List<Object> routeRow(Route r) {
        return List.of(r.mailboxId(), r.nodeId(), r.address(), r.runnerId(), r.partition(), r.leaseId(), r.epoch());
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The routing table and its revision.",
            footer = {"  mailboxctl routes list", "  mailboxctl routes list --mailbox orders@node-a --wait-ms 10000",
                    "  mailboxctl routes list -o json"})
    static final class RoutesList implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--mailbox", description = "only this mailbox's route (default: every route)")
        String mailbox;
        @Option(names = "--wait-ms", defaultValue = "0", description = "with --mailbox: wait up to this long for it "
                + "to have a route, and exit 1 if it has none by then (default: 0, do not wait)")
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
            description = "Print the routing table, then every change, until stopped (or --for-ms elapses).",
            footer = {"  mailboxctl routes watch", "  mailboxctl routes watch --for-ms 60000 -o json"})
    static final class RoutesWatch implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Option(names = "--for-ms", defaultValue = "0", description = "stop after this long (default: 0, never)")
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
            footer = {"  mailboxctl namespaces create orders --ttl-ms 15000", "  mailboxctl namespaces list"},
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

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a namespace with its lease policy.",
            defaultValueProvider = LeasePolicyDefaults.class,
            footer = {"  mailboxctl namespaces create orders",
                    "  mailboxctl namespaces create billing --ttl-ms 4000 --heartbeat-ms 1000",
                    "  mailboxctl namespaces create audit --label team=security"})
    static final class NamespacesCreate implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        CoordinatorOptions coordinator;
        @Mixin
        Output output;
        @Parameters(paramLabel = "NAME")
        String name;
        @Option(names = "--ttl-ms", description = "lease TTL (default: ${DEFAULT-VALUE})")
        long ttl;
        @Option(names = "--heartbeat-ms", description = "heartbeat interval (default: ${DEFAULT-VALUE})")
        long heartbeat;
        @Option(names = "--grace-ms", description = "grace after the TTL before expiry (default: ${DEFAULT-VALUE})")
        long grace;
        @Option(names = "--label", description = "key=value (repeatable; default: none)")
        Map<String, String> labels = new LinkedHashMap<>();

        @Override
        public Integer call() {
            LeasePolicy policy = new LeasePolicy(Duration.ofMillis(ttl), Duration.ofMillis(heartbeat),
                    Duration.ofMillis(grace));
            try (CoordinationClient client = coordinator.client()) {
                NamespaceInfo n = client.namespaces().create(name, policy, labels);
                output.print(spec.commandLine().getOut(), n, NAMESPACE_HEADERS, List.of(namespaceRow(n)));
                return 0;
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every namespace with its owner node.",
            footer = {"  mailboxctl namespaces list", "  mailboxctl namespaces list -o json"})
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

    @Command(name = "nodes", description = "Mailbox nodes.", mixinStandardHelpOptions = true, subcommands = {NodesList.class},
            footer = {"  mailboxctl nodes list"})
    static final class Nodes {
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Registered mailbox nodes, whether each is up, and its partition ranges.",
            footer = {"  mailboxctl nodes list", "  mailboxctl nodes list -o json -c 10.0.0.1:7100"})
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

    /** The defaults of namespaces create's policy options: {@link LeasePolicy#DEFAULT}'s, so help shows them. */
    static final class LeasePolicyDefaults implements CommandLine.IDefaultValueProvider {
        @Override
        public String defaultValue(CommandLine.Model.ArgSpec argSpec) {
            if (!(argSpec instanceof CommandLine.Model.OptionSpec o)) {
                return null;
            }
            return switch (o.longestName()) {
                case "--ttl-ms" -> Long.toString(LeasePolicy.DEFAULT.ttl().toMillis());
                case "--heartbeat-ms" -> Long.toString(LeasePolicy.DEFAULT.heartbeatInterval().toMillis());
                case "--grace-ms" -> Long.toString(LeasePolicy.DEFAULT.grace().toMillis());
                default -> null;
            };
        }
    }
}
