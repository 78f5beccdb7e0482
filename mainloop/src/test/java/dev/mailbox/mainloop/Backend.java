package dev.mailbox.mainloop;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqs.SqsMailbox;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/** Where the MainLoop suite's mailboxes live; also how a child JVM reaches the same place. */
interface Backend {

    /** Opens the mailbox of this name; two calls with one name reach the same messages. */
    <T> Mailbox<T> open(String name, Codec<T> codec);

    /** Arguments from which {@link #fromArgs} rebuilds this backend in another JVM, or null if none can. */
    @Nullable List<String> childArgs();

    /**
     * Opens a FIFO mailbox of this name (see {@link dev.mailbox.api.MailboxCapabilities#fifo()}), or returns null
     * where the backend has none yet: the tests that need one are then skipped, saying so.
     */
    default <T> @Nullable Mailbox<T> openFifo(String name, Codec<T> codec) {
        return null;
    }

    /** The shortest visibility timeout the backend handles well in tests. */
    default Duration shortVisibility() {
        return Duration.ofSeconds(1);
    }

    static Backend fromArgs(List<String> args) {
        return switch (args.get(0)) {
            case "redis" -> new Redis(Redis.pooled(args.get(1), Integer.parseInt(args.get(2))), args.get(1),
                    Integer.parseInt(args.get(2)));
            case "sqs" -> new Sqs(URI.create(args.get(1)));
            default -> throw new IllegalArgumentException("unknown backend " + args);
        };
    }

    /** Mailboxes in this JVM, shared by name. */
    final class InMemory implements Backend {
        private final Map<String, Mailbox<?>> byName = new ConcurrentHashMap<>();

        @Override
        @SuppressWarnings("unchecked")
        public <T> Mailbox<T> open(String name, Codec<T> codec) {
            return (Mailbox<T>) byName.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, codec).build());
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> Mailbox<T> openFifo(String name, Codec<T> codec) {
            return (Mailbox<T>) byName.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, codec)
                    .fifo(dev.mailbox.api.FifoOptions.defaults()).build());
        }

        @Override
        public @Nullable List<String> childArgs() {
            return null;
        }
    }

    /** A Redis server the tests started. */
    final class Redis implements Backend {
        private final JedisPooled client;
        private final String host;
        private final int port;

        /**
         * A pool big enough for the suite: every long-polling mailbox object holds one connection for its
         * subscriber (requests of each loop, replies of each client), and workers borrow briefly.
         */
        static JedisPooled pooled(String host, int port) {
            GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
            pool.setMaxTotal(64);
            pool.setMaxIdle(64);
            return new JedisPooled(pool, host, port);
        }

        Redis(JedisPooled client, String host, int port) {
            this.client = client;
            this.host = host;
            this.port = port;
        }

        @Override
        public <T> Mailbox<T> open(String name, Codec<T> codec) {
            return RedisMailbox.builder(name, codec).client(client).build();
        }

        @Override
        public List<String> childArgs() {
            return List.of("redis", host, Integer.toString(port));
        }
    }

    /** An SQS endpoint (embedded ElasticMQ). */
    final class Sqs implements Backend {
        private final URI endpoint;
        private final SqsClient client;

        Sqs(URI endpoint) {
            this.endpoint = endpoint;
            this.client = SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                    .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
        }

        @Override
        public <T> Mailbox<T> open(String name, Codec<T> codec) {
            return SqsMailbox.builder(name, codec).client(client).createIfMissing(true).build();
        }

        @Override
        public List<String> childArgs() {
            return List.of("sqs", endpoint.toString());
        }
    }
}
