package dev.mailbox.coordination;

import dev.mailbox.coordination.internal.ControlPlaneService;
import dev.mailbox.coordination.internal.LeaseStateMachine;
import dev.mailbox.coordination.internal.LeaseTable;
import dev.mailbox.coordination.internal.RaftGateway;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.function.Function;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One coordinator node: an embedded Ratis server (gRPC transport, data on disk) holding the replicated
 * lease table, the grpc-java {@code ControlPlane} service that runners, nodes and {@code mailboxctl}
 * call, and the sweeper that expires leases while this node leads.
 *
 * <p>Run one node alone (standalone) or 3 or 5 with the same peer list. Any node accepts any call:
 * while it leads it serves it itself, otherwise it forwards writes and leader reads to the leader. A
 * restarted node recovers from its latest snapshot and the log after it; snapshots are taken
 * automatically every {@link Builder#snapshotEvery} entries. It binds its Raft server to its address in
 * the peer list and its control plane to {@link Builder#controlPlane} (127.0.0.1 on a free port unless
 * told otherwise).
 *
 * <p>Renewals never touch the log: the leader checks them against the table and pushes the lease's
 * deadline back in memory, and serves them only while its Raft leader lease holds, so a deposed leader
 * cannot renew. A node that becomes leader gives every active lease a full TTL plus grace from that
 * moment, so a change of leader never expires a lease early.
 */
public final class CoordinatorNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorNode.class);
    private static final long SWEEP_MILLIS = 50;

    private final String id;
    private final RaftGroup group;
    private final RaftServer server;
    private final LeaseStateMachine stateMachine;
    private final RaftGateway gateway;
    private final Server controlPlane;
    private final ScheduledExecutorService sweeper;
    private final dev.mailbox.coordination.internal.Metrics metrics = new dev.mailbox.coordination.internal.Metrics();
    private final @Nullable InetSocketAddress metricsAddress;
    private long leaderTerm = -1; // the term in which this node last reset deadlines as leader; sweeper thread only

    private CoordinatorNode(Builder b) throws IOException {
        this.id = b.id;
        this.group = group(b.cluster, b.peers);
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(b.dataDir.toFile()));
        InetSocketAddress self = b.peers.get(b.id);
        GrpcConfigKeys.Server.setHost(p, self.getHostString());
        GrpcConfigKeys.Server.setPort(p, self.getPort());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(b.electionTimeout.toMillis(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(b.electionTimeout.toMillis() * 2, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, b.snapshotEvery);
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        // the log before a snapshot is dropped, so a restart really starts from the snapshot
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        // plain read-only requests are linearizable (read index); renewals and leader reads ask for less
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // ...and the leader answers them from its own state while its lease (a fraction of the shortest
        // election timeout since a quorum last acknowledged it) holds: renewals without a round trip
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, true);
        this.stateMachine = new LeaseStateMachine();
        // a data dir that already holds this group is recovered (log + snapshot), never formatted
        boolean existing = java.nio.file.Files.isDirectory(b.dataDir.resolve(group.getGroupId().getUuid().toString()));
        this.server = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(b.id)).setGroup(group)
                .setStateMachine(stateMachine).setProperties(p)
                .setOption(existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT).build();
        server.start();
        this.gateway = new RaftGateway(server, group);
        this.controlPlane = NettyServerBuilder.forAddress(b.controlPlane)
                .addService(io.grpc.ServerInterceptors.intercept(new ControlPlaneService(new ServiceView(), gateway, b.maxWatchBacklog),
                        metrics.interceptor("mailbox.controlplane.requests"))).build();
        try {
            controlPlane.start();
        } catch (IOException e) {
            gateway.close();
            server.close();
            throw e;
        }
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "coordinator-sweeper-" + b.id);
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        registerGauges();
        this.metricsAddress = b.metrics == null ? null : metrics.serve(b.metrics);
    }

    private void registerGauges() {
        io.micrometer.core.instrument.MeterRegistry r = metrics.registry();
        for (String role : List.of("LEADER", "FOLLOWER", "CANDIDATE")) {
            io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.raft.role", this,
                    n -> n.role().equals(role) ? 1 : 0).tag("role", role)
                    .description("1 for the role this node is in").register(r);
        }
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.raft.term", this, CoordinatorNode::term)
                .register(r);
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.raft.applied.index", this,
                CoordinatorNode::appliedIndex).register(r);
        for (LeaseState state : LeaseState.values()) {
            io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.leases", stateMachine,
                    sm -> sm.readTable(t -> t.leases().stream().filter(l -> l.state() == state
                            && !l.namespace().equals(NodeInfo.NAMESPACE)).count())).tag("state", state.name())
                    .register(r);
        }
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.routes", stateMachine,
                sm -> sm.readTable(t -> t.routes().size())).register(r);
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.routes.revision", stateMachine,
                sm -> sm.readTable(LeaseTable::routesRevision)).register(r);
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.route.watchers", stateMachine,
                LeaseStateMachine::routeWatchers).register(r);
        io.micrometer.core.instrument.Gauge.builder("mailbox.coordinator.nodes.up", stateMachine,
                sm -> sm.readTable(t -> t.nodes().stream().filter(NodeInfo::up).count())).register(r);
    }

    /** @return where {@code /metrics} is served, or empty if it is not */
    public java.util.Optional<InetSocketAddress> metricsAddress() {
        return java.util.Optional.ofNullable(metricsAddress);
    }

    /** @return this node's metrics in Prometheus text format */
    public String scrapeMetrics() {
        return metrics.scrape();
    }

    /**
     * @param nodeId this node's id; must be a key of the peer list
     * @return a builder
     */
    public static Builder builder(String nodeId) {
        return new Builder(nodeId);
    }

    /**
     * The Raft group of a cluster: a group id derived from the cluster's name, and its peers.
     *
     * @param cluster the cluster's name
     * @param peers   node id to address
     * @return the group
     */
    public static RaftGroup group(String cluster, Map<String, InetSocketAddress> peers) {
        List<RaftPeer> list = new ArrayList<>();
        peers.forEach((id, address) -> list.add(RaftPeer.newBuilder().setId(id)
                .setAddress(address.getHostString() + ":" + address.getPort()).build()));
        UUID uuid = UUID.nameUUIDFromBytes(("mailbox-coordination:" + cluster).getBytes(StandardCharsets.UTF_8));
        return RaftGroup.valueOf(RaftGroupId.valueOf(uuid), list);
    }

    /** @return this node's id */
    public String id() {
        return id;
    }

    /** @return the Raft group this node belongs to */
    public RaftGroup raftGroup() {
        return group;
    }

    /** @return whether this node leads the cluster now (and has committed an entry in its term) */
    public boolean isLeader() {
        DivisionInfo info = info();
        return info != null && info.isLeader() && info.isLeaderReady();
    }

    /** @return the leader this node knows of, or null */
    public @Nullable String leaderId() {
        DivisionInfo info = info();
        RaftPeerId leader = info == null ? null : info.getLeaderId();
        return leader == null ? null : leader.toString();
    }

    /** @return the current Raft term as this node sees it */
    public long term() {
        DivisionInfo info = info();
        return info == null ? -1 : info.getCurrentTerm();
    }

    /** @return the index of the last entry this node applied */
    public long appliedIndex() {
        DivisionInfo info = info();
        return info == null ? -1 : info.getLastAppliedIndex();
    }

    /**
     * @return a copy of this node's lease table (what it has applied so far)
     */
    public LeaseTable table() {
        return stateMachine.snapshotTable();
    }

    /**
     * Takes a snapshot now.
     *
     * @return the index it covers, or -1 if there was nothing to snapshot
     */
    public long takeSnapshot() {
        try {
            return stateMachine.takeSnapshot();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private @Nullable DivisionInfo info() {
        try {
            return server.getDivision(group.getGroupId()).getInfo();
        } catch (IOException e) {
            return null;
        }
    }

    private void sweep() {
        try {
            DivisionInfo info = info();
            if (info == null || !info.isLeader() || !info.isLeaderReady()) {
                leaderTerm = -1;
                return;
            }
            long term = info.getCurrentTerm();
            if (term != leaderTerm) {
                // new leadership: every active lease gets a full TTL plus grace from now
                stateMachine.resetDeadlines();
                leaderTerm = term;
                return;
            }
            for (var expire : stateMachine.dueExpiries(System.nanoTime(), term)) {
                // never forwarded: if this node no longer leads, its deadlines are not the ones that count
                gateway.writeHere(expire).whenComplete((o, e) -> {
                    if (e != null) {
                        stateMachine.expiryFailed(expire.mailboxId(), expire.leaseId());
                    } else if (o.isOk()) {
                        LOG.info("lease {} of mailbox '{}' expired (epoch {})", expire.leaseId(), expire.mailboxId(),
                                expire.epoch());
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("lease sweep on {} failed", id, e);
        }
    }

    /** @return where this node's control plane listens */
    public InetSocketAddress controlPlaneAddress() {
        return (InetSocketAddress) controlPlane.getListenSockets().get(0);
    }

    /** Stops the control plane, the sweeper and the Raft server. */
    @Override
    public void close() {
        controlPlane.shutdownNow();
        sweeper.shutdownNow();
        metrics.close();
        gateway.close();
        try {
            server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Builds and starts a {@link CoordinatorNode}. */
    public static final class Builder {
        private final String id;
        private String cluster = "default";
        private final Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        private @Nullable Path dataDir;
        private Duration electionTimeout = Duration.ofMillis(300);
        private long snapshotEvery = 10_000;
        private int maxWatchBacklog = 1_000;
        private InetSocketAddress controlPlane = new InetSocketAddress("127.0.0.1", 0);
        private @Nullable InetSocketAddress metrics;

        /**
         * @param address where to serve Prometheus metrics at {@code /metrics} (raft role, term, applied
         *                index, leases by state, routes, control-plane request counts and latencies);
         *                default: not served
         * @return this builder
         */
        public Builder metrics(InetSocketAddress address) {
            this.metrics = Objects.requireNonNull(address, "address");
            return this;
        }

        private Builder(String id) {
            Objects.requireNonNull(id, "nodeId");
            if (id.isBlank()) {
                throw new IllegalArgumentException("node id must not be blank");
            }
            this.id = id;
        }

        /**
         * @param cluster the cluster's name (all nodes of a cluster use the same; default "default")
         * @return this builder
         */
        public Builder cluster(String cluster) {
            this.cluster = Objects.requireNonNull(cluster, "cluster");
            return this;
        }

        /**
         * @param nodeId  a node of the cluster (this one included)
         * @param address where its Raft server listens
         * @return this builder
         */
        public Builder peer(String nodeId, InetSocketAddress address) {
            peers.put(Objects.requireNonNull(nodeId, "nodeId"), Objects.requireNonNull(address, "address"));
            return this;
        }

        /**
         * @param peers node id to Raft address, this node included
         * @return this builder
         */
        public Builder peers(Map<String, InetSocketAddress> peers) {
            peers.forEach(this::peer);
            return this;
        }

        /**
         * @param dataDir where the log and snapshots live
         * @return this builder
         */
        public Builder dataDir(Path dataDir) {
            this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
            return this;
        }

        /**
         * @param timeout the shortest election timeout (the longest is twice it; default 300 ms)
         * @return this builder
         */
        public Builder electionTimeout(Duration timeout) {
            if (timeout.toMillis() < 50) {
                throw new IllegalArgumentException("electionTimeout must be at least 50 ms, was " + timeout);
            }
            this.electionTimeout = timeout;
            return this;
        }

        /**
         * @param entries take a snapshot after this many log entries (default 10,000)
         * @return this builder
         */
        public Builder snapshotEvery(long entries) {
            if (entries < 1) {
                throw new IllegalArgumentException("snapshotEvery must be 1 or more, was " + entries);
            }
            this.snapshotEvery = entries;
            return this;
        }

        /**
         * Bounds what a route watcher that stopped reading can cost this node. When more than this many
         * route changes were queued for a watcher while its stream could not take them, the node ends that
         * watch with {@code RESOURCE_EXHAUSTED}; a {@link RoutingTable} then reconnects and resumes from
         * the last revision it applied. The snapshot or catch-up a watch starts with is not counted.
         *
         * @param changes the most changes queued for one stalled watcher (default 1,000)
         * @return this builder
         */
        public Builder maxWatchBacklog(int changes) {
            if (changes < 1) {
                throw new IllegalArgumentException("maxWatchBacklog must be 1 or more, was " + changes);
            }
            this.maxWatchBacklog = changes;
            return this;
        }

        /**
         * @param address where the grpc-java control plane listens (default 127.0.0.1 on a free port)
         * @return this builder
         */
        public Builder controlPlane(InetSocketAddress address) {
            this.controlPlane = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * Starts the node.
         *
         * @return the running node
         * @throws IllegalStateException if the peer list does not name this node, or there is no data dir
         * @throws UncheckedIOException  if the server cannot start
         */
        public CoordinatorNode start() {
            if (!peers.containsKey(id)) {
                throw new IllegalStateException("the peer list " + peers.keySet() + " does not include this node '" + id + "'");
            }
            if (dataDir == null) {
                throw new IllegalStateException("dataDir(...) is required");
            }
            try {
                return new CoordinatorNode(this);
            } catch (IOException e) {
                throw new UncheckedIOException("coordinator node '" + id + "' could not start: " + e.getMessage(), e);
            }
        }
    }

    /** @return how many routing table watchers this node streams to */
    int routeWatchers() {
        return stateMachine.routeWatchers();
    }

    /** @return LEADER, FOLLOWER, CANDIDATE or UNKNOWN, as this node sees itself */
    public String role() {
        DivisionInfo info = info();
        return info == null ? "UNKNOWN" : info.getCurrentRole().name();
    }

    /** What the control plane sees of this node. */
    private final class ServiceView implements ControlPlaneService.Node {
        @Override
        public String id() {
            return id;
        }

        @Override
        public @Nullable String leaderId() {
            return CoordinatorNode.this.leaderId();
        }

        @Override
        public String role() {
            return CoordinatorNode.this.role();
        }

        @Override
        public long term() {
            return CoordinatorNode.this.term();
        }

        @Override
        public long appliedIndex() {
            return CoordinatorNode.this.appliedIndex();
        }

        @Override
        public List<String[]> members() {
            List<String[]> out = new ArrayList<>();
            group.getPeers().forEach(p -> out.add(new String[] {p.getId().toString(), p.getAddress()}));
            return out;
        }

        @Override
        public <R> R readLocal(Function<LeaseTable, R> read) {
            return stateMachine.readTable(read);
        }

        @Override
        public Runnable watchRoutes(long fromRevision, dev.mailbox.coordination.internal.RouteHub.Sink sink) {
            return stateMachine.watchRoutes(fromRevision, sink);
        }
    }

    /** @return the node ids of the cluster */
    public List<String> peerIds() {
        List<String> ids = new ArrayList<>();
        group.getPeers().forEach(p -> ids.add(p.getId().toString()));
        return Collections.unmodifiableList(ids);
    }
}
