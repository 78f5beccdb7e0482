package dev.mailbox.cli;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.MailboxNode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import dev.mailbox.console.Console;
import dev.mailbox.console.ConsoleAccess;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code mailboxctl node start}: a mailbox node as a process. */
@Command(name = "node", description = "A mailbox node process.", mixinStandardHelpOptions = true,
        subcommands = {NodeCommand.Start.class})
final class NodeCommand {

    private NodeCommand() {
    }

    @Command(name = "start", mixinStandardHelpOptions = true,
            description = {"Start a mailbox node and serve until stopped (Ctrl-C or SIGTERM: it releases its "
                    + "registration and closes its mailboxes).",
                    "It registers with the coordinators, heartbeats, serves the mailboxes whose route names it "
                            + "(opening them on its backend when a call arrives; idle ones are closed, except on the memory "
                            + "backend, whose mailboxes hold their messages), and forwards "
                            + "calls for the others to their owners.",
                    "All settings may come from --config FILE (keys: id, listen, advertise, coordinator, backend, "
                            + "metrics, region, idle-close-ms, max-waiting-receives, tls-cert, tls-key, tls-ca, tls-client-auth, tokens, "
                            + "access, token-file, require-security, sqs-listen, sqs-access-keys, sqs-tls, log-format).",
                    "With --sqs-listen the node also serves Amazon SQS's HTTP API: any SQS client (AWS CLI, boto3, "
                            + "the AWS SDKs) creates queues there and uses them as this node's mailboxes, each call "
                            + "going through the node's data plane like a RemoteMailbox's, so a queue whose mailbox "
                            + "is owned by another node is forwarded there. The other --sqs-* options need it.",
                    "Secrets (--sqs-access-key, a --backend URI with a password or secret key) may be given as "
                            + "env:NAME or file:PATH, read from that environment variable or file, instead of on "
                            + "the command line, where other users of the host can read them (a warning says so)."})
    static final class Start implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", description = "a properties file with the settings below")
        Path config;
        @Option(names = "--id", description = "this node's id (default: node-1)")
        String id;
        @Option(names = "--listen", description = "where the MailboxService listens (default: 127.0.0.1:9000)")
        String listen;
        @Option(names = "--advertise", description = "the address routes name for this node, if not --listen")
        String advertise;
        @Option(names = {"-c", "--coordinator"}, description = "control-plane address(es) of the coordinators, "
                + "comma-separated (default: $MAILBOXCTL_COORDINATOR or 127.0.0.1:7100)")
        String coordinator;
        @Option(names = "--backend", description = "where mailboxes live: " + NodeBackend.HELP + " (default: memory);"
                + " or env:NAME or file:PATH holding the URI")
        String backend;
        @Option(names = "--metrics", description = "serve the operations port at ADDRESS: Prometheus metrics at "
                + "/metrics, probes at /health/live and /health/ready, the web console at /ui/ (https:// with the "
                + "server's --tls-cert)")
        String metrics;
        @Option(names = "--region", description = "placement hint")
        String region;
        @Option(names = "--idle-close-ms", description = "close a mailbox opened on a shared backend (Redis, "
                + "SQS) after this long without a call (default: 300000); memory mailboxes stay open")
        Long idleCloseMillis;
        @Option(names = "--max-waiting-receives", description = "the most receives that may wait (long-poll) on "
                + "this node at once; one past it is refused at once, RESOURCE_EXHAUSTED (default: 10000)")
        Integer maxWaitingReceives;
        @Option(names = "--sqs-listen", description = "also serve the SQS HTTP API at HOST:PORT (see above)")
        String sqsListen;
        @Option(names = "--sqs-access-key", description = "an access key the SQS endpoint accepts in SigV4 "
                + "signatures, KEY_ID:SECRET[:PRINCIPAL] (principal defaults to the key id), or env:NAME or "
                + "file:PATH holding such keys (one per line); repeat for more. "
                + "With --access each call is checked against the rules as the key's principal (queues are "
                + "namespaces; creating and configuring them is an admin's). "
                + "Without any the endpoint accepts unsigned requests (refused with --require-security)")
        java.util.List<String> sqsAccessKeys;
        @Option(names = "--sqs-tls", description = "serve the SQS endpoint over HTTPS with the node's --tls-cert and "
                + "--tls-key (clients trust the CA that signed it: aws --ca-bundle, boto3 verify=, a JVM trust store)")
        Boolean sqsTls;
        @picocli.CommandLine.Mixin
        ServerSecurity security;
        @Option(names = "--log-format", paramLabel = "text|json", description = JsonLogProvider.OPTION_HELP)
        String logFormat;

