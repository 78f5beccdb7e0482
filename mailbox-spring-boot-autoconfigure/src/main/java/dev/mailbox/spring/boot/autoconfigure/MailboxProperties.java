package dev.mailbox.spring.boot.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code mailbox.*} properties: the mailboxes ({@code mailbox.mailboxes.<name>.*}), each backend's
 * connection, the listeners' shutdown and the coordinated mode.
 *
 * <pre>
 * mailbox:
 *   mailboxes:
 *     orders:
 *       backend: redis
 *       visibility-timeout: 30s
 *       redrive:
 *         max-receive-count: 5
 *         dead-letter: orders-dlq
 *       listener:
 *         concurrency: 4
 * </pre>
 *
 * Bound once, when the context starts: changing them afterwards changes nothing.
 */
@ConfigurationProperties("mailbox")
public class MailboxProperties {

    /** Where a mailbox lives. */
    public enum Backend {
        /** In this JVM (dev.mailbox.inmemory): for tests and single-process use. */
        MEMORY,
        /** Redis or Redis Cluster (dev.mailbox:mailbox-redis). */
        REDIS,
        /** Amazon SQS or a server that speaks its API (dev.mailbox:mailbox-sqs). */
        SQS,
        /** A mailbox node of a coordinated cluster (dev.mailbox:coordination-client). */
        NODE
    }

    /** Whether to make the mailboxes and run listeners at all. */
    private boolean enabled = true;

    /**
     * Every mailbox in memory, whatever its backend says, and the coordinated mode off: for tests
     * ({@code @MailboxTest} sets it) and for running an application without its servers.
     */
    private boolean inMemory;

    /** The backend of mailboxes that do not name one (none by default: each must say). */
    private @Nullable Backend defaultBackend;

    /** The mailboxes, by name. */
    private Map<String, MailboxSpec> mailboxes = new LinkedHashMap<>();

    private final Redis redis = new Redis();
    private final Sqs sqs = new Sqs();
    private final Node node = new Node();
    private final Listener listener = new Listener();
    private final Coordination coordination = new Coordination();
    private final Metrics metrics = new Metrics();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isInMemory() {
        return inMemory;
    }

    public void setInMemory(boolean inMemory) {
        this.inMemory = inMemory;
    }

    public @Nullable Backend getDefaultBackend() {
        return defaultBackend;
    }

    public void setDefaultBackend(@Nullable Backend defaultBackend) {
        this.defaultBackend = defaultBackend;
    }

    public Map<String, MailboxSpec> getMailboxes() {
        return mailboxes;
    }

    public void setMailboxes(Map<String, MailboxSpec> mailboxes) {
        this.mailboxes = mailboxes;
    }

    public Redis getRedis() {
        return redis;
    }

    public Sqs getSqs() {
        return sqs;
    }

    public Node getNode() {
        return node;
    }

    public Listener getListener() {
        return listener;
    }

