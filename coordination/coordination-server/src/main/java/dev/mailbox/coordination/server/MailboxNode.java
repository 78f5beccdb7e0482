package dev.mailbox.coordination.server;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.Registration;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import dev.mailbox.coordination.server.internal.MailboxServiceImpl;
import dev.mailbox.coordination.server.internal.Meters;
import dev.mailbox.coordination.wire.DataPlane;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
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
 * <p>Hosting: {@link #host} makes a mailbox object reachable here, and a node given a
 * {@link Builder#backend backend} opens the backend mailbox for an id on demand, when a call for it
 * arrives and the node should serve it: its route names this node, or it has no route yet and the
 * backend is shared (or, on a node-local backend, its id names this node); such mailboxes are closed
 * after {@link Builder#idleClose} without a call (on a shared backend only: a node-local backend's
 * mailbox lives in its object, so it stays open until the node closes). A mailbox whose name ends with
 * {@code .fifo} is opened as a FIFO mailbox, any other as a standard one
 * ({@link CoordinationLimits#isFifoMailbox}); one its backend opens as the other kind is refused. A hosted
 * mailbox is served as the kind it is. Who owns a mailbox is decided
 * by its lease: the route of a mailbox points at the address its lease holder gave, which for a runner
 * on this node is {@link #address()}. A call for a mailbox hosted here is served here whatever the routing table says.
 * A call is forwarded at most once, so a stale route cannot loop. A channel to another node is closed after a
 * minute without a call, so that one to a node that moved (or left) does not stay open for good.
 *
 * <p>Receives and handle actions a leased runner makes carry its lease's epoch; the node refuses one
 * below the epoch of the mailbox's current route and makes the rest through the backend's
 * {@link Mailbox#fenced fenced} view (see {@link RemoteMailbox#fenced}).
 *
 * <pre>{@code
 * MailboxNode node = MailboxNode.builder("node-a").coordinator(client).start();
 * node.host(InMemoryMailbox.builder("orders@node-a", Codec.bytes()).build());
 * }</pre>
 */
public final class MailboxNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MailboxNode.class);
    /** How long closing waits for the node's leases to be released. */
    private static final Duration RELEASE_WAIT = Duration.ofSeconds(2);

    private final String id;
    private final Map<String, Mailbox<byte[]>> hosted = new ConcurrentHashMap<>();
    private final Map<String, LeaseKeeper> published = new ConcurrentHashMap<>();
    private final @Nullable MailboxBackend backend;
    /** Mailboxes opened from the backend, one object per id, closed when idle or when the node closes. */
    private final com.github.benmanes.caffeine.cache.Cache<String, Mailbox<byte[]>> opened;
    private final @Nullable CoordinationClient coordinator;
    private final @Nullable RoutingTable routes;
    private final Server server;
    private final String address;
    private final MailboxServiceImpl service;
    private final java.util.concurrent.ExecutorService pool;
    private final java.util.concurrent.ExecutorService receivePool;
    private final java.util.concurrent.ExecutorService waitPool;
    private final Meters meters;
    private final ScheduledExecutorService heartbeats;
    private final NodeInfo info;
    private final Duration registrationTtl;
    private volatile @Nullable Lease registration;
    /** When the registration was last granted or renewed ({@link System#nanoTime}), for {@link #registered}. */
    private volatile long registeredNanos;
    private volatile long heartbeatMillis = 1_000;
    private volatile boolean closed;

    private MailboxNode(Builder b) {
        InetSocketAddress listen = b.get(NodeKeys.LISTEN);
        String advertise = b.values().get(NodeKeys.ADVERTISE);
        Security.check("mailbox node " + b.id, b.tls != null, b.access != null, b.get(SecurityKeys.REQUIRE_SECURITY),
                listen);
        this.id = b.id;
        this.coordinator = b.coordinator;
        this.backend = b.backend;
        com.github.benmanes.caffeine.cache.Caffeine<Object, Object> cache =
                com.github.benmanes.caffeine.cache.Caffeine.newBuilder();
        if (b.backend == null || b.backend.shared()) {
            // a node-local backend's mailbox lives in its object: closing it when idle would drop its messages
            cache = cache.expireAfterAccess(b.get(NodeKeys.IDLE_CLOSE))
                    .scheduler(com.github.benmanes.caffeine.cache.Scheduler.systemScheduler());
        }
        this.opened = cache
                .<String, Mailbox<byte[]>>removalListener((mailboxId, mailbox, cause) -> {
                    if (mailbox != null) {
                        LOG.debug("node {}: closing mailbox '{}' ({})", b.id, mailboxId, cause);
                        mailbox.close();
                    }
                }).build();
        this.registrationTtl = b.registrationTtl;
        this.meters = new Meters(b.registry, Tag.of("node", b.id));
        this.routes = coordinator == null ? null : coordinator.routes().table();
        int port = listen.getPort();
        // the address is needed before the server starts (the service compares routes to it), so a
        // free port is bound first when none was given
        if (port == 0) {
            port = freePort(listen);
        }
        InetSocketAddress bind = new InetSocketAddress(listen.getAddress(), port);
        this.address = advertise != null ? advertise : bind.getHostString() + ":" + port;
        RoutingTable table = routes;
        // bounded: a burst of calls queues instead of starting a thread each. Receives start on threads of their
        // own, so sends and acknowledgements never queue behind them; a waiting receive then holds no thread
        // (parked on its backend) or, on a backend that cannot park it, one of at most MAX_BLOCKING_WAITS
        int threads = 4 * Runtime.getRuntime().availableProcessors();
        this.pool = fixedPool(threads, "mailbox-node-" + b.id + "-call");
        this.receivePool = fixedPool(threads, "mailbox-node-" + b.id + "-receive");
        java.util.concurrent.ThreadPoolExecutor waits = new java.util.concurrent.ThreadPoolExecutor(0,
                MailboxServiceImpl.MAX_BLOCKING_WAITS, 30, TimeUnit.SECONDS,
                new java.util.concurrent.SynchronousQueue<>(), daemon("mailbox-node-" + b.id + "-wait"));
        this.waitPool = waits;
        dev.mailbox.coordination.server.internal.AccessPolicy policy = b.access == null ? null : b.access.policy();
        this.service = new MailboxServiceImpl(address, new Hosting(),
                mailbox -> table == null ? Optional.empty() : table.route(mailbox), meters, pool, receivePool,
                waitPool, b.get(NodeKeys.MAX_WAITING_RECEIVES), policy, b.peerSecurity, List.copyOf(b.peerInterceptors));
        NettyServerBuilder sb = NettyServerBuilder.forAddress(bind).executor(pool).callExecutor(service.executors())
                .maxInboundMessageSize(DataPlane.MAX_MESSAGE);
        if (b.tls != null) {
            sb.sslContext(dev.mailbox.coordination.internal.Tls.serverContext(b.tls));
        }
        // last-added runs first: the builder's (a trace's span covers all the rest), time the call, find out who is
        // calling, note whom a forwarding node vouches for
        List<io.grpc.ServerInterceptor> chain = new ArrayList<>(List.of(MailboxServiceImpl.vouching(),
                new dev.mailbox.coordination.server.internal.Caller(policy), meters.callTimer("mailbox.node.requests")));
        chain.addAll(b.interceptors);
        this.server = sb.addService(ServerInterceptors.intercept(service, chain)).build();
        try {
            server.start();
        } catch (IOException e) {
            closeQuietly();
            throw new UncheckedIOException("mailbox node " + id + " cannot listen on " + bind, e);
        }
        meters.gauge("mailbox.node.hosted", "mailboxes hosted here", hosted, Map::size);
        meters.gauge("mailbox.node.opened", "mailboxes opened from the backend", opened, c -> c.estimatedSize());
        if (routes != null) {
            meters.gauge("mailbox.node.routes", "routes in this node's copy of the table", routes,
                    r -> r.routes().size());
            meters.gauge("mailbox.node.routes.revision", "the revision of this node's copy", routes,
                    RoutingTable::revision);
        }
        meters.gauge("mailbox.node.registered", "1 while registered with the coordinators", this,
                n -> n.registration != null ? 1 : 0);
        this.info = new NodeInfo(id, address, b.get(NodeKeys.REGION), b.version, b.capabilities, b.labels, false, 0);
        this.heartbeats = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mailbox-node-" + id);
            t.setDaemon(true);
            return t;
        });
        long peerIdle = b.peerIdleClose.toNanos();
        heartbeats.scheduleWithFixedDelay(() -> service.closeIdlePeers(peerIdle), peerIdle / 2, peerIdle / 2,
                TimeUnit.NANOSECONDS);
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
        Registration r = c.nodes().register(info, registrationTtl);
        registeredNanos = System.nanoTime();
        registration = r.lease();
        heartbeatMillis = registrationTtl.isZero()
                ? c.namespaces().policy(CoordinationLimits.NODES_NAMESPACE).heartbeatInterval().toMillis()
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
            Lease renewed = c.leases().renew(lease);
            registeredNanos = System.nanoTime();
            registration = renewed;
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
        CoordinationLimits.requireMailboxId(mailboxId);
        Mailbox<byte[]> before = hosted.putIfAbsent(mailboxId, mailbox);
        if (before != null && before != mailbox) {
            throw new IllegalStateException("node " + id + " already hosts a mailbox '" + mailboxId + "'");
        }
        return this;
    }

    /**
     * Hosts a mailbox and holds its lease in this node's name, so that routes lead here: for
     * mailboxes no runner consumes, such as a client's response mailbox or a dead-letter mailbox.
     * If the lease is lost (expired while the coordinators were out of reach, revoked and later
     * reclaimed), the node keeps trying to get it back, every heartbeat interval, for as long as it hosts
     * the mailbox. {@link #unhost} (or closing the node) releases the lease.
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
        // one holder for every attempt: after a loss, this node re-acquiring is the same holder
        LeaseHolder holder = new LeaseHolder(id + "/host", id, address);
        Lease lease;
        try {
            lease = keep(mailbox.name(), holder);
        } catch (RuntimeException e) {
            hosted.remove(mailbox.name(), mailbox);
            throw e;
        }
        return lease;
    }

    /** Acquires a published mailbox's lease once and keeps it; on a loss, schedules {@link #republish}. */
    private Lease keep(String mailboxId, LeaseHolder holder) {
        LeaseKeeper keeper = Objects.requireNonNull(coordinator).leases().keeper(mailboxId, holder)
                .listener((lost, why) -> republish(mailboxId, holder)).build();
        Lease lease;
        try {
            lease = keeper.acquire();
        } catch (RuntimeException e) {
            keeper.close();
            throw e;
        }
        LeaseKeeper before = published.put(mailboxId, keeper);
        if (before != null && before != keeper) {
            before.close();
        }
        return lease;
    }

    /** Tries to get a published mailbox's lost lease back, until it does or the mailbox is unhosted. */
    private void republish(String mailboxId, LeaseHolder holder) {
        if (closed || !published.containsKey(mailboxId)) {
            return;
        }
        try {
            heartbeats.schedule(() -> {
                if (closed || !published.containsKey(mailboxId)) {
                    return;
                }
                try {
                    Lease l = keep(mailboxId, holder);
                    LOG.info("node {}: has the lease of '{}' back (lease {}, epoch {})", id, mailboxId, l.leaseId(),
                            l.epoch());
                } catch (RuntimeException e) {
                    LOG.debug("node {}: lease of '{}' not back yet: {}", id, mailboxId, e.getMessage());
                    republish(mailboxId, holder);
                }
            }, heartbeatMillis, TimeUnit.MILLISECONDS);
        } catch (RuntimeException rejected) {
            // closing
        }
    }

    /**
     * Stops hosting a mailbox (does not close it).
     *
     * @param mailboxId the id
     * @return the mailbox, or null if none was hosted under it
     */
    public @Nullable Mailbox<byte[]> unhost(String mailboxId) {
        Mailbox<byte[]> m = hosted.remove(mailboxId);
        LeaseKeeper keeper = published.remove(mailboxId);
        if (keeper != null) {
            keeper.close();
        }
        return m;
    }

    /**
     * Opens a mailbox from the backend, of the kind its id names ({@link CoordinationLimits#isFifoMailbox}): one
     * the backend opened as the other kind (a backend without FIFO mailboxes, or a queue created as the other
     * kind) is closed again and refused, so that no node ever serves a FIFO mailbox as a standard one or the
     * other way round.
     */
    private static Mailbox<byte[]> openChecked(MailboxBackend backend, String mailboxId) {
        Mailbox<byte[]> m = backend.open(mailboxId);
        boolean named = CoordinationLimits.isFifoMailbox(mailboxId);
        boolean fifo;
        try {
            fifo = m.capabilities().fifo();
        } catch (RuntimeException e) {
            m.close();
            throw e;
        }
        if (fifo != named) {
            m.close();
            throw new IllegalArgumentException(named
                    ? "mailbox '" + mailboxId + "' is a FIFO mailbox by its name (it ends with "
                    + CoordinationLimits.FIFO_SUFFIX + ") but backend " + backend + " opened it as a standard one:"
                    + " this backend has no FIFO mailboxes, or the queue exists as a standard one"
                    : "mailbox '" + mailboxId + "' is a standard mailbox by its name (FIFO mailbox names end with "
                    + CoordinationLimits.FIFO_SUFFIX + ") but backend " + backend + " opened it as a FIFO one");
        }
        return m;
    }

    /** Which mailboxes this node serves itself: the hosted ones, and the backend's where it should. */
    private final class Hosting implements MailboxServiceImpl.Hosting {
        @Override
        public @Nullable Mailbox<byte[]> serveHere(String mailbox, Optional<dev.mailbox.coordination.Route> route,
                                                 int hops) {
            Mailbox<byte[]> m = hosted.get(mailbox);
            MailboxBackend b = backend;
            if (m != null || b == null || closed) {
                return m;
            }
            boolean mine = route.isPresent() ? route.get().address().equals(address)
                    : b.shared() || mailbox.endsWith("@" + id);
            return mine ? opened.get(mailbox, mailboxId -> openChecked(b, mailboxId)) : null;
        }

        @Override
        public boolean has(String mailbox) {
            return hosted.containsKey(mailbox) || opened.getIfPresent(mailbox) != null;
        }
    }

    /**
     * What the web console shows of this node ({@link dev.mailbox.console.Console#serve}): the cluster as its
     * coordination client reads it, and the mailboxes it can reach: those it hosts, those it opened from its
     * backend, and those whose route names it; on a shared backend (Redis, SQS) every routed mailbox, opened on
     * demand as a call would open it. A mailbox of a node-local backend (memory) that this node has not opened is
     * not shown: opening it here would make an empty one.
     *
     * @return the console's source for this node
     */
    public dev.mailbox.console.ConsoleSource consoleSource() {
        return new dev.mailbox.console.NodeConsoleSource(id, coordinator, new dev.mailbox.console.NodeConsoleSource
                .Mailboxes() {
            @Override
            public java.util.SortedSet<String> ids() {
                TreeSet<String> ids = new TreeSet<>(hosted.keySet());
                ids.addAll(opened.asMap().keySet());
                RoutingTable table = routes;
                MailboxBackend b = backend;
                if (table != null) {
                    for (dev.mailbox.coordination.Route r : table.routes().values()) {
                        boolean reachable = r.address().equals(address) || (b != null && b.shared());
                        if (reachable && !CoordinationLimits.namespaceOf(r.mailboxId())
                                .equals(CoordinationLimits.NODES_NAMESPACE)) {
                            ids.add(r.mailboxId());
                        }
                    }
                }
                return ids;
            }

            @Override
            public Optional<Mailbox<byte[]>> open(String mailboxId) {
                Mailbox<byte[]> m = hosted.get(mailboxId);
                if (m == null) {
                    m = opened.getIfPresent(mailboxId);
                }
                MailboxBackend b = backend;
                if (m == null && b != null && b.shared() && !closed) {
                    m = opened.get(mailboxId, id -> openChecked(b, id));
                }
                return Optional.ofNullable(m);
            }
        });
    }

    /** @return the ids of the mailboxes opened from the backend now, sorted */
    public Set<String> opened() {
        return new TreeSet<>(opened.asMap().keySet());
    }

    /** @return the addresses of the other nodes this node holds a channel to, for forwarding (for tests) */
    Set<String> peerAddresses() {
        return service.peerAddresses();
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

    /** @return the coordinator client the node registers with and takes routes from, or empty without one */
    public Optional<CoordinationClient> coordinator() {
        return Optional.ofNullable(coordinator);
    }

    /** @return the routing table copy, or empty without a coordinator */
    public Optional<RoutingTable> routingTable() {
        return Optional.ofNullable(routes);
    }

    /** @return the current registration lease, or empty while not registered */
    public Optional<Lease> registration() {
        return Optional.ofNullable(registration);
    }

    /** @return whether {@link #close} has been called */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Whether the cluster counts this node as up, as far as the node can tell: it has no coordinator (it serves
     * alone), or its registration was granted or renewed within the registration lease's TTL. A node whose
     * heartbeats have failed for longer than that may have been marked down by the coordinators, so callers are
     * no longer routed to it: a readiness probe should say so.
     *
     * @return whether the node is registered and its registration is fresh
     */
    public boolean registered() {
        if (coordinator == null) {
            return true;
        }
        Lease lease = registration;
        return lease != null && !closed && lease.state() == dev.mailbox.coordination.LeaseState.ACTIVE
                && System.nanoTime() - registeredNanos < TimeUnit.MILLISECONDS.toNanos(Math.max(1, lease.ttlMillis()));
    }

    /**
     * Stops serving: refuses new calls, waits briefly for calls under way, releases the leases of
     * published mailboxes and the node's registration (so it is down at once, not after its TTL), closes
     * the mailboxes it opened from its backend and the routing table. Does not close hosted mailboxes.
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
        // releases are a courtesy (unreleased leases expire): with the coordinators unreachable they must not
        // hold up a SIGTERM, so they get a bounded wait, all at once
        List<java.util.concurrent.CompletableFuture<Void>> releases = new ArrayList<>();
        published.values().forEach(k -> releases.add(java.util.concurrent.CompletableFuture.runAsync(k::close)));
        published.clear();
        Lease r = registration;
        if (coordinator != null && r != null) {
            CoordinationClient c = coordinator;
            releases.add(java.util.concurrent.CompletableFuture.runAsync(() -> c.leases().release(r)));
            registration = null;
        }
        try {
            java.util.concurrent.CompletableFuture.allOf(releases.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(RELEASE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.info("node {}: not every lease was released on close ({}); the rest expire", id, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
        opened.invalidateAll();
        opened.cleanUp();
        if (pool != null) {
            pool.shutdownNow();
            receivePool.shutdownNow();
            waitPool.shutdownNow();
        }
        if (routes != null) {
            routes.close();
        }
        meters.close();
    }

    private static java.util.concurrent.ThreadPoolExecutor fixedPool(int threads, String name) {
        java.util.concurrent.ThreadPoolExecutor p = new java.util.concurrent.ThreadPoolExecutor(threads, threads, 30,
                TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), daemon(name));
        p.allowCoreThreadTimeOut(true);
        return p;
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
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
        /** The settings this builder holds in its {@link Settings}. */
        private static final List<Setting<?>> SETTINGS = settingsList();
        private final Settings.Builder settings = Settings.builder(SETTINGS, Settings.Profile.LIBRARY);
        private @Nullable Settings values; // the settings as start() found them
        private MeterRegistry registry = Metrics.globalRegistry;
        private String version = "";
        private final List<String> capabilities = new ArrayList<>();
        private final Map<String, String> labels = new LinkedHashMap<>();
        private Duration registrationTtl = Duration.ZERO;
        private @Nullable MailboxBackend backend;
        private dev.mailbox.coordination.@Nullable TlsFiles tls;
        private @Nullable Access access;
        private dev.mailbox.coordination.ClientSecurity peerSecurity = dev.mailbox.coordination.ClientSecurity.none();
        private Duration peerIdleClose = Duration.ofMinutes(1);
        private final List<io.grpc.ServerInterceptor> interceptors = new ArrayList<>();
        private final List<io.grpc.ClientInterceptor> peerInterceptors = new ArrayList<>();

        private Builder(String id) {
            Objects.requireNonNull(id, "id");
            CoordinationLimits.require(CoordinationLimits.nodeIdProblem(id));
            this.id = id;
            settings.set(NodeKeys.ID, id);
        }

        private static List<Setting<?>> settingsList() {
            List<Setting<?>> all = new ArrayList<>(NodeKeys.ALL);
            all.add(SecurityKeys.REQUIRE_SECURITY);
            return List.copyOf(all);
        }

        /** @return the settings as {@link #start} found them */
        private Settings values() {
            return Objects.requireNonNull(values, "not started");
        }

        /** @return a setting's value as {@link #start} found it (one that has a default) */
        private <T> T get(Setting<T> setting) {
            return Objects.requireNonNull(values().get(setting), setting.name());
        }

        /**
         * Takes the settings a command line or a config file gave ({@code mailboxctl node start} does), and their
         * profile's defaults for the rest: the settings of {@link NodeKeys} and {@link SecurityKeys#REQUIRE_SECURITY}
         * that {@code given} holds, except the id, which this builder takes as its argument.
         *
         * @param given settings, checked (see {@link Settings.Builder#build})
         * @return this builder
         */
        public Builder settings(Settings given) {
            settings.profile(given.profile());
            for (Setting<?> s : SETTINGS) {
                if (s != NodeKeys.ID && given.settings().contains(s) && given.isSet(s)) {
                    copy(s, given);
                }
            }
            return this;
        }

        private <T> void copy(Setting<T> s, Settings from) {
            T value = from.get(s);
            if (value != null) {
                settings.set(s, value);
            }
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
         * @param address where to listen; default {@link NodeKeys#LISTEN}: 127.0.0.1 on a free port
         * @return this builder
         */
        public Builder listen(InetSocketAddress address) {
            settings.set(NodeKeys.LISTEN, address);
            return this;
        }

        /**
         * @param hostPort the address other nodes and clients use, if not the listening one
         * @return this builder
         */
        public Builder advertise(String hostPort) {
            settings.set(NodeKeys.ADVERTISE, Objects.requireNonNull(hostPort, "hostPort"));
            return this;
        }

        /**
         * @param registry where this node's meters go, tagged {@code node=<id>} (default Micrometer's global
         *                 registry); they are removed when the node closes
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Bounds the receives that may wait (long-poll) at once on this node; one past the bound is refused
         * at once with {@code RESOURCE_EXHAUSTED} naming the limit (a {@link RemoteMailbox} waits and retries,
         * as for a missing route). A waiting receive on a backend that can park it (memory, Redis) holds no
         * thread, only its call's memory (a few KB); on one that cannot (SQS), it holds a thread, and at most
         * {@value MailboxServiceImpl#MAX_BLOCKING_WAITS} such wait at once whatever this bound. Receives
         * forwarded to another node count there, not here.
         *
         * @param receives the most waiting receives, 1 to 1,000,000 (default {@link NodeKeys#MAX_WAITING_RECEIVES})
         * @return this builder
         * @throws IllegalArgumentException if it is out of range
         */
        public Builder maxWaitingReceives(int receives) {
            settings.set(NodeKeys.MAX_WAITING_RECEIVES, receives);
            return this;
        }

        /**
         * Lets the node open the mailboxes it should serve from a backend, on demand (see the class
         * documentation), besides those it is given with {@link MailboxNode#host}.
         *
         * @param backend where its mailboxes live
         * @return this builder
         */
        public Builder backend(MailboxBackend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
            return this;
        }

        /**
         * @param files serve the data plane over TLS with this certificate (and verify client certificates
         *              against the trusted CAs, required if the files say so)
         * @return this builder
         */
        public Builder tls(dev.mailbox.coordination.TlsFiles files) {
            this.tls = Objects.requireNonNull(files, "files");
            if (files.certificate() == null) {
                throw new IllegalArgumentException("a node's TLS needs a certificate and a key");
            }
            return this;
        }

        /**
         * @param access who may call this node and what they may do (default: anyone, anything); a forwarded
         *               call is checked as its original caller's
         * @return this builder
         */
        public Builder access(Access access) {
            this.access = Objects.requireNonNull(access, "access");
            return this;
        }

        /**
         * @param security how this node calls other nodes when it forwards (TLS, and its own certificate or
         *                 token: the owner believes whom it vouches for only if it has the node role)
         * @return this builder
         */
        public Builder peerSecurity(dev.mailbox.coordination.ClientSecurity security) {
            this.peerSecurity = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * Adds an interceptor to every data-plane call this node serves, such as {@code mailbox-opentelemetry}'s,
         * which makes each call a span in the caller's trace. It runs before the node's own (access, metrics):
         * the one added last runs first.
         *
         * @param interceptor a gRPC server interceptor
         * @return this builder
         */
        public Builder interceptor(io.grpc.ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * Adds an interceptor to every call this node makes to another when it forwards, such as
         * {@code mailbox-opentelemetry}'s, which carries the trace to the owner. The one added last runs first.
         *
         * @param interceptor a gRPC client interceptor
         * @return this builder
         */
        public Builder peerInterceptor(io.grpc.ClientInterceptor interceptor) {
            peerInterceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * @param require refuse to start without TLS and access rules when listening beyond loopback
         *                (default {@link SecurityKeys#REQUIRE_SECURITY}: off, start with a loud warning)
         * @return this builder
         */
        public Builder requireSecurity(boolean require) {
            settings.set(SecurityKeys.REQUIRE_SECURITY, require);
            return this;
        }

        /**
         * @param idle how long a mailbox opened from a shared backend stays open without a call (default
         *             {@link NodeKeys#IDLE_CLOSE}); one opened from a node-local backend ({@link MailboxBackend#shared()}
         *             false) holds its messages in its object, and stays open until the node closes
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder idleClose(Duration idle) {
            settings.set(NodeKeys.IDLE_CLOSE, Objects.requireNonNull(idle, "idle"));
            return this;
        }

        /**
         * @param idle how long a channel to another node may go without a call before it is closed (default 1
         *             minute); a node whose address changed is called no more at the old one (for tests)
         * @return this builder
         */
        Builder peerIdleClose(Duration idle) {
            if (idle.isNegative() || idle.isZero()) {
                throw new IllegalArgumentException("peerIdleClose must be positive, was " + idle);
            }
            this.peerIdleClose = idle;
            return this;
        }

        /**
         * @param region placement hint (default {@link NodeKeys#REGION}: none)
         * @return this builder
         */
        public Builder region(String region) {
            settings.set(NodeKeys.REGION, Objects.requireNonNull(region, "region"));
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
            this.registrationTtl = ttl.isZero() ? ttl : CoordinationLimits.requireTtl(ttl);
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
            this.values = settings.build();
            return new MailboxNode(this);
        }

        /** @return the settings an untouched builder starts with, as {@link #start} would find them (for tests) */
        Settings settingsForStart() {
            return settings.build();
        }
    }
}