        /** Every key a node's --config file may hold: each one this command reads. */
        static final java.util.Set<String> CONFIG_KEYS = java.util.Set.of("id", "listen", "advertise", "coordinator",
                "backend", "metrics", "region", "idle-close-ms", "tls-cert", "tls-key", "tls-ca", "tls-client-auth",
                "tokens", "access", "token-file", "require-security", "sqs-listen", "sqs-access-keys", "sqs-tls",
                "log-format", "max-waiting-receives");

        @Override
        public Integer call() throws Exception {
            Properties p;
            try {
                p = ConfigFile.load(config, CONFIG_KEYS); // an unknown key is an error, naming the nearest known one
                JsonLogProvider.requireFormat(logFormat, p);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            String nodeId = pick(id, p, "id", "node-1");
            String listenAt = pick(listen, p, "listen", "127.0.0.1:9000");
            String advertiseAs = pick(advertise, p, "advertise", null);
            String coordinators = pick(coordinator, p, "coordinator",
                    System.getenv().getOrDefault("MAILBOXCTL_COORDINATOR", "127.0.0.1:7100"));
            String sqsAt = pick(sqsListen, p, "sqs-listen", null);
            List<String> keys;
            String backendUri;
            try {
                requireSqsListen(sqsAt, p);
                // a secret on the command line is used, with a warning; from the config file or env:/file:, quietly
                backendUri = backend != null ? Secrets.uri(backend, "--backend")
                        : Secrets.read(p.getProperty("backend", "memory"), "key backend in --config", System::getenv);
                if (sqsAccessKeys != null) {
                    if (sqsAccessKeys.stream().anyMatch(Secrets::inline)) {
                        Secrets.warnInline("--sqs-access-key");
                    }
                    keys = Secrets.accessKeys(sqsAccessKeys, "--sqs-access-key", System::getenv);
                } else {
                    keys = Secrets.accessKeys(Arrays.stream(p.getProperty("sqs-access-keys", "").split(","))
                            .map(String::trim).filter(k -> !k.isEmpty()).toList(), "key sqs-access-keys in --config",
                            System::getenv);
                }
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            String metricsAt = pick(metrics, p, "metrics", null);
            // refused before anything starts: plaintext metrics beyond loopback under --require-security
            MetricsEndpoint.checkSecurity(metricsAt == null ? null : CoordinationCommands.address(metricsAt,
                    "--metrics"), security.tls(p) != null, security.require(p));
            long idle;
            try {
                idle = idleCloseMillis != null ? idleCloseMillis
                        : Long.parseLong(p.getProperty("idle-close-ms", "300000").trim());
            } catch (NumberFormatException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "key idle-close-ms in --config must be "
                        + "a whole number of milliseconds, was '" + p.getProperty("idle-close-ms") + "'");
            }

            int maxWaiting;
            try {
                maxWaiting = maxWaitingReceives != null ? maxWaitingReceives : Integer.parseInt(p.getProperty(
                        "max-waiting-receives", Integer.toString(MailboxNode.DEFAULT_MAX_WAITING_RECEIVES)).trim());
                if (maxWaiting < 1 || maxWaiting > MailboxNode.MAX_MAX_WAITING_RECEIVES) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--max-waiting-receives (key "
                        + "max-waiting-receives in --config) must be a whole number from 1 to "
                        + MailboxNode.MAX_MAX_WAITING_RECEIVES + ", was '" + (maxWaitingReceives != null
                        ? maxWaitingReceives : p.getProperty("max-waiting-receives")) + "'");
            }

            NodeBackend store = NodeBackend.parse(backendUri);
            dev.mailbox.coordination.ClientSecurity asClient = security.asClient(p);
            CoordinationClient client = CoordinationClient.builder()
                    .endpoints(java.util.Arrays.stream(coordinators.split(",")).map(String::trim)
                            .filter(s -> !s.isEmpty()).toList()).security(asClient).build();
            MetricsEndpoint endpoint = null;
            NodeSqsEndpoint sqsEndpoint = null;
            dev.mailbox.coordination.server.Access rules = security.access(p);
            // the console shows this node once it has started, to whom its access rules allow
            Console console = Console.builder()
                    .access(rules != null ? rules.forConsole() : ConsoleAccess.open()).build();
            MailboxNode node;
            try {
                MailboxNode.Builder b = MailboxNode.builder(nodeId).coordinator(client)
                        .listen(CoordinationCommands.address(listenAt, "--listen")).backend(store)
                        .idleClose(Duration.ofMillis(idle)).maxWaitingReceives(maxWaiting)
                        .capability(store.shared() ? "shared" : "memory")
                        .peerSecurity(asClient).requireSecurity(security.require(p));
                dev.mailbox.coordination.TlsFiles tls = security.tls(p);
                if (tls != null) {
                    b.tls(tls);
                }
                dev.mailbox.coordination.server.Access access = rules;
                if (access != null) {
                    b.access(access);
                }
                if (advertiseAs != null) {
                    b.advertise(advertiseAs);
                }
                String regionName = pick(region, p, "region", null);
                if (regionName != null) {
                    b.region(regionName);
                }
                if (metricsAt != null) {
                    endpoint = MetricsEndpoint.start(CoordinationCommands.address(metricsAt, "--metrics"),
                            security.httpsContext(p), security.require(p), console);
                    b.meterRegistry(endpoint.registry());
                    // the Nodes tab of every console links to this node's own
                    b.label("console", java.util.Objects.requireNonNull(endpoint.consoleUrl()));
                }
                node = b.start();
                if (endpoint != null) {
                    endpoint.health(ProcessHealth.of(node, store));
                    console.serve(node.consoleSource());
                }
                if (sqsAt != null) {
                    try {
                        javax.net.ssl.SSLContext https = null;
                        if (sqsTls != null ? sqsTls : ServerSecurity.booleanKey(p, "sqs-tls")) {
                            https = security.httpsContext(p);
                            if (https == null) {
                                throw new IllegalArgumentException("--sqs-tls serves HTTPS with the node's certificate:"
                                        + " give --tls-cert and --tls-key (and --tls-ca)");
                            }
                        }
                        sqsEndpoint = NodeSqsEndpoint.start(node, store, CoordinationCommands.address(sqsAt, "--sqs-listen"),
                                keys, asClient, security.require(p), access, https);
                    } catch (RuntimeException e) {
                        node.close();
                        throw e;
                    }
                }
            } catch (RuntimeException e) {
                client.close();
                store.close();
                if (endpoint != null) {
                    endpoint.close();
                }
                throw e;
            }
            PrintWriter out = spec.commandLine().getOut();
            out.printf("node %s serving at %s on %s (coordinators %s)%s%n", nodeId, node.address(), store,
                    coordinators, endpoint == null ? "" : ", " + endpoint.describe());
            if (sqsEndpoint != null) {
                out.printf("node %s serving SQS at %s%n", nodeId, sqsEndpoint.url());
            }
            out.flush();
            NodeSqsEndpoint sqs = sqsEndpoint;
            CountDownLatch stopped = new CountDownLatch(1);
            MetricsEndpoint metricsEndpoint = endpoint;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                if (sqs != null) {
                    sqs.close();
                }
                node.close(); // releases the registration and closes the mailboxes it opened
                store.close();
                client.close();
                if (metricsEndpoint != null) {
                    metricsEndpoint.close();
                }
                stopped.countDown();
            }));
            stopped.await();
            return 0;
        }

        private static String pick(String option, Properties p, String key, String fallback) {
            return option != null ? option : p.getProperty(key, fallback);
        }

        /** The SQS endpoint's options mean nothing without --sqs-listen: given without it, they are an error. */
        private void requireSqsListen(String sqsAt, Properties p) {
            if (sqsAt != null) {
                return;
            }
            List<String> stray = new ArrayList<>();
            if (sqsAccessKeys != null) {
                stray.add("--sqs-access-key");
            }
            if (sqsTls != null) {
                stray.add("--sqs-tls");
            }
            for (String key : List.of("sqs-access-keys", "sqs-tls")) {
                if (p.getProperty(key) != null) {
                    stray.add("key " + key + " in --config");
                }
            }
            if (!stray.isEmpty()) {
                throw new IllegalArgumentException(String.join(", ", stray) + " configure the SQS endpoint, which only"
                        + " --sqs-listen HOST:PORT starts: add it, or leave them out");
            }
        }
    }
}