    public Coordination getCoordination() {
        return coordination;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    /** One mailbox. */
    public static class MailboxSpec {

        /** Where it lives; default mailbox.default-backend. */
        private @Nullable Backend backend;

        /**
         * The body type (for a request/response mailbox, the request body type); default: the parameter type
         * of its @MailboxListener or @MainLoopHandler method.
         */
        private @Nullable Class<?> type;

        /**
         * The response type of a request/response mailbox (a MainLoop's); default: the return type of its
         * @MainLoopHandler method. Setting it makes the mailbox hold MainLoopRequest envelopes and adds a
         * MainLoopClient bean.
         */
        private @Nullable Class<?> responseType;

        /** How bodies are stored: json, utf8 (String bodies), bytes (byte[] bodies), or the name of a Codec bean. */
        private String codec = "json";

        /** The bean's name; default the mailbox's name, or the name plus "Mailbox" when the application has a bean of that name. */
        private @Nullable String beanName;

        /** How long a received message stays invisible to other consumers. */
        private Duration visibilityTimeout = Duration.ofSeconds(30);

        /** How long one receive waits for a message. */
        private Duration waitTime = Duration.ofSeconds(20);

        /** The largest message in bytes (encoded body plus attributes); default the backend's (1 MiB; on SQS the queue's). */
        private @Nullable Integer maxMessageBytes;

        /** The most messages it holds, 0 for no limit (memory and Redis only). */
        private long capacity;

        /**
         * A FIFO mailbox (memory, Redis and SQS backends): each message group's messages in send order, one in flight
         * at a time, deduplicated within five minutes; a send needs a group id ({@code SendOptions.withGroupId}). On
         * SQS the queue's name is the mailbox's plus {@code .fifo}. Its implicit dead-letter mailbox is FIFO too; a
         * mailbox on a node is FIFO as the node hosts it, so this is refused there.
         */
        private boolean fifo;

        /**
         * FIFO mailboxes only: deduplicate sends by a hash (SHA-256) of the encoded body when no deduplication id is
         * given.
         */
        private boolean contentBasedDeduplication;

        private final Redrive redrive = new Redrive();
        private final ListenerSpec listener = new ListenerSpec();
        private final ClientSpec client = new ClientSpec();
        private final RedisSpec redis = new RedisSpec();
        private final SqsSpec sqs = new SqsSpec();

        public @Nullable Backend getBackend() {
            return backend;
        }

        public void setBackend(@Nullable Backend backend) {
            this.backend = backend;
        }

        public @Nullable Class<?> getType() {
            return type;
        }

        public void setType(@Nullable Class<?> type) {
            this.type = type;
        }

        public @Nullable Class<?> getResponseType() {
            return responseType;
        }

        public void setResponseType(@Nullable Class<?> responseType) {
            this.responseType = responseType;
        }

        public String getCodec() {
            return codec;
        }

        public void setCodec(String codec) {
            this.codec = codec;
        }

        public @Nullable String getBeanName() {
            return beanName;
        }

        public void setBeanName(@Nullable String beanName) {
            this.beanName = beanName;
        }

        public Duration getVisibilityTimeout() {
            return visibilityTimeout;
        }

        public void setVisibilityTimeout(Duration visibilityTimeout) {
            this.visibilityTimeout = visibilityTimeout;
        }

        public Duration getWaitTime() {
            return waitTime;
        }

        public void setWaitTime(Duration waitTime) {
            this.waitTime = waitTime;
        }

        public @Nullable Integer getMaxMessageBytes() {
            return maxMessageBytes;
        }

        public void setMaxMessageBytes(@Nullable Integer maxMessageBytes) {
            this.maxMessageBytes = maxMessageBytes;
        }

        public long getCapacity() {
            return capacity;
        }

        public void setCapacity(long capacity) {
            this.capacity = capacity;
        }

        public boolean isFifo() {
            return fifo;
        }

        public void setFifo(boolean fifo) {
            this.fifo = fifo;
        }

        public boolean isContentBasedDeduplication() {
            return contentBasedDeduplication;
        }

        public void setContentBasedDeduplication(boolean contentBasedDeduplication) {
            this.contentBasedDeduplication = contentBasedDeduplication;
        }

        public Redrive getRedrive() {
            return redrive;
        }

        public ListenerSpec getListener() {
            return listener;
        }

        public ClientSpec getClient() {
            return client;
        }

        public RedisSpec getRedis() {
            return redis;
        }

        public SqsSpec getSqs() {
            return sqs;
        }
    }

    /** When to give a message up. */
    public static class Redrive {

        /**
         * Deliveries allowed before a message is dead-lettered, 1 to 1000; unset for none (a listener's
         * message is then retried for ever, a MainLoop request 5 times).
         */
        private @Nullable Integer maxReceiveCount;

        /**
         * The dead-letter mailbox's name; declared with this mailbox's backend and type unless it is declared
         * itself (then it must have the same backend).
         */
        private @Nullable String deadLetter;

        public @Nullable Integer getMaxReceiveCount() {
            return maxReceiveCount;
        }

        public void setMaxReceiveCount(@Nullable Integer maxReceiveCount) {
            this.maxReceiveCount = maxReceiveCount;
        }

        public @Nullable String getDeadLetter() {
            return deadLetter;
        }

        public void setDeadLetter(@Nullable String deadLetter) {
            this.deadLetter = deadLetter;
        }
    }

    /** How a mailbox's @MailboxListener or @MainLoopHandler method is run. */
    public static class ListenerSpec {

        /** How many messages are handled at once (the annotation's concurrency wins). */
        private int concurrency = 1;

        /** The most messages one receive takes, 1 to 10, each handled in turn by the worker that took them. */
        private int maxMessages = 1;

        private final Backoff backoff = new Backoff();

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public int getMaxMessages() {
            return maxMessages;
        }

        public void setMaxMessages(int maxMessages) {
            this.maxMessages = maxMessages;
        }

        public Backoff getBackoff() {
            return backoff;
        }
    }

    /** The MainLoopClient bean of a request/response mailbox. */
    public static class ClientSpec {

        /**
         * How long a call waits for its answer (and the request's deadline: a runner does not start work nobody
         * waits for any more) when the caller gives no timeout; default twice the mailbox's visibility timeout.
         */
        private @Nullable Duration timeout;

        public @Nullable Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(@Nullable Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** How long a failed message waits before it is delivered again: initial times multiplier^(deliveries-1). */
    public static class Backoff {

        /** The wait after the first failed delivery. */
        private Duration initial = Duration.ofSeconds(1);

        /** How much each further failure multiplies it, 1 or more. */
        private double multiplier = 2.0;

        /** The longest wait, at most 12 hours. */
        private Duration max = Duration.ofMinutes(5);

        public Duration getInitial() {
            return initial;
        }

        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }
    }

    /** Redis settings of one mailbox. */
    public static class RedisSpec {

        /** The Redis Cluster hash tag of the mailbox's keys; default its name (a dead letter gets its source's). */
        private @Nullable String hashTag;

        /** How long an idle mailbox's keys live; unset for ever. */
        private @Nullable Duration keyTtl;

        public @Nullable String getHashTag() {
            return hashTag;
        }

        public void setHashTag(@Nullable String hashTag) {
            this.hashTag = hashTag;
        }

        public @Nullable Duration getKeyTtl() {
            return keyTtl;
        }

        public void setKeyTtl(@Nullable Duration keyTtl) {
            this.keyTtl = keyTtl;
        }
    }

    /** SQS settings of one mailbox. */
    public static class SqsSpec {

        /** The queue's URL, used as given instead of resolving the name. */
        private @Nullable String queueUrl;

        /** Queue attributes to create the queue with, by SQS attribute name (such as MessageRetentionPeriod). */
        private Map<String, String> queueAttributes = new LinkedHashMap<>();

        public @Nullable String getQueueUrl() {
            return queueUrl;
        }

        public void setQueueUrl(@Nullable String queueUrl) {
            this.queueUrl = queueUrl;
        }

        public Map<String, String> getQueueAttributes() {
            return queueAttributes;
        }

        public void setQueueAttributes(Map<String, String> queueAttributes) {
            this.queueAttributes = queueAttributes;
        }
    }

    /**
     * The Redis connection. Without a URI the mailboxes use, in this order, a UnifiedJedis bean of the
     * application, Spring Boot's Redis connection details (a service connection, say), or the
     * spring.data.redis.* properties.
     */
    public static class Redis {

        /** A standalone server's URI, such as redis://user:pass@host:6379/0 (rediss:// for TLS). */
        private @Nullable String uri;

        /** What every key starts with. */
        private String keyPrefix = "mailbox:";

        /** Connections in the pool the mailboxes share (per node on a cluster). */
        private int maxConnections = 32;

        public @Nullable String getUri() {
            return uri;
        }

        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public int getMaxConnections() {
            return maxConnections;
        }

        public void setMaxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
        }
    }

    /**
     * The SQS connection. Without a region the mailboxes use an SqsClient bean of the application, or one
     * made like its SqsAsyncClient bean (Spring Cloud AWS makes one).
     */
    public static class Sqs {

        /** The region of a client of the mailboxes' own, such as eu-west-1. */
        private @Nullable String region;

        /** An endpoint override for that client (ElasticMQ, LocalStack). */
        private @Nullable URI endpoint;

        /** A static access key for that client; default the SDK's credential chain. */
        private @Nullable String accessKey;

        /** The static secret key that goes with access-key. */
        private @Nullable String secretKey;

        /** Whether a missing queue is created (with the mailbox's queue-attributes). */
        private boolean createIfMissing = true;

        public @Nullable String getRegion() {
            return region;
        }

        public void setRegion(@Nullable String region) {
            this.region = region;
        }

        public @Nullable URI getEndpoint() {
            return endpoint;
        }

        public void setEndpoint(@Nullable URI endpoint) {
            this.endpoint = endpoint;
        }

        public @Nullable String getAccessKey() {
            return accessKey;
        }

        public void setAccessKey(@Nullable String accessKey) {
            this.accessKey = accessKey;
        }

        public @Nullable String getSecretKey() {
            return secretKey;
        }

        public void setSecretKey(@Nullable String secretKey) {
            this.secretKey = secretKey;
        }

        public boolean isCreateIfMissing() {
            return createIfMissing;
        }

        public void setCreateIfMissing(boolean createIfMissing) {
            this.createIfMissing = createIfMissing;
        }
    }

    /** Mailbox nodes, for backend node. */
    public static class Node {

        /** Data-plane addresses of one or more mailbox nodes, host:port. */
        private List<String> addresses = new ArrayList<>();

        /** How long one call may take. */
        private Duration callTimeout = Duration.ofSeconds(30);

        /** How long a call waits for a mailbox that no runner holds yet. */
        private Duration routeWait = Duration.ofSeconds(5);

        public List<String> getAddresses() {
            return addresses;
        }

        public void setAddresses(List<String> addresses) {
            this.addresses = addresses;
        }

        public Duration getCallTimeout() {
            return callTimeout;
        }

        public void setCallTimeout(Duration callTimeout) {
            this.callTimeout = callTimeout;
        }

        public Duration getRouteWait() {
            return routeWait;
        }

        public void setRouteWait(Duration routeWait) {
            this.routeWait = routeWait;
        }
    }

    /** Every listener's and handler's lifecycle. */
    public static class Listener {

        /** Whether listeners and handlers start with the context. */
        private boolean autoStartup = true;

        /**
         * How long running methods may take to finish when the context stops, before they are interrupted and
         * their messages returned; keep it under spring.lifecycle.timeout-per-shutdown-phase (30 s).
         */
        private Duration shutdownGrace = Duration.ofSeconds(20);

        public boolean isAutoStartup() {
            return autoStartup;
        }

        public void setAutoStartup(boolean autoStartup) {
            this.autoStartup = autoStartup;
        }

        public Duration getShutdownGrace() {
            return shutdownGrace;
        }

        public void setShutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = shutdownGrace;
        }
    }

