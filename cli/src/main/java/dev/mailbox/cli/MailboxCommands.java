package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqs.SqsMailbox;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;

/** Send, receive, count and purge on any backend, named by a URI. */
final class MailboxCommands {

    static final String URI_HELP = "memory:NAME (this process only), redis://[[USER]:PASSWORD@]HOST:PORT/NAME "
            + "(rediss:// for TLS), "
            + "sqs://QUEUE?region=R[&endpoint=http://HOST:PORT][&access-key=K&secret-key=S][&create], "
            + "or node://HOST:PORT/MAILBOX (through a mailbox node); or env:NAME or file:PATH holding the URI";

    private MailboxCommands() {
    }

    /**
     * Opens the mailbox a URI names, with bodies as UTF-8 text.
     *
     * @param uri the URI
     * @return the mailbox; the caller closes it
     */
    static Mailbox<String> open(String uri, dev.mailbox.coordination.ClientSecurity security) {
        return open(uri, security, Codec.utf8());
    }

    /**
     * Opens the mailbox a URI names, with bodies in the given codec.
     *
     * @param uri      the URI
     * @param security how to reach a node
     * @param codec    the bodies' codec
     * @param <T>      the body type
     * @return the mailbox; the caller closes it
     */
    static <T> Mailbox<T> open(String given, dev.mailbox.coordination.ClientSecurity security, Codec<T> codec) {
        String uri = Secrets.uri(given, "the mailbox URI"); // env:NAME or file:PATH keep a password out of ps
        URI u;
        try {
            u = URI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a mailbox URI: '" + NodeBackend.redact(uri) + "' (" + URI_HELP + ")");
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme();
        String path = u.getPath() == null ? "" : u.getPath().replaceFirst("^/", "");
        switch (scheme) {
            case "memory" -> {
                return InMemoryMailbox.builder(u.getSchemeSpecificPart(), codec).build();
            }
            case "redis", "rediss" -> {
                require(!path.isEmpty(), uri, "a mailbox name after the host");
                require(u.getHost() != null, uri, "a host");
                // the user and password ([USER]:PASSWORD@) and TLS (rediss) go with the address, not dropped
                return RedisMailbox.builder(path, codec).uri(scheme + "://"
                        + (u.getRawUserInfo() == null ? "" : u.getRawUserInfo() + "@") + u.getHost() + ":"
                        + (u.getPort() < 0 ? 6379 : u.getPort())).build();
            }
            case "sqs" -> {
                require(u.getHost() != null || u.getAuthority() != null, uri, "a queue name");
                Map<String, String> q = query(u.getQuery());
                SqsMailbox.Builder<T> b = SqsMailbox.builder(u.getAuthority(), codec)
                        .region(Region.of(q.getOrDefault("region", "us-east-1")));
                if (q.containsKey("endpoint")) {
                    b.endpointOverride(URI.create(q.get("endpoint")));
                    // a local SQS (ElasticMQ, LocalStack) takes any keys; AWS itself uses the default chain
                    b.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                            q.getOrDefault("access-key", "local"), q.getOrDefault("secret-key", "local"))));
                } else if (q.containsKey("access-key")) {
                    b.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                            q.get("access-key"), q.getOrDefault("secret-key", ""))));
                }
                return b.createIfMissing(q.containsKey("create")).build();
            }
            case "node" -> {
                require(!path.isEmpty(), uri, "a mailbox id after the node address");
                require(u.getHost() != null && u.getPort() > 0, uri, "a node address host:port");
                return RemoteMailbox.builder(path, codec).node(u.getHost() + ":" + u.getPort())
                        .security(security).build();
            }
            default -> throw new IllegalArgumentException("unknown mailbox URI scheme in '" + NodeBackend.redact(uri)
                    + "': use " + URI_HELP);
        }
    }

    private static void require(boolean ok, String uri, String what) {
        if (!ok) {
            throw new IllegalArgumentException("mailbox URI '" + NodeBackend.redact(uri) + "' needs " + what + " ("
                    + URI_HELP + ")");
        }
    }

    static Map<String, String> query(String query) {
        Map<String, String> out = new LinkedHashMap<>();
        if (query != null) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    out.put(pair.substring(0, eq), pair.substring(eq + 1));
                } else if (!pair.isEmpty()) {
                    out.put(pair, ""); // a flag such as &create
                }
            }
        }
        return out;
    }

    @Command(name = "call", mixinStandardHelpOptions = true,
            description = {"Send a request to the runners of a mailbox (MainLoop) and print the reply.",
                    "URI: node://HOST:PORT/MAILBOX; the reply comes back through the same node."},
            footer = {"  mailboxctl call node://127.0.0.1:9000/orders@node-a order-1 order-2",
                    "  mailboxctl call node://127.0.0.1:9000/orders@node-a order-3 \\",
                    "      --reply-timeout-ms 5000"})
    static final class Call implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(index = "0", paramLabel = "URI")
        String uri;
        @Parameters(index = "1..*", paramLabel = "BODY", arity = "1..*", description = "one request per BODY")
        List<String> bodies;
        @Option(names = "--reply-timeout-ms", defaultValue = "30000", description = "how long to wait for each "
                + "request's reply; one that does not come by then is an error (default: ${DEFAULT-VALUE})")
        long timeoutMillis;
        @Mixin
        SecurityOptions security;

        @Override
        public Integer call() throws Exception {
            URI u = URI.create(uri);
            String mailbox = u.getPath() == null ? "" : u.getPath().replaceFirst("^/", "");
            if (!"node".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0 || mailbox.isEmpty()) {
                throw new IllegalArgumentException("call needs node://HOST:PORT/MAILBOX, was '" + uri + "'");
            }
            String node = u.getHost() + ":" + u.getPort();
            try (MainLoopClient<String, String> client = MainLoopClient.<String, String>builder(
                    RemoteMailbox.builder(mailbox, MainLoopCodecs.requests(String.class)).node(node)
                            .security(security.clientSecurity()).build(),
                    name -> RemoteMailbox.builder(name, MainLoopCodecs.results(String.class)).node(node)
                            .security(security.clientSecurity()).build())
                    .receiveWait(Duration.ofSeconds(1)).build()) {
                List<CompletableFuture<String>> replies = new ArrayList<>();
                for (String body : bodies) {
                    replies.add(client.call(body, Duration.ofMillis(timeoutMillis)));
                }
                PrintWriter out = spec.commandLine().getOut();
                int failed = 0;
                for (CompletableFuture<String> reply : replies) {
                    try {
                        out.println(reply.get());
                    } catch (java.util.concurrent.ExecutionException e) {
                        failed++;
                        spec.commandLine().getErr().println("mailboxctl: " + e.getCause().getMessage());
                    }
                }
                out.flush();
                return failed == 0 ? 0 : 1;
            }
        }
    }

    @Command(name = "send", mixinStandardHelpOptions = true, description = "Send text messages to a mailbox.",
            footer = {"  mailboxctl send memory:orders hello world",
                    "  mailboxctl send redis://127.0.0.1:6379/orders order-1 --delay-ms 5000",
                    "  mailboxctl send memory:orders order-1 --attribute type=order",
                    "  mailboxctl send node://127.0.0.1:9000/orders@node-a order-2"})
    static final class Send implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Output output;
        @Mixin
        SecurityOptions security;
        @Parameters(index = "0", paramLabel = "URI", description = URI_HELP)
        String uri;
        @Parameters(index = "1..*", paramLabel = "BODY", arity = "1..*", description = "one message per body")
        List<String> bodies;
        @Option(names = "--delay-ms", defaultValue = "0", description = "keep them invisible this long (default: "
                + "${DEFAULT-VALUE}, visible at once)")
        long delay;
        @Option(names = "--attribute", description = "name=value (repeatable; default: none)")
        Map<String, String> attributes = new LinkedHashMap<>();

        @Override
        public Integer call() {
            try (Mailbox<String> m = open(uri, security.clientSecurity())) {
                SendOptions options = SendOptions.defaults().withDelay(Duration.ofMillis(delay)).withAttributes(attributes);
                List<String> ids = new ArrayList<>();
                for (String body : bodies) {
                    ids.add(m.send(body, options));
                }
                List<List<?>> rows = new ArrayList<>();
                for (int i = 0; i < ids.size(); i++) {
                    rows.add(List.of(ids.get(i), bodies.get(i)));
                }
                output.print(spec.commandLine().getOut(), ids, List.of("MESSAGE", "BODY"), rows);
                return 0;
            }
        }
    }

    @Command(name = "receive", mixinStandardHelpOptions = true,
            description = {"Receive messages; they are printed, then acknowledged (deleted) unless --keep is given.",
                    "A body that is not UTF-8 text is printed as base64 (base64:... in the table, bodyBase64 in JSON)."},
            footer = {"  mailboxctl receive redis://127.0.0.1:6379/orders -n 10 --wait-ms 20000",
                    "  mailboxctl receive node://127.0.0.1:9000/orders@node-a --keep -o json",
                    "  mailboxctl receive env:ORDERS_URI --visibility-ms 60000"})
    static final class Receive implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Output output;
        @Mixin
        SecurityOptions security;
        @Parameters(index = "0", paramLabel = "URI", description = URI_HELP)
        String uri;
        @Option(names = {"-n", "--max"}, defaultValue = "1", description = "at most this many, 1-10 (default: "
                + "${DEFAULT-VALUE})")
        int max;
        @Option(names = "--wait-ms", defaultValue = "0", description = "wait up to this long for a message when "
                + "there is none (long-poll) (default: ${DEFAULT-VALUE}, answer at once)")
        long wait;
        @Option(names = "--visibility-ms", defaultValue = "30000", description = "visibility timeout: how long the "
                + "messages received stay invisible to other receivers (default: ${DEFAULT-VALUE})")
        long visibility;
        @Option(names = "--keep", description = "do not acknowledge: they come back after the visibility timeout "
                + "(default: off, acknowledge each once printed)")
        boolean keep;

        @Override
        public Integer call() {
            // read as bytes: a body that is not UTF-8 text is shown as base64, exactly, rather than with its bytes
            // replaced by U+FFFD and then deleted
            try (Mailbox<byte[]> m = open(uri, security.clientSecurity(), Codec.bytes())) {
                List<Message<byte[]>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(max)
                        .withWaitTime(Duration.ofMillis(wait)).withVisibilityTimeout(Duration.ofMillis(visibility)));
                List<Map<String, Object>> json = new ArrayList<>();
                List<List<?>> rows = new ArrayList<>();
                for (Message<byte[]> msg : got) {
                    byte[] bytes = msg.body();
                    String text = utf8(bytes);
                    String body = text != null ? text : "base64:" + java.util.Base64.getEncoder().encodeToString(bytes);
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("id", msg.id());
                    if (text != null) {
                        one.put("body", text);
                    } else {
                        one.put("bodyBase64", java.util.Base64.getEncoder().encodeToString(bytes));
                    }
                    one.put("deliveryCount", msg.deliveryCount());
                    one.put("enqueuedAt", msg.enqueuedAt().toString());
                    one.put("attributes", msg.attributes());
                    one.put("receiptHandle", msg.receiptHandle());
                    json.add(one);
                    rows.add(List.of(msg.id(), msg.deliveryCount(), body));
                }
                // shown first, then deleted: a failure part way through the acknowledgements must not leave
                // messages deleted that were never printed (a message shown but not deleted comes back instead)
                output.print(spec.commandLine().getOut(), json, List.of("MESSAGE", "DELIVERY", "BODY"), rows);
                int failed = 0;
                if (!keep) {
                    for (Message<byte[]> msg : got) {
                        try {
                            msg.acknowledge();
                        } catch (RuntimeException e) {
                            failed++;
                            spec.commandLine().getErr().println("mailboxctl: message " + msg.id() + " was not "
                                    + "acknowledged, it comes back after its visibility timeout: "
                                    + MailboxCtl.message(e));
                        }
                    }
                }
                spec.commandLine().getErr().flush();
                return failed == 0 ? 0 : 1;
            }
        }
    }

    /** @return the bytes as text if they are well-formed UTF-8, else null */
    static String utf8(byte[] bytes) {
        try {
            return java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }

    /** A command that does one thing to a mailbox and prints the number it returns. */
    abstract static class OneNumber implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Output output;
        @Mixin
        SecurityOptions security;
        @Parameters(paramLabel = "URI", description = URI_HELP)
        String uri;

        /** @return the JSON key of the number; its column is the same in capitals */
        abstract String key();

        abstract long apply(Mailbox<String> m);

        @Override
        public Integer call() {
            try (Mailbox<String> m = open(uri, security.clientSecurity())) {
                long n = apply(m);
                output.print(spec.commandLine().getOut(), Map.of("mailbox", m.name(), key(), n),
                        List.of("MAILBOX", key().toUpperCase(java.util.Locale.ROOT)), List.of(List.of(m.name(), n)));
                return 0;
            }
        }
    }

    @Command(name = "count", mixinStandardHelpOptions = true, description = "How many messages are not yet deleted.",
            footer = {"  mailboxctl count redis://127.0.0.1:6379/orders",
                    "  mailboxctl count node://127.0.0.1:9000/orders@node-a -o json"})
    static final class Count extends OneNumber {
        @Override
        String key() {
            return "count";
        }

        @Override
        long apply(Mailbox<String> m) {
            return m.approximateCount();
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true, description = "Delete every message.",
            footer = {"  mailboxctl purge redis://127.0.0.1:6379/orders"})
    static final class Purge extends OneNumber {
        @Override
        String key() {
            return "purged";
        }

        @Override
        long apply(Mailbox<String> m) {
            return m.purge();
        }
    }
}
