package dev.mailbox.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Bodies;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A {@link Mailbox} on Redis or Redis Cluster, through one Jedis {@link UnifiedJedis} client
 * ({@link JedisPooled} for a standalone server, {@link JedisCluster} for a cluster): the same code
 * path for both.
 *
 * <h2>How it keeps the contract</h2>
 * <ul>
 *   <li><b>Atomic.</b> Every state change is one Lua script, so a client that dies at any moment
 *       leaves each message in exactly one state: queued, delayed, in flight or deleted. Nothing is
 *       popped in one step and recorded in another.</li>
 *   <li><b>Server time.</b> Deadlines come from the server's {@code TIME}. A handle is current only
 *       while its deadline is in the future, checked in the same script that acts on it, so a lapsed
 *       handle is refused at once; there is no reaper.</li>
 *   <li><b>Long polling</b> without a polling loop: scripts publish a notice on the mailbox's channel
 *       when messages become visible or an earlier deadline appears; one subscriber connection per
 *       mailbox object hears it and wakes the waiting threads, which sleep on a local condition until
 *       then or until the next deadline they know of. A waiting receive holds no pooled connection
 *       and sends nothing while it waits. Once it has started waiting, it rides out a Redis outage
 *       until its wait ends, and only then throws the retryable error.</li>
 *   <li><b>Cluster.</b> All keys of a mailbox share one hash tag, by default its name. A dead-letter
 *       move is part of the receive script, so on a cluster the dead-letter mailbox must be in the
 *       same hash slot: give it the source's tag with {@link Builder#hashTag(String)}.</li>
 * </ul>
 *
 * <h2>Connections</h2>
 * Each call borrows one connection for one round trip. A mailbox object that long-polls also keeps
 * one connection subscribed for as long as it is open. Size the client's pool for the threads that
 * call the mailbox at once plus one per long-polling mailbox object; JedisPooled's default of 8 suits a
 * handful of threads.
 *
 * <pre>{@code
 * JedisPooled redis = new JedisPooled("redis://127.0.0.1:6379");
 * RedisMailbox<Order> orders = RedisMailbox.builder("orders", Codec.json(Order.class))
 *         .client(redis)
 *         .build();
 * }</pre>
 *
 * @param <T> the body type
 */
public final class RedisMailbox<T> implements Mailbox<T> {

