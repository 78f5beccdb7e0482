package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqs.SqsMailbox;
import java.net.URI;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/**
 * The backend a {@code mailboxctl node start} process opens its mailboxes on, from a URI: one client
 * (Redis pool, Redis Cluster client, SQS client) shared by every mailbox the node opens, closed with it.
 */
final class NodeBackend implements MailboxBackend, AutoCloseable {

    static final String HELP = "memory (mailboxes live in this node), redis://HOST:PORT[/DB], "
            + "redis-cluster://HOST:PORT[,HOST:PORT...], or sqs://?region=R[&endpoint=http://HOST:PORT]"
            + "[&access-key=K&secret-key=S][&create]";

    private enum Kind { MEMORY, REDIS, SQS }

    private final Kind kind;
    private final String uri;
    private final @Nullable UnifiedJedis redis;
    private final @Nullable SqsClient sqs;
    private final boolean createQueues;

    private NodeBackend(Kind kind, String uri, @Nullable UnifiedJedis redis, @Nullable SqsClient sqs,
                        boolean createQueues) {
        this.kind = kind;
        this.uri = uri;
        this.redis = redis;
        this.sqs = sqs;
        this.createQueues = createQueues;
    }

    /**
     * @param uri see {@link #HELP}
     * @return the backend, its client connected lazily
     * @throws IllegalArgumentException for a URI it cannot read
     */
    static NodeBackend parse(String uri) {
        if (uri.equals("memory") || uri.equals("memory:")) {
            return new NodeBackend(Kind.MEMORY, uri, null, null, false);
        }
        URI u;
        try {
            u = URI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a backend URI: '" + redact(uri) + "' (" + HELP + ")");
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme();
        switch (scheme) {
            case "redis", "rediss" -> {
                if (u.getHost() == null) {
                    throw new IllegalArgumentException("backend URI '" + redact(uri) + "' needs a host (" + HELP + ")");
                }
                return new NodeBackend(Kind.REDIS, uri, new JedisPooled(u), null, false);
            }
            case "redis-cluster" -> {
                Set<HostAndPort> seeds = new LinkedHashSet<>();
                for (String hp : u.getSchemeSpecificPart().replaceFirst("^//", "").split(",")) {
                    if (!hp.isBlank()) {
                        seeds.add(HostAndPort.from(hp.trim()));
                    }
                }
                if (seeds.isEmpty()) {
                    throw new IllegalArgumentException("backend URI '" + redact(uri) + "' names no node (" + HELP + ")");
                }
                return new NodeBackend(Kind.REDIS, uri, new JedisCluster(seeds), null, false);
            }
            case "sqs" -> {
                Map<String, String> q = MailboxCommands.query(u.getQuery());
                SqsClientBuilder b = SqsClient.builder().region(Region.of(q.getOrDefault("region", "us-east-1")));
                if (q.containsKey("endpoint")) {
                    b.endpointOverride(URI.create(q.get("endpoint")));
                    b.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                            q.getOrDefault("access-key", "local"), q.getOrDefault("secret-key", "local"))));
                } else if (q.containsKey("access-key")) {
                    b.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                            q.get("access-key"), q.getOrDefault("secret-key", ""))));
                }
                return new NodeBackend(Kind.SQS, uri, null, b.build(), q.containsKey("create"));
            }
            default -> throw new IllegalArgumentException("unknown backend '" + redact(uri) + "': use " + HELP);
        }
    }

    @Override
    public Mailbox<byte[]> open(String mailboxId) {
        return switch (kind) {
            case MEMORY -> InMemoryMailbox.builder(mailboxId, Codec.bytes()).build();
            case REDIS -> RedisMailbox.builder(mailboxId, Codec.bytes()).client(java.util.Objects.requireNonNull(redis))
                    .build();
            case SQS -> {
                String bad = dev.mailbox.api.Limits.mailboxNameProblem(mailboxId, false);
                if (bad != null) {
                    throw new IllegalArgumentException("mailbox '" + mailboxId + "' cannot be an SQS queue (" + bad
                            + "): on an SQS-backed node use bare mailbox ids such as 'orders'");
                }
                yield SqsMailbox.builder(mailboxId, Codec.bytes()).client(java.util.Objects.requireNonNull(sqs))
                        .createIfMissing(createQueues).build();
            }
        };
    }

    @Override
    public boolean shared() {
        return kind != Kind.MEMORY;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Redis: one {@code EXISTS} of a key nothing writes (it routes like any key, so it works on a Cluster too);
     * SQS: {@code ListQueues} of at most one queue. Each is bounded by its client's timeouts.
     */
    @Override
    public void probe() {
        try {
            switch (kind) {
                case MEMORY -> { }
                case REDIS -> java.util.Objects.requireNonNull(redis).exists(PROBE_KEY);
                case SQS -> java.util.Objects.requireNonNull(sqs).listQueues(r -> r.maxResults(1));
            }
        } catch (RuntimeException e) {
            throw new dev.mailbox.api.MailboxUnavailableException("backend " + this + " does not answer: "
                    + e.getMessage(), true, e);
        }
    }

    /** The key a Redis probe reads; nothing writes it. */
    static final String PROBE_KEY = "mailbox:{probe}";

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
        if (sqs != null) {
            sqs.close();
        }
    }

    /**
     * @param uri a backend or mailbox URI as the operator gave it
     * @return the same for messages and logs: neither an SQS secret key nor a password
     *         ({@code redis://[USER]:PASSWORD@HOST}) is shown
     */
    static String redact(String uri) {
        // the key as the query parser will read it, percent-encoded or not
        String s = uri.replaceAll("(?i)(secret(?:-|%2d)key=)[^&#]*", "$1***");
        int authority = s.indexOf("://");
        if (authority < 0 || s.indexOf('@', authority) < 0) {
            return s; // no user information anywhere
        }
        try {
            URI u = new URI(s);
            if (u.getHost() != null) {
                String info = u.getRawUserInfo();
                if (info == null) {
                    return s; // the '@' is in the path (a node-local id such as orders@node-a)
                }
                int colon = info.indexOf(':');
                String shown = colon >= 0 ? info.substring(0, colon) + ":***" : "***";
                return s.substring(0, authority + 3) + shown + s.substring(authority + 3 + info.length());
            }
        } catch (java.net.URISyntaxException e) {
            // below
        }
        // an authority the parser cannot read (a password holding '@' or '/', say): show none of it
        return s.substring(0, authority + 3) + "***";
    }

    @Override
    public String toString() {
        return kind == Kind.MEMORY ? "memory" : redact(uri);
    }
}