    /** The meters the mailboxes add to the application's MeterRegistry. */
    public static class Metrics {

        /**
         * How old a mailbox's message count (the mailbox.messages gauge) may be. A scrape reads the last count
         * and, when it is older than this, has a new one taken in the background, so a scrape never waits for a
         * backend and an SQS queue is asked at most once per interval.
         */
        private Duration countInterval = Duration.ofSeconds(30);

        public Duration getCountInterval() {
            return countInterval;
        }

        public void setCountInterval(Duration countInterval) {
            this.countInterval = countInterval;
        }
    }

    /** The coordinated mode: listeners and handlers run only while this application holds a lease. */
    public static class Coordination {

        /** Whether to run listeners and handlers under a coordinator lease. */
        private boolean enabled;

        /** Coordinators' control-plane addresses, host:port (unused when there is a CoordinationClient bean). */
        private List<String> endpoints = new ArrayList<>();

        /** The lease's mailbox id (namespace@node or a namespace); default spring.application.name. */
        private @Nullable String lease;

        /** This instance's runner id; default spring.application.name plus a random suffix. */
        private @Nullable String runnerId;

        /** The node this instance runs on; default the host name. */
        private @Nullable String nodeId;

        /** Where this instance can be reached, host:port, for the routing table. */
        private String address = "127.0.0.1:8080";

        /** The lease's TTL; 0 for the namespace's policy. A stopped instance's successor waits at most this long. */
        private Duration ttl = Duration.ofSeconds(10);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public List<String> getEndpoints() {
            return endpoints;
        }

        public void setEndpoints(List<String> endpoints) {
            this.endpoints = endpoints;
        }

        public @Nullable String getLease() {
            return lease;
        }

        public void setLease(@Nullable String lease) {
            this.lease = lease;
        }

        public @Nullable String getRunnerId() {
            return runnerId;
        }

        public void setRunnerId(@Nullable String runnerId) {
            this.runnerId = runnerId;
        }

        public @Nullable String getNodeId() {
            return nodeId;
        }

        public void setNodeId(@Nullable String nodeId) {
            this.nodeId = nodeId;
        }

        public String getAddress() {
            return address;
        }

        public void setAddress(String address) {
            this.address = address;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }
    }
}
