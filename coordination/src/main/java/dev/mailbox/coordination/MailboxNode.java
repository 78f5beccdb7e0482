package dev.mailbox.coordination;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.internal.MailboxServiceImpl;
import dev.mailbox.coordination.internal.Metrics;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A mailbox node (the seeds' proxy): serves the data-plane {@code MailboxService} (send, receive,
 * acknowledge, nack, extend, count, purge) for the mailboxes it hosts, and forwards a call for any
 * other mailbox to the node the routing table names as its owner, so a client can use any mailbox
 * through any node (see {@link RemoteMailbox}).
 *
 * <p>With a coordinator it registers itself (and keeps the registration alive with heartbeats,
 * registering again if it was marked down) and keeps a {@link RoutingTable}. Without one it serves
 * only what it hosts.
 *
 * <p>Hosting is local: {@link #host} makes a mailbox object reachable here. Who owns a mailbox is
 * decided by its lease: the route of a mailbox points at the address its lease holder gave, which
 * for a runner on this node is {@link #address()}. A call for a mailbox hosted here is served here
 * whatever the routing table says. A call is forwarded at most once, so a stale route cannot loop.
 *
 * <pre>{@code
 * MailboxNode node = MailboxNode.builder("node-a").coordinator(client).start();
 * node.host(InMemoryMailbox.builder("orders@node-a", Codec.bytes()).build());
 * }</pre>
 */
public final class MailboxNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MailboxNode.class);

    private final String id;
    private final Map<String, Mailbox<byte[]>> hosted = new ConcurrentHashMap<>();
    private final Map<String, LeaseKeeper> published = new ConcurrentHashMap<>();
    private final @Nullable CoordinationClient coordinator;
    private final @Nullable RoutingTable routes;
    private final Server server;
    private final String address;
    private final MailboxServiceImpl service;
    private final java.util.concurrent.ExecutorService pool;
    private final Metrics metrics = new Metrics();
    private final @Nullable InetSocketAddress metricsAddress;
    private final ScheduledExecutorService heartbeats;
    private final NodeInfo info;
    private final Duration registrationTtl;
    private volatile @Nullable Lease registration;
    private volatile long heartbeatMillis = 1_000;
    private volatile boolean closed;

    private MailboxNode(Builder b) {
        this.id = b.id;
        this.coordinator = b.coordinator;
        this.registrationTtl = b.registrationTtl;
        this.routes = coordinator == null ? null : coordinator.watchRoutes();
        int port = b.listen.getPort();
        // the address is needed before the server starts (the service compares routes to it), so a
        // free port is bound first when none was given
        if (port == 0) {
            port = freePort(b.listen);
        }
        InetSocketAddress bind = new InetSocketAddress(b.listen.getAddress(), port);
        this.address = b.advertise != null ? b.advertise : bind.getHostString() + ":" + port;
        RoutingTable table = routes;
        this.pool = java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mailbox-node-" + b.id + "-call");
            t.setDaemon(true);
            return t;
        });
        this.service = new MailboxServiceImpl(address, hosted,
                mailbox -> table == null ? Optional.empty() : table.route(mailbox), metrics.registry(), pool);
        this.server = NettyServerBuilder.forAddress(bind).executor(pool).callExecutor(service.executors())
                .maxInboundMessageSize(MailboxServiceImpl.MAX_MESSAGE)
                .addService(ServerInterceptors.intercept(service, metrics.interceptor("mailbox.node.requests")))
                .build();
        try {
            server.start();
        } catch (IOException e) {
            closeQuietly();
            throw new UncheckedIOException("mailbox node " + id + " cannot listen on " + bind, e);
        }
        Gauge.builder("mailbox.node.hosted", hosted, Map::size).register(metrics.registry());
        Gauge.builder("mailbox.node.handles", service, MailboxServiceImpl::heldHandles).register(metrics.registry());
        if (routes != null) {
            Gauge.builder("mailbox.node.routes", routes, r -> r.routes().size()).register(metrics.registry());
            Gauge.builder("mailbox.node.routes.revision", routes, RoutingTable::revision).register(metrics.registry());
        }
        Gauge.builder("mailbox.node.registered", this, n -> n.registration != null ? 1 : 0).register(metrics.registry());
        this.metricsAddress = b.metrics == null ? null : metrics.serve(b.metrics);
        this.info = new NodeInfo(id, address, b.region, b.version, b.capabilities, b.labels, false, 0);
        this.heartbeats = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mailbox-node-" + id);
            t.setDaemon(true);
            return t;
        });
        if (coordinator != null) {
            try {
                register();
            } catch (CoordinationException e) {
                if (!e.isRetryable()) {
                    closeQuietly();
                    throw e;
                }
                LOG.warn("node {}: coordinator unavailable, will keep trying to register: {}", id, e.getMessage());
                heartbeats.schedule(this::heartbeat, 1, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * @param id the node id: unique in the cluster, without '@'
     * @return a builder
     */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    private void register() {
        CoordinationClient c = Objects.requireNonNull(coordinator);
        CoordinationClient.Registration r = c.registerNode(info, registrationTtl);
        registration = r.lease();
        heartbeatMillis = registrationTtl.isZero() ? c.policy(NodeInfo.NAMESPACE).heartbeatInterval().toMillis()
                : Math.max(100, registrationTtl.toMillis() / 3);
        heartbeats.schedule(this::heartbeat, heartbeatMillis, TimeUnit.MILLISECONDS);
        LOG.info("node {} registered at {} (lease {}, epoch {}), partitions {}", id, address, r.lease().leaseId(),
                r.lease().epoch(), r.ranges());
    }

    private void heartbeat() {
        if (closed) {
            return;
        }
        CoordinationClient c = Objects.requireNonNull(coordinator);
        Lease lease = registration;
        try {
            if (lease == null) {
                register();
                return;
            }
            registration = c.renew(lease);
        } catch (CoordinationException e) {
            if (!e.isRetryable()) {
                // marked down (our lease ended): register again, which brings the node back up
                LOG.warn("node {}: registration lost ({}); registering again", id, e.getMessage());
                registration = null;
                try {
                    register();
                    return;
                } catch (CoordinationException again) {
                    LOG.warn("node {}: cannot register: {}", id, again.getMessage());
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("node {}: heartbeat failed: {}", id, e.toString());
        }
        if (!closed) {
            try {
                heartbeats.schedule(this::heartbeat, heartbeatMillis, TimeUnit.MILLISECONDS);
            } catch (RuntimeException rejected) {
                // closing
            }
        }
    }

    /**
     * Hosts a mailbox under its own name.
     *
     * @param mailbox a mailbox of bytes (the callers' codecs encode and decode)
     * @return this node
     * @throws IllegalStateException if another mailbox of that name is hosted here
     */
    public MailboxNode host(Mailbox<byte[]> mailbox) {
        return host(mailbox.name(), mailbox);
    }

    /**
     * Hosts a mailbox under a given id.
     *
     * @param mailboxId the id callers use
     * @param mailbox   the mailbox
     * @return this node
     * @throws IllegalStateException if another mailbox of that id is hosted here
     */
    public MailboxNode host(String mailboxId, Mailbox<byte[]> mailbox) {
        Objects.requireNonNull(mailbox, "mailbox");
        if (mailboxId.isBlank()) {
            throw new IllegalArgumentException("mailbox id must not be blank");
        }
        Mailbox<byte[]> before = hosted.putIfAbsent(mailboxId, mailbox);
        if (before != null && before != mailbox) {
            throw new IllegalStateException("node " + id + " already hosts a mailbox '" + mailboxId + "'");
        }
        return this;
    }

    /**
     * Hosts a mailbox and holds its lease in this node's name, so that routes lead here: for
     * mailboxes no runner consumes, such as a client's response mailbox or a dead-letter mailbox.
     * {@link #unhost} (or closing the node) releases the lease.
     *
     * @param mailbox a mailbox of bytes, hosted under its name
     * @return the lease
     * @throws IllegalStateException if the node has no coordinator, or already hosts another mailbox of that name
     * @throws CoordinationException if the lease is held by someone else
     */
    public Lease publish(Mailbox<byte[]> mailbox) {
        CoordinationClient c = coordinator;
        if (c == null) {
            throw new IllegalStateException("node " + id + " has no coordinator to publish '" + mailbox.name() + "' with");
        }
        host(mailbox);
        LeaseKeeper keeper = c.keeper(mailbox.name(), new LeaseHolder(id + "/host", id, address)).build();
        Lease lease;
        try {
            lease = keeper.acquire();
        } catch (RuntimeException e) {
            hosted.remove(mailbox.name(), mailbox);
            keeper.close();
            throw e;
        }
        LeaseKeeper before = published.put(mailbox.name(), keeper);
        if (before != null) {
            before.close();
        }
        return lease;
    }

    /**
     * Stops hosting a mailbox (does not close it).
     *
     * @param mailboxId the id
     * @return the mailbox, or null if none was hosted under it
     */
    public @Nullable Mailbox<byte[]> unhost(String mailboxId) {
        Mailbox<byte[]> m = hosted.remove(mailboxId);
        service.forget(mailboxId);
        LeaseKeeper keeper = published.remove(mailboxId);
        if (keeper != null) {
            keeper.close();
        }
        return m;
    }

    /** @return the ids of the hosted mailboxes, sorted */
    public Set<String> hosted() {
        return new TreeSet<>(hosted.keySet());
    }

    /** @return the node id */
    public String id() {
        return id;
    }

    /** @return {@code host:port} where this node's MailboxService is reached (what routes name) */
    public String address() {
        return address;
    }

    /** @return the routing table copy, or empty without a coordinator */
    public Optional<RoutingTable> routingTable() {
        return Optional.ofNullable(routes);
    }

    /** @return the current registration lease, or empty while not registered */
    public Optional<Lease> registration() {
        return Optional.ofNullable(registration);
    }

    /** @return where {@code /metrics} is served, or empty if not */
    public Optional<InetSocketAddress> metricsAddress() {
        return Optional.ofNullable(metricsAddress);
    }

    /** @return the metrics in Prometheus text format */
    public String scrapeMetrics() {
        return metrics.scrape();
    }

    /**
     * Stops serving: refuses new calls, waits briefly for calls under way, stops heartbeating (the
     * registration then ends by expiry), and closes the routing table. Does not close hosted mailboxes.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closeQuietly();
    }

    private void closeQuietly() {
        closed = true;
        published.values().forEach(LeaseKeeper::close);
        published.clear();
        if (heartbeats != null) {
            heartbeats.shutdownNow();
        }
        if (server != null) {
            server.shutdown();
            try {
                if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                    server.shutdownNow();
                }
            } catch (InterruptedException e) {
                server.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        if (service != null) {
            service.close();
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        if (routes != null) {
            routes.close();
        }
        metrics.close();
    }

    private static int freePort(InetSocketAddress listen) {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, listen.getAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on " + listen.getAddress(), e);
        }
    }

    @Override
    public String toString() {
        return "MailboxNode[" + id + " at " + address + ", hosting " + hosted.size() + "]";
    }

    /** Builds a {@link MailboxNode}. */
    public static final class Builder {
        private final String id;
        private @Nullable CoordinationClient coordinator;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 0);
        private @Nullable String advertise;
        private @Nullable InetSocketAddress metrics;
        private String region = "";
        private String version = "";
        private final List<String> capabilities = new ArrayList<>();
        private final Map<String, String> labels = new LinkedHashMap<>();
        private Duration registrationTtl = Duration.ZERO;

        private Builder(String id) {
            Objects.requireNonNull(id, "id");
            if (id.isBlank() || id.contains("@")) {
                throw new IllegalArgumentException("node id must be non-blank and without '@', was '" + id + "'");
            }
            this.id = id;
        }

        /**
         * @param client the coordinator to register with and take routes from (not closed by the node)
         * @return this builder
         */
        public Builder coordinator(CoordinationClient client) {
            this.coordinator = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param address where to listen; default 127.0.0.1 on a free port
         * @return this builder
         */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param hostPort the address other nodes and clients use, if not the listening one
         * @return this builder
         */
        public Builder advertise(String hostPort) {
            this.advertise = Objects.requireNonNull(hostPort, "hostPort");
            return this;
        }

        /**
         * @param address where to serve Prometheus metrics at {@code /metrics}; default: not served
         * @return this builder
         */
        public Builder metrics(InetSocketAddress address) {
            this.metrics = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param region placement hint
         * @return this builder
         */
        public Builder region(String region) {
            this.region = Objects.requireNonNull(region, "region");
            return this;
        }

        /**
         * @param version software version
         * @return this builder
         */
        public Builder version(String version) {
            this.version = Objects.requireNonNull(version, "version");
            return this;
        }

        /**
         * @param capability something the node can host, such as a backend name
         * @return this builder
         */
        public Builder capability(String capability) {
            this.capabilities.add(Objects.requireNonNull(capability, "capability"));
            return this;
        }

        /**
         * @param key   label key
         * @param value label value
         * @return this builder
         */
        public Builder label(String key, String value) {
            this.labels.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * @param ttl how long the node stays up without a heartbeat; zero (default) for the
         *            {@code _nodes} namespace's policy. Heartbeats go every third of it.
         * @return this builder
         */
        public Builder registrationTtl(Duration ttl) {
            this.registrationTtl = ttl.isZero() ? ttl : LeasePolicy.requireTtl(ttl);
            return this;
        }

        /**
         * Starts serving and, with a coordinator, registers.
         *
         * @return the running node
         * @throws UncheckedIOException  if it cannot listen
         * @throws CoordinationException if the coordinator refuses the registration
         */
        public MailboxNode start() {
            return new MailboxNode(this);
        }
    }
}