    private static final ObjectMapper ATTRIBUTES = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, String>> ATTRIBUTE_MAP = new TypeReference<>() { };
    private static final String[] KEY_SUFFIXES = {"ready", "timed", "body", "meta", "attr", "seq"};
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,80}");
    private static final Pattern TAG = Pattern.compile("[^{}]{1,200}");
    private static final long SUBSCRIBE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final String name;
    private final Codec<T> codec;
    private final UnifiedJedis client;
    private final boolean ownsClient;
    private final Object server;
    private final List<byte[]> keys;
    private final List<byte[]> receiveKeys;
    private final String firstKey;
    private final String channel;
    private final byte[] channelBytes;
    private final byte[] ttlMs;
    private final long capacity;
    private final int maxMessageBytes;
    private final @Nullable RedisMailbox<?> deadLetters;
    private final int maxReceiveCount;
    private final ReceiveOptions defaults;
    private final MailboxCapabilities capabilities;
    private final WakeHub hub;
    private volatile boolean closed;

    private RedisMailbox(Builder<T> b, UnifiedJedis client, boolean ownsClient, Object server) {
        this.name = b.name;
        this.codec = b.codec;
        this.client = client;
        this.ownsClient = ownsClient;
        this.server = server;
        String base = b.prefix + "{" + b.hashTag + "}" + (b.hashTag.equals(b.name) ? "" : ":" + b.name) + ":";
        List<byte[]> k = new ArrayList<>();
        for (String suffix : KEY_SUFFIXES) {
            k.add((base + suffix).getBytes(StandardCharsets.UTF_8));
        }
        this.keys = List.copyOf(k);
        this.firstKey = base + KEY_SUFFIXES[0];
        this.channel = base + "wake";
        this.channelBytes = channel.getBytes(StandardCharsets.UTF_8);
        this.ttlMs = bytes(b.keyTtl == null ? 0 : b.keyTtl.toMillis());
        this.capacity = b.capacity;
        this.maxMessageBytes = b.maxMessageBytes;
        this.deadLetters = b.redrivePolicy == null ? null : (RedisMailbox<?>) b.redrivePolicy.deadLetterMailbox();
        this.maxReceiveCount = b.redrivePolicy == null ? 0 : b.redrivePolicy.maxReceiveCount();
        if (deadLetters != null) {
            List<byte[]> rk = new ArrayList<>(keys);
            rk.addAll(deadLetters.keys);
            this.receiveKeys = List.copyOf(rk);
        } else {
            this.receiveKeys = keys;
        }
        this.defaults = b.defaults;
        this.capabilities = MailboxCapabilities.builder()
                .exactCount(true).fifo(true).detectsStaleAcknowledge(true).capacity(true).atomicDeadLetter(true)
                .maxMessageBytes(maxMessageBytes).timeGranularity(Duration.ofMillis(1))
                .build();
        this.hub = new WakeHub(client, channel);
    }

    /**
     * @param name  the mailbox's name: 1 to 80 characters from {@code A-Z a-z 0-9 _ - .} (SQS's rule,
     *              so names move between backends)
     * @param codec how bodies are stored
     * @param <T>   the body type
     * @return a builder; give it a {@link Builder#client(UnifiedJedis) client} or a
     *         {@link Builder#uri(String) URI}
     */
    public static <T> Builder<T> builder(String name, Codec<T> codec) {
        return new Builder<>(name, codec);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return capabilities;
    }

    /** @return the Redis key of this mailbox's ready list; the other keys share its prefix and hash tag */
    public String readyKey() {
        return firstKey;
    }

    @Override
    public String send(T body, SendOptions options) {
        return sendAll(List.of(Objects.requireNonNull(body, "body")), options).get(0);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(bodies, "bodies");
        Limits.requireBatchSize(bodies.size(), "batch size");
        for (T body : bodies) {
            Objects.requireNonNull(body, "bodies contains null");
        }
        return sendAll(bodies, options);
    }

    private List<String> sendAll(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(options, "options");
        List<byte[]> args = new ArrayList<>(5 + bodies.size());
        args.add(channelBytes);
        args.add(ttlMs);
        args.add(bytes(millisRoundedUp(options.delay())));
        args.add(bytes(capacity));
        args.add(encodeAttributes(options.attributes()));
        for (T body : bodies) {
            args.add(Bodies.encode(codec, body, options.attributes(), maxMessageBytes, name));
        }
        ensureOpen();
        Object reply = Scripts.SEND.run(client, name, keys, args);
        if (reply instanceof Long code && code == -1) {
            throw new MailboxFullException(name, capacity, bodies.size());
        }
        List<?> ids = (List<?>) reply;
        List<String> out = new ArrayList<>(ids.size());
        for (Object id : ids) {
            out.add(string(id));
        }
        return out;
    }

    @Override
    public List<Message<T>> receive() {
        return receive(defaults);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        long waitNanos = options.waitTime().toNanos();
        long start = System.nanoTime();
        if (waitNanos > 0) {
            hub.ensureSubscribed(Math.min(waitNanos, SUBSCRIBE_WAIT_NANOS));
        }
        List<byte[]> args = new ArrayList<>(8);
        args.add(channelBytes);
        args.add(ttlMs);
        args.add(bytes(options.maxMessages()));
        args.add(bytes(millisRoundedUp(options.visibilityTimeout())));
        args.add(bytes(Long.toHexString(ThreadLocalRandom.current().nextLong())));
        args.add(bytes(maxReceiveCount));
        args.add(deadLetters == null ? channelBytes : deadLetters.channelBytes);
        args.add(deadLetters == null ? ttlMs : deadLetters.ttlMs);
        MailboxUnavailableException outage = null;
        for (boolean first = true; ; first = false) {
            long seen = hub.generation();
            List<?> reply;
            try {
                reply = (List<?>) Scripts.RECEIVE.run(client, name, receiveKeys, args);
                outage = null;
            } catch (MailboxUnavailableException e) {
                // the first call fails fast; a wait already under way rides out an outage until it ends
                if (first || !e.isRetryable()) {
                    throw e;
                }
                outage = e;
                reply = null;
            }
            if (reply != null && (reply.size() > 2 || waitNanos == 0)) {
                return messages(reply);
            }
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(start + waitNanos - System.nanoTime());
            if (closed) {
                return List.of();
            }
            if (remainingMs <= 0) {
                if (outage != null) {
                    throw outage;
                }
                return List.of();
            }
            long sleepMs = remainingMs;
            long now = 0;
            if (reply != null) {
                now = (Long) reply.get(0);
                long earliest = (Long) reply.get(1);
                if (earliest >= 0) {
                    sleepMs = Math.min(remainingMs, Math.max(1, earliest - now + 1));
                }
            } else {
                sleepMs = Math.min(remainingMs, WakeHub.DEGRADED_SLEEP_MS);
            }
            try {
                hub.await(seen, sleepMs, reply != null ? now + sleepMs : Long.MAX_VALUE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MailboxUnavailableException("receive on mailbox '" + name + "' was interrupted", false, e);
            }
            if (closed) {
                return List.of();
            }
            // each pass draws a fresh nonce so every delivery's token is new
            args.set(4, bytes(Long.toHexString(ThreadLocalRandom.current().nextLong())));
        }
    }

    private List<Message<T>> messages(List<?> reply) {
        int n = (reply.size() - 2) / 6;
        if (n == 0) {
            return List.of();
        }
        List<Message<T>> out = new ArrayList<>(n);
        for (int i = 2; i < reply.size(); i += 6) {
            byte[] body = (byte[]) reply.get(i + 1);
            out.add(new RedisMessage<>(this, string(reply.get(i)), string(reply.get(i + 4)),
                    (int) (long) (Long) reply.get(i + 3), (Long) reply.get(i + 2),
                    decodeAttributes((byte[]) reply.get(i + 5)), Bodies.decode(codec, body)));
        }
        return out;
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        List<byte[]> args = new ArrayList<>(2 + 2 * messages.size());
        args.add(channelBytes);
        args.add(ttlMs);
        for (Message<T> m : messages) {
            RedisMessage<T> rm = own(m);
            args.add(bytes(rm.id));
            args.add(bytes(rm.token));
        }
        ensureOpen();
        List<?> codes = (List<?>) Scripts.ACK.run(client, name, keys, args);
        List<Message<T>> stale = new ArrayList<>();
        for (int i = 0; i < codes.size(); i++) {
            if ((Long) codes.get(i) != 1) {
                stale.add(messages.get(i));
            }
        }
        return stale;
    }

    @Override
    public long purge() {
        ensureOpen();
        return (Long) Scripts.PURGE.run(client, name, keys, List.of(channelBytes, ttlMs));
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        return (Long) Scripts.COUNT.run(client, name, keys, List.of(channelBytes, ttlMs));
    }

    /** Closes the wake subscription, and the client too if this mailbox made it from a URI. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        hub.close();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "RedisMailbox[" + name + ", " + firstKey + "]";
    }

    // ---- one delivery, called by RedisMessage

    void acknowledge(RedisMessage<T> m) {
        ensureOpen();
        List<?> codes = (List<?>) Scripts.ACK.run(client, name, keys,
                List.of(channelBytes, ttlMs, bytes(m.id), bytes(m.token)));
        requireCurrent(m, (Long) codes.get(0));
    }

    void changeVisibility(RedisMessage<T> m, Duration timeout, boolean nack) {
        Limits.requireVisibilityTimeout(timeout, nack ? "visibilityTimeout" : "timeout");
        ensureOpen();
        Object code = (nack ? Scripts.NACK : Scripts.EXTEND).run(client, name, keys,
                List.of(channelBytes, ttlMs, bytes(m.id), bytes(m.token), bytes(millisRoundedUp(timeout))));
        requireCurrent(m, (Long) code);
    }

    private void requireCurrent(RedisMessage<T> m, long code) {
        if (code == 1) {
            return;
        }
        String why = code == -1 ? "its visibility timeout ended"
                : "it is not the current delivery (the message was delivered again, nacked or deleted)";
        throw new ReceiptHandleExpiredException(m.receiptHandle(), "receipt handle " + m.receiptHandle()
                + " of message " + m.id + " in mailbox '" + name + "' is stale: " + why);
    }

    private RedisMessage<T> own(Message<T> m) {
        if (m instanceof RedisMessage<T> rm && rm.belongsTo(this)) {
            return rm;
        }
        throw new IllegalArgumentException("message " + m.id() + " was not received from mailbox '" + name + "'");
    }

    private void ensureOpen() {
        if (closed) {
            throw new MailboxClosedException(name);
        }
    }

    // ---- encoding

    private static byte[] encodeAttributes(Map<String, String> attributes) {
        if (attributes.isEmpty()) {
            return new byte[0];
        }
        try {
            return ATTRIBUTES.writeValueAsBytes(attributes);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always encodes", e);
        }
    }

    private Map<String, String> decodeAttributes(byte[] encoded) {
        if (encoded.length == 0) {
            return Map.of();
        }
        try {
            return Collections.unmodifiableMap(ATTRIBUTES.readValue(encoded, ATTRIBUTE_MAP));
        } catch (java.io.IOException e) {
            throw new MailboxException("attributes of a message in mailbox '" + name + "' are corrupt", e);
        }
    }

    private static long millisRoundedUp(Duration d) {
        return (d.toNanos() + 999_999) / 1_000_000;
    }

    private static byte[] bytes(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static String string(Object reply) {
        return new String((byte[]) reply, StandardCharsets.UTF_8);
    }

    /**
     * Builds a {@link RedisMailbox}. Every setter checks its argument at once; {@link #build()}
     * checks that they fit together. Not thread-safe.
     *
     * @param <T> the body type
     */
    public static final class Builder<T> {
        private final String name;
        private final Codec<T> codec;
        private @Nullable UnifiedJedis client;
        private @Nullable String uri;
        private String prefix = "mailbox:";
        private String hashTag;
        private ReceiveOptions defaults = ReceiveOptions.defaults();
        private long capacity;
        private int maxMessageBytes = Limits.DEFAULT_MAX_MESSAGE_BYTES;
        private @Nullable RedrivePolicy redrivePolicy;
        private @Nullable Duration keyTtl;

        private Builder(String name, Codec<T> codec) {
            Objects.requireNonNull(name, "name");
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("mailbox name must be 1 to 80 characters from A-Z, a-z, 0-9,"
                        + " '_', '-' and '.', was '" + name + "'");
            }
            this.name = name;
            this.codec = Objects.requireNonNull(codec, "codec");
            this.hashTag = name;
        }

        /**
         * @param client a {@link JedisPooled} or {@link JedisCluster}, shared by any number of mailboxes;
         *               the mailbox does not close it
         * @return this builder
         */
        public Builder<T> client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param uri a standalone server's URI, such as {@code redis://127.0.0.1:6379/0} or
         *            {@code rediss://user:pass@host:6380}; the mailbox makes its own pooled client and
         *            closes it on {@link RedisMailbox#close()}. Use {@link #client} for a cluster.
         * @return this builder
         */
        public Builder<T> uri(String uri) {
            Objects.requireNonNull(uri, "uri");
            URI parsed = URI.create(uri);
            if (!"redis".equals(parsed.getScheme()) && !"rediss".equals(parsed.getScheme())) {
                throw new IllegalArgumentException("uri must start with redis:// or rediss://, was " + uri);
            }
            this.uri = uri;
            return this;
        }

        /**
         * @param prefix what every key of the mailbox starts with, default {@code mailbox:}; no braces
         * @return this builder
         */
        public Builder<T> keyPrefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.contains("{") || prefix.contains("}")) {
                throw new IllegalArgumentException("key prefix must not contain '{' or '}', was '" + prefix + "'");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * @param hashTag the Redis Cluster hash tag of the mailbox's keys, default its name. Give a
         *                dead-letter mailbox its source's tag so both live in one slot.
         * @return this builder
         */
        public Builder<T> hashTag(String hashTag) {
            Objects.requireNonNull(hashTag, "hashTag");
            if (!TAG.matcher(hashTag).matches()) {
                throw new IllegalArgumentException("hash tag must be 1 to 200 characters without '{' or '}', was '"
                        + hashTag + "'");
            }
            this.hashTag = hashTag;
            return this;
        }

        /**
         * @param defaults what {@link RedisMailbox#receive()} uses; default {@link ReceiveOptions#defaults()}
         * @return this builder
         */
        public Builder<T> defaultReceiveOptions(ReceiveOptions defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * @param capacity the most messages (queued, delayed and in flight); 0 (the default) for no limit
         * @return this builder
         */
        public Builder<T> capacity(long capacity) {
            this.capacity = Limits.requireCapacity(capacity);
            return this;
        }

        /**
         * @param bytes the largest message (encoded body plus attributes), 1 byte to 1 MiB; default 256 KiB
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param policy where messages go after too many deliveries: another {@code RedisMailbox} on the
         *               same client (or URI) and, on a cluster, with a hash tag in the same slot. The move
         *               happens inside the receive script, so it is atomic; dead letters ignore the
         *               dead-letter mailbox's capacity and get a new id there.
         * @return this builder
         */
        public Builder<T> redrivePolicy(RedrivePolicy policy) {
            Objects.requireNonNull(policy, "policy");
            if (!(policy.deadLetterMailbox() instanceof RedisMailbox<?>)) {
                throw new IllegalArgumentException("the dead-letter mailbox of a RedisMailbox must be a RedisMailbox,"
                        + " was " + policy.deadLetterMailbox().getClass().getName());
            }
            this.redrivePolicy = policy;
            return this;
        }

        /**
         * @param ttl how long the mailbox's keys live after its last operation, so an abandoned mailbox
         *            cleans itself up; every operation renews it. Everything in the mailbox, in-flight and
         *            delayed messages too, goes when it expires, so choose it longer than your longest
         *            idle time. At least one second; none by default.
         * @return this builder
         */
        public Builder<T> keyTtl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("key TTL must be at least 1 second, was " + ttl);
            }
            this.keyTtl = ttl;
            return this;
        }

        /**
         * @return the mailbox
         * @throws IllegalArgumentException if neither or both of client and URI were given, or the
         *                                  dead-letter mailbox cannot be reached atomically
         */
        public RedisMailbox<T> build() {
            if ((client == null) == (uri == null)) {
                throw new IllegalArgumentException("give exactly one of client(...) and uri(...) for mailbox '"
                        + name + "'");
            }
            boolean owns = client == null;
            UnifiedJedis c = owns ? new JedisPooled(URI.create(uri)) : client;
            Object server = owns ? uri : client;
            try {
                RedisMailbox<T> mailbox = new RedisMailbox<>(this, c, owns, server);
                RedisMailbox<?> dlq = mailbox.deadLetters;
                if (dlq != null) {
                    if (!dlq.server.equals(server)) {
                        throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name
                                + "' must use the same Redis client (or URI) as mailbox '" + name + "'");
                    }
                    if (c instanceof JedisCluster
                            && JedisClusterCRC16.getSlot(dlq.firstKey) != JedisClusterCRC16.getSlot(mailbox.firstKey)) {
                        throw new IllegalArgumentException("on a cluster, dead-letter mailbox '" + dlq.name
                                + "' must be in the same hash slot as '" + name + "': build it with .hashTag(\""
                                + hashTag + "\")");
                    }
                }
                return mailbox;
            } catch (RuntimeException e) {
                if (owns) {
                    c.close();
                }
                throw e;
            }
        }
    }
}
