package dev.mailbox.cli;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.NodeKeys;
import dev.mailbox.coordination.server.SecurityKeys;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import java.net.InetSocketAddress;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
        subcommands = {NodeCommand.Start.class},
        footer = {"  mailboxctl node start --id node-a -c 127.0.0.1:7100", "  mailboxctl node start --help"})
final class NodeCommand {

    private NodeCommand() {
    }

    @Command(name = "start", mixinStandardHelpOptions = true, modelTransformer = Start.Options.class,
            description = {"Start a mailbox node and serve until stopped (Ctrl-C or SIGTERM: it releases its "
                    + "registration and closes its mailboxes).",
                    "It registers with the coordinators, heartbeats, serves the mailboxes whose route names it "
                            + "(opening them on its backend when a call arrives; idle ones are closed, except on the memory "
                            + "backend, whose mailboxes hold their messages), and forwards "
                            + "calls for the others to their owners.",
                    "Every option below is also a key of --config FILE, a properties file: the option's name without "
                            + "the dashes (sqs-access-keys, comma-separated, for the repeatable --sqs-access-key). A "
                            + "flag wins over the same key in the file; a key the file should not hold (a misspelling) "
                            + "is an error.",
                    "With --sqs-listen the node also serves Amazon SQS's HTTP API: any SQS client (AWS CLI, boto3, "
                            + "the AWS SDKs) creates queues there and uses them as this node's mailboxes, each call "
                            + "going through the node's data plane like a RemoteMailbox's, so a queue whose mailbox "
                            + "is owned by another node is forwarded there. The other --sqs-* options need it.",
                    "Secrets (--sqs-access-key, a --backend URI with a password or secret key) may be given as "
                            + "env:NAME or file:PATH, read from that environment variable or file, instead of on "
                            + "the command line, where other users of the host can read them (a warning says so)."},
            footer = {"  mailboxctl node start --id node-a --listen 127.0.0.1:9000 -c 10.0.0.1:7100",
                    "  mailboxctl node start --id node-a --backend redis://127.0.0.1:6379",
                    "  mailboxctl node start --id node-b --metrics 127.0.0.1:9101",
                    "  mailboxctl node start --id node-a --sqs-listen 127.0.0.1:9324 \\",
                    "      --sqs-access-key env:SQS_KEYS",
                    "  mailboxctl node start --config node-a.properties"})
    static final class Start implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", description = "a properties file with the settings below, "
                + "one key per option (default: none)")
        Path config;

        /** Every setting of a node process: the builder's, its security, its backend, SQS endpoint and more. */
        static final List<Setting<?>> SETTINGS = settings();

        /** Every key a node's --config file may hold: each one this command reads. */
        static final java.util.Set<String> CONFIG_KEYS = SettingOptions.keys(SETTINGS);

        private static List<Setting<?>> settings() {
            List<Setting<?>> all = new ArrayList<>(NodeKeys.ALL);
            all.add(CliKeys.COORDINATOR);
            all.add(CliKeys.BACKEND);
            all.add(CliKeys.METRICS);
            all.addAll(SecurityKeys.NODE);
            all.addAll(SqsEndpointKeys.ALL);
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
            Settings s = SettingOptions.read(spec, SETTINGS, config); // an unknown key names the nearest known one
            ServerSecurity security = new ServerSecurity(s);
            String nodeId = s.get(NodeKeys.ID);
            String coordinators = s.get(CliKeys.COORDINATOR);
            InetSocketAddress sqsAt = s.get(SqsEndpointKeys.SQS_LISTEN);
            List<String> keys;
            String backendUri;
            try {
                requireSqsListen(s);
                // a secret on the command line is used, with a warning; from the config file or env:/file:, quietly
                String backend = s.get(CliKeys.BACKEND);
                backendUri = s.fromFlag(CliKeys.BACKEND) ? Secrets.uri(backend, "--backend")
                        : Secrets.read(backend, "key backend in --config", System::getenv);
                List<String> given = s.get(SqsEndpointKeys.SQS_ACCESS_KEYS);
                if (s.fromFlag(SqsEndpointKeys.SQS_ACCESS_KEYS)) {
                    if (given.stream().anyMatch(Secrets::inline)) {
                        Secrets.warnInline("--sqs-access-key");
                    }
                    keys = Secrets.accessKeys(given, "--sqs-access-key", System::getenv);
                } else {
                    keys = Secrets.accessKeys(given, "key sqs-access-keys in --config", System::getenv);
                }
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            InetSocketAddress metricsAt = s.get(CliKeys.METRICS);
            // refused before anything starts: plaintext metrics beyond loopback under --require-security
            MetricsEndpoint.checkSecurity(metricsAt, security.tls() != null, security.require());

            NodeBackend store = NodeBackend.parse(backendUri);
            dev.mailbox.coordination.ClientSecurity asClient = security.asClient();
            CoordinationClient client = CoordinationClient.builder()
                    .endpoints(java.util.Arrays.stream(coordinators.split(",")).map(String::trim)
                            .filter(e -> !e.isEmpty()).toList()).security(asClient).build();
            MetricsEndpoint endpoint = null;
            NodeSqsEndpoint sqsEndpoint = null;
            dev.mailbox.coordination.server.Access rules = security.access();
            // the console shows this node once it has started, to whom its access rules allow
            Console console = Console.builder()
                    .access(rules != null ? rules.forConsole() : ConsoleAccess.open()).build();
            MailboxNode node;
            try {
                MailboxNode.Builder b = MailboxNode.builder(nodeId).coordinator(client).backend(store).settings(s)
                        .capability(store.shared() ? "shared" : "memory").peerSecurity(asClient);
                dev.mailbox.coordination.TlsFiles tls = security.tls();
                if (tls != null) {
                    b.tls(tls);
                }
                dev.mailbox.coordination.server.Access access = rules;
                if (access != null) {
                    b.access(access);
                }
                if (metricsAt != null) {
                    endpoint = MetricsEndpoint.start(metricsAt, security.httpsContext(), security.require(), console);
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
                        if (Boolean.TRUE.equals(s.get(SqsEndpointKeys.SQS_TLS))) {
                            https = security.httpsContext();
                            if (https == null) {
                                throw new IllegalArgumentException("--sqs-tls serves HTTPS with the node's certificate:"
                                        + " give --tls-cert and --tls-key (and --tls-ca)");
                            }
                        }
                        sqsEndpoint = NodeSqsEndpoint.start(node, store, sqsAt, keys, asClient, security.require(),
                                access, https);
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

        /** The SQS endpoint's options mean nothing without --sqs-listen: given without it, they are an error. */
        private static void requireSqsListen(Settings s) {
            if (s.get(SqsEndpointKeys.SQS_LISTEN) != null) {
                return;
            }
            List<String> stray = new ArrayList<>();
            for (Setting<?> option : List.of(SqsEndpointKeys.SQS_ACCESS_KEYS, SqsEndpointKeys.SQS_TLS)) {
                if (s.isSet(option)) {
                    stray.add(s.fromFlag(option) ? option.flag() : "key " + option.key() + " in --config");
                }
            }
            if (!stray.isEmpty()) {
                throw new IllegalArgumentException(String.join(", ", stray) + " configure the SQS endpoint, which only"
                        + " --sqs-listen HOST:PORT starts: add it, or leave them out");
            }
        }
    }
}
