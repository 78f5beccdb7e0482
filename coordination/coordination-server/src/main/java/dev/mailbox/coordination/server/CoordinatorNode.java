package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.coordination.proto.state.Query;
import dev.mailbox.coordination.server.internal.AccessPolicy;
import dev.mailbox.coordination.server.internal.Caller;
import dev.mailbox.coordination.server.internal.ControlPlaneService;
import dev.mailbox.coordination.server.internal.Guard;
import dev.mailbox.coordination.server.internal.Faults;
import dev.mailbox.coordination.server.internal.Health;
import dev.mailbox.coordination.server.internal.LeaseStateMachine;
import dev.mailbox.coordination.server.internal.LeaseTable;
import dev.mailbox.coordination.server.internal.Membership;
import dev.mailbox.coordination.server.internal.Meters;
import dev.mailbox.coordination.server.internal.PrivateFiles;
import dev.mailbox.coordination.server.internal.RaftEvents;
import dev.mailbox.coordination.server.internal.RaftGateway;
import dev.mailbox.coordination.server.internal.RouteHub;
import dev.mailbox.coordination.server.internal.Serving;
import dev.mailbox.coordination.server.internal.StateDigest;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
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
 * restarted node recovers from its latest snapshot and the log after it (of this format or any older
 * one); snapshots are taken automatically every {@link Builder#snapshotEvery} entries. It binds its Raft
 * server to its address in the peer list and its control plane to {@link Builder#controlPlane}
 * (127.0.0.1 on a free port unless told otherwise).
 *
 * <p>Renewals never touch the log: the leader checks them against the table and pushes the lease's
 * deadline back in memory, and serves them only while its Raft leader lease holds, so a deposed leader
 * cannot renew. A node that becomes leader gives every active lease a full TTL plus grace from that
 * moment, so a change of leader never expires a lease early.
 *
 * <p>Metrics go to the {@link Builder#meterRegistry} the application gives it, tagged
 * {@code coordinator=<id>}: Raft role, term, applied, commit and last log index, cluster size, leader
 * changes seen, commit latency (a histogram: from the leader taking a write to applying it), snapshots
 * taken, their duration and failures, the latest snapshot's index and the entries since it, the leader's
 * view of each follower's lag, leases by state, routes, route watchers, nodes up, and a timer (with a
 * histogram) per control-plane method and status. {@code ops/prometheus/mailbox-coordinator-alerts.yml}
 * holds alert rules over them. A change of this node's Raft role is logged with its term, as key-values
 * ({@code raft state transition}: node_id, from, to, term).
 */
public final class CoordinatorNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorNode.class);
    private static final long SWEEP_MILLIS = 50;
    /** The largest control-plane request: a chunk of a backup being imported, with room for its envelope. */
    static final int MAX_REQUEST_BYTES = CoordinationLimits.MAX_IMPORT_CHUNK_BYTES + (1 << 20);
    /** What one batch of entries to a follower, and the log's write buffer, may hold: the largest entry, and more. */
    static final int RAFT_BATCH_BYTES = 4 << 20;
    /** Append requests the leader has in flight to one follower (see {@link #properties}). */
    static final int RAFT_APPENDS_IN_FLIGHT = 1;
    /** How much of closed log files' entries a node keeps in memory (besides the open file's). */
    static final long LOG_CACHE_BYTES = 16L << 20;
    /** How much waits for the log, and how much for the leader, before more is refused. */
    static final long PENDING_BYTES = 16L << 20;
    /** About a second: how often the data dir's permissions are tightened again. */
    private static final int TIGHTEN_EVERY_SWEEPS = 20;
    /** Room Ratis takes at once for a log segment (its default, said here so the probe below matches it). */
    private static final int LOG_PREALLOCATION_BYTES = 256 << 10;
    /** How much a data dir must take before a node whose log failed tries its Raft server again. */
    private static final int SPACE_PROBE_BYTES = LOG_PREALLOCATION_BYTES + (1 << 20);
    private static final long PROBE_MILLIS = 1_000;

    private final String id;
    private final Duration electionTimeoutMax;
    private final RaftGroup group;
    private final Path dataDir;
    private final RaftProperties properties;
    private final org.apache.ratis.conf.Parameters parameters;
    private final RaftGateway gateway;
    private final dev.mailbox.coordination.server.internal.LeadershipCheck leadershipCheck;
    private final Server controlPlane;
    private final ScheduledExecutorService sweeper;
    private final dev.mailbox.coordination.server.internal.ElectionWatch electionWatch;
    private final Meters meters;
    private final NodeHealth health = new NodeHealth();
    private final NodeEvents events;
    private final Consumer<Throwable> onFatal;
    private volatile Raft raft;
    private volatile boolean closed;
    private long leaderTerm = -1; // the term in which this node last reset deadlines as leader; sweeper thread only
    private String seenRole = "STARTING"; // the role last seen, for the transition log; sweeper thread only (after start)
    private final long snapshotEvery;

    /** A running Ratis server and its state machine; replaced when the node restarts it after a log failure. */
    private record Raft(RaftServer server, LeaseStateMachine stateMachine) {
    }

    /** Why the node does not serve: its log failed (it recovers by itself), or a fatal error (it does not). */
    private record Fault(boolean fatal, String message) {
    }

    private CoordinatorNode(Builder b, Path dataDir) throws IOException {
        Security.check("coordinator " + b.id, b.tls != null, b.access != null, b.get(SecurityKeys.REQUIRE_SECURITY),
                b.get(CoordinatorKeys.CONTROL_PLANE), b.raftBind());
        this.id = b.id;
        this.electionTimeoutMax = b.get(CoordinatorKeys.ELECTION_TIMEOUT_MAX);
        this.dataDir = dataDir;
        this.onFatal = b.onFatal;
        this.group = RaftGateway.group(b.get(CoordinatorKeys.CLUSTER), b.peers);
        this.meters = new Meters(b.registry, Tag.of("coordinator", b.id));
        this.events = new NodeEvents();
        this.snapshotEvery = b.get(CoordinatorKeys.SNAPSHOT_EVERY);
        this.properties = properties(b, dataDir);
        this.parameters = RaftGateway.parameters(b.tls);
        this.leadershipCheck = new dev.mailbox.coordination.server.internal.LeadershipCheck(
                () -> raft == null ? null : raft.server(), group, parameters,
                Math.max(b.get(CoordinatorKeys.ELECTION_TIMEOUT_MAX).toMillis(), 1_000));
        // the whole replicated state is in there: the owner's alone (issue 30, finding 7)
        PrivateFiles.directory(dataDir);
        removeStaleExports(dataDir.resolve(EXPORTS_DIR));
        // a data dir that already holds this group is recovered (log + snapshot), never formatted
        boolean existing = Files.isRegularFile(dataDir.resolve(group.getGroupId().getUuid().toString())
                .resolve("current").resolve("raft-meta"));
        RaftGroup bootstrap = existing ? group : emptyStart(b, dataDir);
        this.raft = startRaft(bootstrap, existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT);
        PrivateFiles.tighten(raftDir()); // what Ratis created with the process's umask
        this.gateway = new RaftGateway(raft.server(), group, parameters);
        logTransition(); // the role it starts in, before an election could make it leader (the sweeper goes on)
        NettyServerBuilder cp = NettyServerBuilder.forAddress(b.get(CoordinatorKeys.CONTROL_PLANE))
                // the largest request is one chunk of a backup being imported (backups travel in chunks)
                .maxInboundMessageSize(MAX_REQUEST_BYTES);
        if (b.tls != null) {
            cp.sslContext(dev.mailbox.coordination.internal.Tls.serverContext(b.tls));
        }
        AccessPolicy policy = b.access == null ? null : b.access.policy();
        // interceptors run last-added first: who is calling, then may they, then the service's own checks
        List<io.grpc.ServerInterceptor> chain = new ArrayList<>(List.of(new Faults(health), new Serving(id, health)));
        if (policy != null) {
            chain.add(new Guard(policy, this::localLease, this::isLeader));
        }
        chain.add(new Caller(policy));
        chain.add(meters.callTimer("mailbox.controlplane.requests"));
        chain.addAll(b.interceptors); // the builder's run first: a trace's span covers the node's own checks too
        this.controlPlane = cp.addService(ServerInterceptors.intercept(new ControlPlaneService(new ServiceView(),
                gateway, b.maxWatchBacklog, readDefaults(b.get(CoordinatorKeys.READ_CONSISTENCY))), chain)).build();
        try {
            controlPlane.start();
        } catch (IOException e) {
            gateway.close();
            raft.server().close();
            throw e;
        }
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "coordinator-sweeper-" + b.id);
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        // a follower stands as soon as its leader was silent for its timeout (Ratis's timer alone: up to twice that)
        this.electionWatch = new dev.mailbox.coordination.server.internal.ElectionWatch(id,
                b.get(CoordinatorKeys.ELECTION_TIMEOUT_MIN).toMillis(), b.get(CoordinatorKeys.ELECTION_TIMEOUT_MAX).toMillis());
        electionWatch.start(new dev.mailbox.coordination.server.internal.ElectionWatch.Follower() {
            @Override
            public org.apache.ratis.server.impl.MailboxFollowerProbe.Silence silence() {
                RaftServer.Division d = divisionOrNull();
                return d == null ? null : org.apache.ratis.server.impl.MailboxFollowerProbe.silence(d);
            }

            @Override
            public boolean stand(org.apache.ratis.server.impl.MailboxFollowerProbe.Silence read) {
                RaftServer.Division d = divisionOrNull();
                return d != null && org.apache.ratis.server.impl.MailboxFollowerProbe.stand(d, read);
            }
        });
        registerGauges();
        if (rejoin) {
            addSelfBack(b.peers.get(b.id));
        }
    }

    private static RaftProperties properties(Builder b, Path dataDir) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(dataDir.toFile()));
        InetSocketAddress self = b.raftBind();
        GrpcConfigKeys.Server.setHost(p, self.getHostString());
        GrpcConfigKeys.Server.setPort(p, self.getPort());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(b.get(CoordinatorKeys.ELECTION_TIMEOUT_MIN)));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(b.get(CoordinatorKeys.ELECTION_TIMEOUT_MAX)));
        RaftServerConfigKeys.Rpc.setRequestTimeout(p, millis(b.get(CoordinatorKeys.RAFT_REQUEST_TIMEOUT)));
        RaftServerConfigKeys.LeaderElection.setPreVote(p, b.get(CoordinatorKeys.PRE_VOTE));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, b.get(CoordinatorKeys.SNAPSHOT_EVERY));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, b.get(CoordinatorKeys.SNAPSHOT_RETENTION));
        // the log before a snapshot is dropped, so a restart really starts from the snapshot
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPreallocatedSize(p,
                org.apache.ratis.util.SizeInBytes.valueOf(Math.min(LOG_PREALLOCATION_BYTES, b.get(CoordinatorKeys.LOG_SEGMENT_BYTES))));
        // a snapshot deletes the closed segments before it, and only once it is this many entries past the last
        // deletion (Ratis's default, 1,024, would keep the whole log of a cluster that snapshots more often)
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, org.apache.ratis.util.SizeInBytes.valueOf(b.get(CoordinatorKeys.LOG_SEGMENT_BYTES)));
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(1_024, b.get(CoordinatorKeys.SNAPSHOT_EVERY)));
        // memory, bounded by design rather than by the heap (docs/operations-hardening.md, "Memory"): the largest
        // entry is a chunk of an imported backup (1 MiB); Ratis wants its write buffer (a direct buffer per node)
        // and each batch it sends a follower to hold the largest entry
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, org.apache.ratis.util.SizeInBytes.valueOf(
                RAFT_BATCH_BYTES));
        RaftServerConfigKeys.Log.setWriteBufferSize(p, org.apache.ratis.util.SizeInBytes.valueOf(
                RAFT_BATCH_BYTES + (1 << 10))); // Ratis wants it above the batch limit
        // entries kept in memory: the open log file's, and at most this much of closed ones (Ratis's default,
        // 200 MB, was most of a small heap)
        RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, org.apache.ratis.util.SizeInBytes.valueOf(
                LOG_CACHE_BYTES));
        // writes waiting for the log, and requests waiting for the leader: beyond these, Ratis refuses more (the
        // caller retries) instead of queueing them in memory
        RaftServerConfigKeys.Log.setQueueByteLimit(p, org.apache.ratis.util.SizeInBytes.valueOf(PENDING_BYTES));
        RaftServerConfigKeys.Write.setByteLimit(p, org.apache.ratis.util.SizeInBytes.valueOf(PENDING_BYTES));
        // a snapshot sent to a follower travels in pieces of this size (Ratis's default: 16 MB each)
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(p, org.apache.ratis.util.SizeInBytes.valueOf(
                CoordinationLimits.MAX_IMPORT_CHUNK_BYTES));
        // plain read-only requests are linearizable (read index); renewals and leader reads ask for less
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // ...and the leader answers them from its own state while its lease (a fraction of the shortest
        // election timeout since a quorum last acknowledged it) holds: renewals without a round trip
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, true);
        RaftServerConfigKeys.Read.setLeaderLeaseTimeoutRatio(p, b.get(CoordinatorKeys.LEADER_LEASE_RATIO));
        // one append request in flight to each follower, not Ratis's 8. A Ratis 3.1.3 follower adds a request's
        // entries to its log only once the previous request's entries are flushed (RATIS-2235), and checks each
        // request's previous entry against its log as the request arrives, so with more than one request in
        // flight the third finds a gap whenever the follower's disk is slower than the stream of writes and is
        // answered INCONSISTENCY (fixed in Ratis 3.2.0, RATIS-2242). The leader then winds the follower's next
        // index back while later requests are still in flight, sends entries again, and can race itself into
        // "Failed to updateIncreasingly for nextIndex", which kills its log appender (restarted by Ratis). Issue 33
        // measured 82 to 6,285 such replies and 8 to 15 restarts a run under write load; with one request in
        // flight there is no gap to find, and nothing is lost: the follower flushes one request at a time anyway,
        // and the leader sends whatever accumulated meanwhile in the next one (benchmarks/results/mrenew.md: how to measure it)
        GrpcConfigKeys.Server.setLeaderOutstandingAppendsMax(p, RAFT_APPENDS_IN_FLIGHT);
        // a follower that falls behind by less than a snapshot's worth of entries catches up from the log, not by
        // receiving the whole state (tens of MB at 100,000 leases): purging keeps that many entries before the last
        RaftServerConfigKeys.Log.setPurgePreservationLogNum(p, b.get(CoordinatorKeys.SNAPSHOT_EVERY));
        return p;
    }

    private static Map<String, dev.mailbox.coordination.proto.Consistency> readDefaults(
            List<Map.Entry<ReadOperation, dev.mailbox.coordination.ReadConsistency>> reads) {
        Map<String, dev.mailbox.coordination.proto.Consistency> out = new LinkedHashMap<>();
        // in the order given: a later choice for the same read wins
        reads.forEach(e -> out.put(e.getKey().key(), dev.mailbox.coordination.internal.Protos.toProto(e.getValue())));
        return out;
    }

    private static TimeDuration millis(Duration d) {
        return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
    }

    private Raft startRaft(RaftGroup bootstrap, RaftStorage.StartupOption option) throws IOException {
        LeaseStateMachine stateMachine = new LeaseStateMachine(health, events);
        stateMachine.useLeadershipCheck(leadershipCheck);
        RaftServer server = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(id)).setGroup(bootstrap)
                .setStateMachine(stateMachine).setProperties(properties).setParameters(parameters).setOption(option)
                .build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            server.close();
            IOException named = logProblem(e);
            if (named != null) {
                throw named;
            }
            throw e;
        }
        return new Raft(server, stateMachine);
    }

    /**
     * When Ratis could not load the log, which segment is damaged and what to do: Ratis says only "Failed to
     * initRaftLog" (issue 30, finding 7). Null for any other failure.
     */
    private @Nullable IOException logProblem(Exception e) {
        boolean logFailed = false;
        for (Throwable t = e; t != null && !logFailed; t = t.getCause() == t ? null : t.getCause()) {
            logFailed = String.valueOf(t.getMessage()).contains("initRaftLog")
                    || t instanceof org.apache.ratis.protocol.exceptions.ChecksumException;
        }
        if (!logFailed) {
            return null;
        }
        Path logDir = dataDir.resolve(group.getGroupId().getUuid().toString()).resolve("current");
        org.apache.ratis.server.raftlog.segmented.MailboxSegmentCheck.Damage damage =
                org.apache.ratis.server.raftlog.segmented.MailboxSegmentCheck.firstDamaged(logDir, MAX_ENTRY_BYTES);
        String what = damage != null
                ? "Raft log segment " + damage.file() + " is damaged (" + damage.why() + ")"
                : "the Raft log in " + logDir + " cannot be read (" + rootMessage(e) + ")";
        return new IOException(what + LeaseStateMachine.RECOVERY, e);
    }

    /** The largest log entry a coordinator has written: an imported backup's (format 3 to 6), with room. */
    private static final long MAX_ENTRY_BYTES = 64L << 20;

    /**
     * Decides how a node with an empty data dir starts. A new cluster's first start bootstraps it with the
     * configured peers. A node told the cluster exists asks the peers first: if they still count it as a
     * member, its data was lost (or wiped), and letting it vote with an empty log could let it and one stale
     * peer form a majority that never saw acknowledged writes, so it refuses; if they do not, it starts
     * empty, waiting to be added (add-member), and the leader copies it the state.
     */
    private RaftGroup emptyStart(Builder b, Path dataDir) throws IOException {
        java.util.Optional<Membership.View> view = Membership.probe(group.getGroupId(), b.peers, b.id,
                RaftGateway.parameters(b.tls));
        if (b.get(CoordinatorKeys.INITIAL_CLUSTER_STATE) == ClusterState.NEW) {
            if (view.isPresent() && !view.get().members().contains(b.id) && !view.get().members().isEmpty()) {
                throw new IOException("cluster '" + b.get(CoordinatorKeys.CLUSTER) + "' already exists without this node ("
                        + view.get().from() + " reports members " + view.get().members() + "): to join it, start "
                        + "with the existing cluster state and add this node (mailboxctl cluster add-member "
                        + b.id + "=" + address(b.peers.get(b.id)) + ")");
            }
            if (view.isPresent() && view.get().members().contains(b.id) && view.get().heardFromSelf()) {
                // a member that never ran has reported nothing (peers started a moment earlier, as when a new
                // cluster's members start one after another); one the cluster has heard from has lost its data
                throw new IOException("coordinator " + b.id + " has an empty data dir " + dataDir + " and is told to "
                        + "start a new cluster, but " + view.get().from() + " reports that cluster '" + b.get(CoordinatorKeys.CLUSTER)
                        + "' exists with this node as a member that has taken part (it acknowledged entries up to "
                        + view.get().selfCommitted() + "; commit index " + view.get().committed() + "): its data was "
                        + "lost, and it must not vote as if it had none. If that is so, start it with the initial "
                        + "cluster state replace (mailboxctl coordinator start --initial-cluster-state replace): it has "
                        + "the cluster remove it, starts empty and has itself added back, and the leader copies it the "
                        + "state. Or by hand: mailboxctl cluster remove-member " + b.id + ", start it with the existing "
                        + "cluster state, then mailboxctl cluster add-member " + b.id + "=" + address(b.peers.get(b.id))
                        + " (see docs/operations-hardening.md)");
            }
            if (view.isPresent() && view.get().members().contains(b.id) && view.get().committed() > 0) {
                LOG.warn("coordinator {} starts a new cluster with an empty data dir {}; {} reports that cluster '{}' "
                        + "exists with this node as a member (commit index {}) that none of the members that answered "
                        + "has heard from: a member starting for the first time. If this node had been running, its "
                        + "data was lost: stop it now and start it with the initial cluster state replace", b.id,
                        dataDir, view.get().from(), b.get(CoordinatorKeys.CLUSTER), view.get().committed());
            }
            return group;
        }
        if (b.get(CoordinatorKeys.INITIAL_CLUSTER_STATE) == ClusterState.REPLACE) {
            return replaceStart(b, dataDir, view);
        }
        if (view.isEmpty()) {
            throw new IOException("coordinator " + b.id + " has an empty data dir " + dataDir + " and is told cluster '"
                    + b.get(CoordinatorKeys.CLUSTER) + "' exists, but no other member answers at " + b.peers + ": start a majority of "
                    + "the others first");
        }
        if (view.get().members().contains(b.id)) {
            throw new IOException("coordinator " + b.id + " has an empty data dir " + dataDir + ", but " + view.get().from()
                    + " reports that cluster '" + b.get(CoordinatorKeys.CLUSTER) + "' still counts it as a member (members "
                    + view.get().members() + ", commit index " + view.get().committed() + "): its data was lost, "
                    + "and it must not vote as if it had none. Remove it (mailboxctl cluster remove-member " + b.id
                    + "), start it again like this, and add it back (mailboxctl cluster add-member " + b.id + "="
                    + address(b.peers.get(b.id)) + "); the leader then copies it the state");
        }
        LOG.info("coordinator {} starts empty and waits to be added to cluster '{}' (members {}): mailboxctl cluster "
                + "add-member {}={}", b.id, b.get(CoordinatorKeys.CLUSTER), view.get().members(), b.id, address(b.peers.get(b.id)));
        return RaftGroup.valueOf(group.getGroupId()); // no peers: it takes its configuration from the leader
    }

    /**
     * The deliberate replacement of a member whose data was lost ({@link ClusterState#REPLACE}): if the cluster
     * still counts it, it first has the cluster remove it (so that it never votes with its empty log), then starts
     * empty, with no configuration of its own, and once running has itself added back; the leader copies it the
     * state before the new configuration takes effect.
     */
    private RaftGroup replaceStart(Builder b, Path dataDir, java.util.Optional<Membership.View> view) throws IOException {
        if (view.isEmpty()) {
            throw new IOException("coordinator " + b.id + " has an empty data dir " + dataDir + " and is told to "
                    + "replace a lost member of cluster '" + b.get(CoordinatorKeys.CLUSTER) + "', but no other member answers at " + b.peers
                    + ": start a majority of the others first");
        }
        if (view.get().members().contains(b.id)) {
            LOG.warn("coordinator {} replaces its lost data (empty data dir {}): cluster '{}' still counts it as a member "
                    + "({} reports members {}); it has the cluster remove it first, then starts empty and has itself "
                    + "added back", b.id, dataDir, b.get(CoordinatorKeys.CLUSTER), view.get().from(), view.get().members());
            try {
                Membership.remove(group.getGroupId(), view.get(), b.id, RaftGateway.parameters(b.tls));
            } catch (IOException e) {
                throw new IOException("coordinator " + b.id + " could not have cluster '" + b.get(CoordinatorKeys.CLUSTER) + "' remove it "
                        + "before replacing its lost data (" + e.getMessage() + "): a majority of the other members "
                        + "must be up and one of them leading. Nothing changed; start it again once they are", e);
            }
            LOG.info("coordinator {} was removed from cluster '{}'; it starts empty and asks to be added back", b.id,
                    b.get(CoordinatorKeys.CLUSTER));
        }
        rejoin = true;
        return RaftGroup.valueOf(group.getGroupId()); // no peers: it takes its configuration from the leader
    }

    /** Whether this node, replacing its lost data, has yet to have itself added back (see {@link #replaceStart}). */
    private boolean rejoin;

    /**
     * Has the cluster add this node back (it blocks while the leader copies it the state), retrying until it is
     * in, or the node closes.
     */
    private void addSelfBack(InetSocketAddress address) {
        Thread t = new Thread(() -> {
            long pause = 500;
            while (!closed) {
                if (currentMembers().containsKey(id)) {
                    LOG.info("coordinator {} is a member of the cluster again", id);
                    return;
                }
                try {
                    gateway.addMember(id, address);
                    LOG.info("coordinator {} was added back to the cluster; the leader copied it the state", id);
                    return;
                } catch (IOException | RuntimeException e) {
                    LOG.warn("coordinator {} could not have itself added back yet ({}); trying again in {} ms (by hand: "
                            + "mailboxctl cluster add-member {}={})", id, e.toString(), pause, id, address(address));
                }
                try {
                    Thread.sleep(pause); // a retry pause: there is nothing to wait on but the cluster
                } catch (InterruptedException e) {
                    return;
                }
                pause = Math.min(pause * 2, 10_000);
            }
        }, "coordinator-rejoin-" + id);
        t.setDaemon(true);
        t.start();
    }

    private static String address(InetSocketAddress a) {
        return a.getHostString() + ":" + a.getPort();
    }

    /**
     * Adds a coordinator to the cluster. It must be running with an empty data dir, started with the
     * {@link ClusterState#EXISTING existing} cluster state: the leader copies it the state before the new
     * configuration takes effect.
     *
     * @param nodeId  its id
     * @param address its Raft address
     * @throws IOException if the change does not go through (for example, the new node is not running)
     */
    void addMember(String nodeId, InetSocketAddress address) throws IOException {
        gateway.addMember(nodeId, address);
    }

    /**
     * Removes a coordinator from the cluster. The removed node stops taking part; stop it.
     *
     * @param nodeId its id
     * @throws IOException if the change does not go through
     */
    void removeMember(String nodeId) throws IOException {
        gateway.removeMember(nodeId, currentMembers());
    }

    /** @return node id to Raft address of the current configuration, as this node knows it */
    Map<String, String> currentMembers() {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            for (org.apache.ratis.protocol.RaftPeer peer : raft.server().getDivision(group.getGroupId()).getRaftConf()
                    .getCurrentPeers()) {
                out.put(peer.getId().toString(), peer.getAddress());
            }
        } catch (IOException e) {
            // this node has no division (it was removed or failed): it knows of no members
        }
        return out;
    }

    private void registerGauges() {
        for (String role : List.of("LEADER", "FOLLOWER", "CANDIDATE", "FAILED")) {
            meters.gauge("mailbox.coordinator.raft.role", "1 for the role this node is in (FAILED: it has a fault)",
                    this, n -> n.role().equals(role) ? 1 : 0, "role", role);
        }
        meters.gauge("mailbox.coordinator.fault", "1 while this node does not serve: its disk takes no writes "
                + "(kind=disk, it recovers by itself) or it stopped after a fatal error (kind=fatal)", this,
                n -> n.health.current() != null && !n.health.current().fatal() ? 1 : 0, "kind", "disk");
        meters.gauge("mailbox.coordinator.fault", "1 while this node does not serve: its disk takes no writes "
                + "(kind=disk, it recovers by itself) or it stopped after a fatal error (kind=fatal)", this,
                n -> n.health.current() != null && n.health.current().fatal() ? 1 : 0, "kind", "fatal");
        meters.gauge("mailbox.coordinator.raft.term", "the Raft term", this, CoordinatorNode::term);
        meters.gauge("mailbox.coordinator.raft.applied.index", "the last log index applied", this,
                CoordinatorNode::appliedIndex);
        meters.gauge("mailbox.coordinator.raft.commit.index", "the highest log index this node knows committed",
                this, CoordinatorNode::commitIndex);
        meters.gauge("mailbox.coordinator.raft.last.log.index", "the index of the last entry in this node's log "
                + "(written, not necessarily committed)", this, CoordinatorNode::lastLogIndex);
        meters.gauge("mailbox.coordinator.cluster.size", "the members of the cluster's current configuration, as "
                + "this node knows it", this, n -> n.currentMembers().size());
        meters.gauge("mailbox.coordinator.snapshot.index", "the log index the latest snapshot covers (-1: none yet)",
                this, n -> n.stateMachine().snapshotIndex());
        meters.gauge("mailbox.coordinator.raft.entries.since.snapshot", "entries applied since the latest snapshot: "
                + "what a restart replays, and how much log is kept", this, CoordinatorNode::entriesSinceSnapshot);
        meters.gauge("mailbox.coordinator.snapshot.every", "the configured snapshot interval, in log entries", this,
                n -> n.snapshotEvery);
        for (org.apache.ratis.protocol.RaftPeer peer : group.getPeers()) {
            String peerId = peer.getId().toString();
            if (!peerId.equals(id)) {
                meters.gauge("mailbox.coordinator.raft.follower.lag", "on the leader: how many entries this "
                        + "follower's commit index is behind the leader's (NaN on a node that does not lead)", this,
                        n -> n.followerLag(peerId), "follower", peerId);
            }
        }
        for (LeaseState state : LeaseState.values()) {
            meters.gauge("mailbox.coordinator.leases", "mailboxes whose latest lease is in this state", this,
                    n -> n.stateMachine().readTable(t -> t.leases().stream().filter(l -> l.state() == state
                            && !l.namespace().equals(CoordinationLimits.NODES_NAMESPACE)).count()),
                    "state", state.name());
        }
        meters.gauge("mailbox.coordinator.routes", "routes in the routing table", this,
                n -> n.stateMachine().readTable(t -> t.routes().size()));
        meters.gauge("mailbox.coordinator.routes.revision", "the routing table's revision", this,
                n -> n.stateMachine().readTable(LeaseTable::routesRevision));
        meters.gauge("mailbox.coordinator.route.watchers", "route watchers this node streams to", this,
                CoordinatorNode::routeWatchers);
        meters.gauge("mailbox.coordinator.nodes.up", "mailbox nodes whose registration is active", this,
                n -> n.stateMachine().readTable(t -> t.nodes().stream().filter(NodeInfo::up).count()));
    }

    /**
     * @param nodeId this node's id; must be a key of the peer list
     * @return a builder
     */
    public static Builder builder(String nodeId) {
        return new Builder(nodeId);
    }

    /** @return this node's id */
    public String id() {
        return id;
    }

    /** @return whether this node leads the cluster now (and has committed an entry in its term) */
    public boolean isLeader() {
        DivisionInfo info = info();
        return info != null && info.isLeader() && info.isLeaderReady() && health.current() == null;
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

    /** @return LEADER, FOLLOWER, CANDIDATE or UNKNOWN, as this node sees itself; FAILED while it has a {@link #fault} */
    public String role() {
        if (health.current() != null) {
            return "FAILED";
        }
        DivisionInfo info = info();
        return info == null ? "UNKNOWN" : info.getCurrentRole().name();
    }

    /**
     * Why this node does not serve now, or null while it serves. A node whose disk took no more writes
     * (its Raft log failed) stops its Raft server, and starts it again by itself once the disk takes writes;
     * a node that hit an {@link Error} (out of memory) or whose Raft server stopped by itself stops serving
     * for good (see {@link Builder#onFatal}). Either way it answers only its status; other calls are
     * {@code UNAVAILABLE} with this reason, so clients go to another coordinator.
     *
     * @return the fault, or null
     */
    public @Nullable String fault() {
        Fault f = health.current();
        return f == null ? null : f.message();
    }

    /** @return the highest log index this node knows to be committed (a follower learns it from the leader) */
    long commitIndex() {
        try {
            return raft.server().getDivision(group.getGroupId()).getRaftLog().getLastCommittedIndex();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** @return the index of the last entry in this node's log, or -1 */
    long lastLogIndex() {
        try {
            org.apache.ratis.server.protocol.TermIndex last = raft.server().getDivision(group.getGroupId()).getRaftLog()
                    .getLastEntryTermIndex();
            return last == null ? -1 : last.getIndex();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private double entriesSinceSnapshot() {
        long applied = appliedIndex();
        return applied < 0 ? 0 : applied - Math.max(stateMachine().snapshotIndex(), 0);
    }

    /**
     * On the leader, how far a follower's commit index (as its last reply to the leader reported it) is
     * behind the leader's: a follower that is down, cut off or slow falls behind by every entry committed
     * without it. NaN anywhere else, or for a follower the leader has no report of.
     */
    double followerLag(String followerId) {
        try {
            RaftServer.Division division = raft.server().getDivision(group.getGroupId());
            if (!division.getInfo().isLeader()) {
                return Double.NaN;
            }
            long leaderCommit = division.getRaftLog().getLastCommittedIndex();
            for (org.apache.ratis.proto.RaftProtos.CommitInfoProto info : division.getCommitInfos()) {
                if (info.getServer().getId().toStringUtf8().equals(followerId)) {
                    return Math.max(0, leaderCommit - info.getCommitIndex());
                }
            }
            return Double.NaN;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** @return the node ids of the cluster */
    public List<String> peerIds() {
        List<String> ids = new ArrayList<>();
        group.getPeers().forEach(p -> ids.add(p.getId().toString()));
        return Collections.unmodifiableList(ids);
    }

    /**
     * Takes a snapshot now.
     *
     * @return the index it covers, or -1 if there was nothing to snapshot
     */
    public long takeSnapshot() {
        try {
            return stateMachine().takeSnapshot();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return where this node's control plane listens */
    public InetSocketAddress controlPlaneAddress() {
        return (InetSocketAddress) controlPlane.getListenSockets().get(0);
    }

    /** @return how many routing table watchers this node streams to */
    int routeWatchers() {
        return stateMachine().routeWatchers();
    }

    /**
     * What the web console shows of this coordinator ({@link dev.mailbox.console.Console#serve}): its own status
     * and members, and the namespaces, nodes, leases and routes of its own replicated state, read locally (as a
     * stale read: a follower may lag the leader by what it has not applied yet). Leases show their time left on
     * the leader, which alone keeps renewal deadlines. A coordinator holds no messages, so it lists no mailboxes.
     *
     * @return the console's source for this node
     */
    public dev.mailbox.console.ConsoleSource consoleSource() {
        return new dev.mailbox.console.ConsoleSource() {
            @Override
            public String kind() {
                return "coordinator";
            }

            @Override
            public String id() {
                return id;
            }

            @Override
            public List<dev.mailbox.coordination.ClusterStatus> coordinators() {
                return List.of(new dev.mailbox.coordination.ClusterStatus(id, role(), leaderId(), term(),
                        appliedIndex(), commitIndex(), currentMembers(), fault()));
            }

            @Override
            public List<dev.mailbox.coordination.NamespaceInfo> namespaces() {
                return stateMachine().readTable(LeaseTable::namespaces);
            }

            @Override
            public List<NodeInfo> nodes() {
                return stateMachine().readTable(LeaseTable::nodes);
            }

            @Override
            public List<dev.mailbox.coordination.Lease> leases() {
                return stateMachine().readTable(LeaseTable::leases);
            }

            @Override
            public long timeLeftMillis(dev.mailbox.coordination.Lease lease) {
                return isLeader() ? stateMachine().millisLeft(lease.mailboxId(), lease.leaseId(), System.nanoTime())
                        : -1;
            }

            @Override
            public dev.mailbox.coordination.RoutingSnapshot routes() {
                return stateMachine().readTable(t -> new dev.mailbox.coordination.RoutingSnapshot(t.routesRevision(),
                        t.routes()));
            }
        };
    }

    /** The current lease of a mailbox in this node's own state (for authorization: whose lease it is). */
    private java.util.Optional<dev.mailbox.coordination.Lease> localLease(String mailboxId) {
        return java.util.Optional.ofNullable(stateMachine().readTable(t -> t.get(mailboxId)));
    }

    /** @return the running Ratis server, for tests */
    RaftServer raftServer() {
        return raft.server();
    }

    /** @return the state machine, for tests and {@link TestingCluster} */
    LeaseStateMachine stateMachine() {
        return raft.stateMachine();
    }

    private @Nullable DivisionInfo info() {
        try {
            return raft.server().getDivision(group.getGroupId()).getInfo();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * @return where Ratis keeps this group's log, metadata and snapshots: the tree that is tightened (only it, so
     *         that a data dir shared with other files by mistake does not have those changed)
     */
    private Path raftDir() {
        return dataDir.resolve(group.getGroupId().getUuid().toString());
    }

    /** Where exports write their files (each unlinked as soon as it is open). */
    private static final String EXPORTS_DIR = "exports";

    private Path exportsDir() {
        return dataDir.resolve(EXPORTS_DIR);
    }

    /** Files of exports that a process ended before it could unlink them. */
    private static void removeStaleExports(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            files.filter(f -> f.getFileName().toString().startsWith("export-")).forEach(f -> {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    LOG.warn("cannot delete the stale export file {}: {}", f, e.toString());
                }
            });
        } catch (IOException e) {
            LOG.warn("cannot list {}: {}", dir, e.toString());
        }
    }

    /** Sweeps since the data dir's permissions were last tightened. Sweeper thread only. */
    private int sweepsSinceTighten;

    private void sweep() {
        logTransition();
        if (++sweepsSinceTighten >= TIGHTEN_EVERY_SWEEPS) {
            // new log segments come with the process's umask (see PrivateFiles)
            sweepsSinceTighten = 0;
            PrivateFiles.tighten(raftDir());
        }
        if (health.current() != null) {
            leaderTerm = -1;
            return;
        }
        try {
            LeaseStateMachine stateMachine = stateMachine();
            DivisionInfo info = info();
            if (info != null && !info.isAlive() && !closed && health.current() == null) {
                // Ratis closes a division by itself when its log worker or state machine updater hits an
                // unexpected exception; it would go on reporting its last role while answering nothing
                health.fatal(new IllegalStateException("its Raft server stopped by itself (see the log above)"));
                return;
            }
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
                    } else {
                        // the lease moved on between the decision and the commit (its holder acquired it again,
                        // or released it): the expiry names the epoch it was decided for and is fenced by it
                        LOG.info("expiry of lease {} of mailbox '{}' (epoch {}) not applied: {}", expire.leaseId(),
                                expire.mailboxId(), expire.epoch(), o.message());
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("lease sweep on {} failed", id, e);
        }
    }

    /** @return this node's Raft division, or null while it has none (closed, failed or removed) */
    RaftServer.Division divisionOrNull() {
        if (closed) {
            return null;
        }
        try {
            return raft.server().getDivision(group.getGroupId());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** @return how many elections this node's {@code ElectionWatch} started (not Ratis's own timer) */
    long electionsStartedByWatch() {
        return electionWatch.electionsStarted();
    }

    /**
     * Logs a change of this node's role (as the sweeper sees it, every {@link #SWEEP_MILLIS}) with the term,
     * as one structured line: {@code raft state transition} with node_id, from, to and term.
     */
    private void logTransition() {
        try {
            String now = role();
            if (!now.equals(seenRole)) {
                LOG.atInfo().addKeyValue("node_id", id).addKeyValue("from", seenRole.toLowerCase(java.util.Locale.ROOT))
                        .addKeyValue("to", now.toLowerCase(java.util.Locale.ROOT)).addKeyValue("term", term())
                        .log("raft state transition");
                seenRole = now;
            }
        } catch (RuntimeException e) {
            LOG.debug("cannot read the role of {}", id, e);
        }
    }

    /**
     * Stops the Raft server first (so this node stops taking part in the cluster at once, as a crash would
     * look to the others), then the control plane and the sweeper. Used by {@link TestingCluster#kill} for
     * in-process nodes.
     */
    void crash() {
        closed = true;
        try {
            raft.server().close();
        } catch (IOException e) {
            LOG.debug("closing the Raft server of {} failed", id, e);
        }
        controlPlane.shutdownNow();
        sweeper.shutdownNow();
        electionWatch.close();
        meters.close();
        gateway.close();
        leadershipCheck.close();
    }

    /**
     * Stops the node. A leader first hands its leadership to a caught-up follower (Raft leadership
     * transfer: the follower starts an election at once instead of waiting out its election timeout), so a
     * graceful stop costs the cluster a few milliseconds without a leader instead of a failover. Then it
     * stops the control plane, the sweeper and the Raft server.
     */
    @Override
    public void close() {
        handOverLeadership();
        closed = true;
        controlPlane.shutdownNow();
        sweeper.shutdownNow();
        electionWatch.close();
        meters.close();
        gateway.close();
        leadershipCheck.close();
        try {
            raft.server().close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** If this node leads, asks each other member in turn to take over, until one does (bounded). */
    private void handOverLeadership() {
        if (closed || !isLeader() || group.getPeers().size() < 2) {
            return;
        }
        long timeoutMillis = Math.max(electionTimeoutMax.toMillis(), 1_000);
        RaftPeerId self = RaftPeerId.valueOf(id);
        for (org.apache.ratis.protocol.RaftPeer peer : group.getPeers()) {
            if (peer.getId().equals(self) || !leadershipCheck.follows(peer, id)) {
                continue; // a member that is down or follows someone else cannot take over: do not wait on it
            }
            try (org.apache.ratis.client.RaftClient client = org.apache.ratis.client.RaftClient.newBuilder()
                    .setProperties(new RaftProperties()).setParameters(parameters).setRaftGroup(group).setLeaderId(self)
                    .setRetryPolicy(org.apache.ratis.retry.RetryPolicies.noRetry()).build()) {
                if (client.admin().transferLeadership(peer.getId(), self, timeoutMillis).isSuccess()) {
                    LOG.info("coordinator {} handed its leadership to {} before stopping", id, peer.getId());
                    return;
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("coordinator {} could not hand its leadership to {}: {}", id, peer.getId(), e.toString());
            }
        }
        LOG.warn("coordinator {} stops while leading: no other member took over; they elect a leader after their "
                + "election timeout", id);
    }

    /**
     * Takes the node out of service: its route watchers are ended (they resume on another coordinator) and
     * its Raft server stops, as a crash would look to the others, so a leader with a failed disk or a
     * broken heap hands leadership on at once instead of holding it while answering nothing.
     */
    private void stopServing(String why) {
        Raft current = raft;
        current.stateMachine().endWatches("coordinator " + id + " stopped serving: " + why);
        try {
            current.server().close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("stopping the Raft server of {} failed", id, e);
        }
    }

    /** While the log failure lasts: once the data dir takes writes again, starts the Raft server again. */
    private void probeDisk() {
        Fault f = health.current();
        if (closed || f == null || f.fatal()) {
            return;
        }
        if (!diskTakesWrites()) {
            sweeper.schedule(this::probeDisk, PROBE_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        try {
            Raft restarted = startRaft(group, RaftStorage.StartupOption.RECOVER);
            PrivateFiles.tighten(raftDir());
            raft = restarted;
            gateway.use(restarted.server());
            if (health.recovered(f)) {
                LOG.info("coordinator {}: its data dir {} takes writes again; the Raft server restarted and serves",
                        id, dataDir);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("coordinator {}: restarting the Raft server after a log failure failed, trying again: {}", id,
                    e.toString());
            sweeper.schedule(this::probeDisk, PROBE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Writes and syncs {@link #SPACE_PROBE_BYTES} into the data dir: room for a new log segment and more. */
    private boolean diskTakesWrites() {
        Path probe = dataDir.resolve(".mailbox-space-probe");
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(probe,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE,
                java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)) {
            java.nio.ByteBuffer chunk = java.nio.ByteBuffer.allocate(1 << 16);
            for (int written = 0; written < SPACE_PROBE_BYTES; written += chunk.capacity()) {
                chunk.clear();
                while (chunk.hasRemaining()) {
                    ch.write(chunk);
                }
            }
            ch.force(true);
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                LOG.debug("cannot delete {}", probe, e);
            }
        }
    }

    /** The Raft events the state machine reports, into this node's meters. */
    private final class NodeEvents implements RaftEvents {
        private final io.micrometer.core.instrument.Counter leaderChanges = meters.describedCounter(
                "mailbox.coordinator.raft.leader.changes", "times this node learned of a new leader (its first "
                        + "included)");
        private final io.micrometer.core.instrument.Timer commit = meters.histogram("mailbox.coordinator.raft.commit",
                "from the leader taking a write to having it committed and applied (on the leader)",
                Duration.ofNanos(100_000), Duration.ofSeconds(10));
        private final io.micrometer.core.instrument.Counter snapshots = meters.describedCounter(
                "mailbox.coordinator.snapshots", "snapshots this node wrote");
        private final io.micrometer.core.instrument.Timer snapshotDuration = meters.histogram(
                "mailbox.coordinator.snapshot.duration", "how long writing a snapshot took",
                Duration.ofMillis(1), Duration.ofSeconds(60));
        private final io.micrometer.core.instrument.Counter snapshotFailures = meters.describedCounter(
                "mailbox.coordinator.snapshot.failures", "snapshots that could not be written");

        @Override
        public void leaderChanged(String leaderId) {
            leaderChanges.increment();
            long term;
            try {
                term = term();
            } catch (RuntimeException e) {
                // the first notice can come while the Raft server is still starting (before this node holds it):
                // a notification must not throw into Ratis, and the count above is what matters
                term = -1;
            }
            LOG.atInfo().addKeyValue("node_id", id).addKeyValue("leader", leaderId).addKeyValue("term", term)
                    .log("raft leader changed");
        }

        @Override
        public void committed(long nanos) {
            commit.record(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void snapshotTaken(long index, long nanos) {
            snapshots.increment();
            snapshotDuration.record(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void snapshotFailed(Throwable cause) {
            snapshotFailures.increment();
            LOG.atWarn().addKeyValue("node_id", id).setCause(cause).log("snapshot failed: " + cause);
        }
    }

    /** What this node's parts report, and what the control plane asks. */
    private final class NodeHealth implements Health {
        private final java.util.concurrent.atomic.AtomicReference<@Nullable Fault> fault =
                new java.util.concurrent.atomic.AtomicReference<>();

        @Nullable Fault current() {
            return fault.get();
        }

        boolean recovered(Fault f) {
            return fault.compareAndSet(f, null);
        }

        @Override
        public void logFailed(Throwable cause) {
            if (closed) {
                return;
            }
            Fault f = new Fault(false, "its Raft log in " + dataDir + " cannot be written (" + rootMessage(cause)
                    + "); it restarts its Raft server by itself once the disk takes writes again");
            if (fault.compareAndSet(null, f)) {
                LOG.error("coordinator {} stops serving: {}", id, f.message(), cause);
                // not on the Ratis thread that reported it: closing the server waits for that thread
                sweeper.execute(() -> {
                    stopServing(f.message());
                    sweeper.schedule(CoordinatorNode.this::probeDisk, PROBE_MILLIS, TimeUnit.MILLISECONDS);
                });
            }
        }

        @Override
        public void fatal(Throwable cause) {
            if (closed) {
                return;
            }
            Fault f = new Fault(true, "it stopped after a fatal error (" + rootMessage(cause) + ") and must be "
                    + "restarted");
            Fault before = fault.getAndSet(f);
            if (before != null && before.fatal()) {
                return;
            }
            LOG.error("coordinator {} stops serving for good: {}", id, f.message(), cause);
            Thread stop = new Thread(() -> {
                stopServing(f.message());
                try {
                    onFatal.accept(cause);
                } catch (RuntimeException e) {
                    LOG.warn("the onFatal handler of coordinator {} failed", id, e);
                }
            }, "coordinator-fatal-" + id);
            stop.setDaemon(true);
            stop.start();
        }

        @Override
        public @Nullable String fault() {
            Fault f = fault.get();
            return f == null ? null : f.message();
        }

        @Override
        public long appliedIndex() {
            return CoordinatorNode.this.appliedIndex();
        }

        @Override
        public long commitIndex() {
            return CoordinatorNode.this.commitIndex();
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    @Override
    public String toString() {
        return "CoordinatorNode[" + id + ", " + role() + ", applied " + appliedIndex() + "]";
    }

    /**
     * How a node with an empty data dir starts (a node whose data dir holds the cluster's state always
     * recovers it, whatever this says), after etcd's {@code initial-cluster-state}.
     */
    public enum ClusterState {
        /** Bootstrap a new cluster with the configured peers: only for a cluster's very first start. */
        NEW,
        /**
         * The cluster exists. An empty node that the cluster still counts as a member refuses to start (its
         * data was lost: remove it and add it back); one that is not a member starts empty and waits to be
         * added. Every start after the first should say this.
         */
        EXISTING,
        /**
         * This node's data was lost (a wiped or replaced disk) and it is to take its place again, deliberately. If
         * the cluster still counts it as a member, it first has the cluster remove it (a majority of the others must
         * be up), so that it never votes with its empty log; then it starts empty and has itself added back, and the
         * leader copies it the state. The cluster tolerates one failure fewer until it is back in. With a data dir
         * that holds the cluster's state it recovers that state as always, so leaving this set does no harm.
         */
        REPLACE
    }

    /**
     * Builds and starts a {@link CoordinatorNode}. The settings that {@code mailboxctl coordinator start} also
     * reads (timeouts, snapshots, the control plane's address and more) start at their {@link CoordinatorKeys}
     * defaults and are checked by the same rules; see there, or docs/reference/config-keys.md, for each default.
     */
    public static final class Builder {
        /** The settings this builder holds in its {@link Settings}. */
        private static final List<Setting<?>> SETTINGS = settingsList();

        private final String id;
        private final Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        private final Settings.Builder settings = Settings.builder(SETTINGS, Settings.Profile.LIBRARY);
        private @Nullable Settings values; // the settings as start() found them
        private int maxWatchBacklog = 1_000;
        private MeterRegistry registry = Metrics.globalRegistry;
        private Consumer<Throwable> onFatal = e -> { };
        private dev.mailbox.coordination.@Nullable TlsFiles tls;
        private @Nullable Access access;
        private final List<io.grpc.ServerInterceptor> interceptors = new ArrayList<>();

        private Builder(String id) {
            Objects.requireNonNull(id, "nodeId");
            CoordinationLimits.require(CoordinationLimits.nodeIdProblem(id));
            this.id = id;
            settings.set(CoordinatorKeys.ID, id);
        }

        private static List<Setting<?>> settingsList() {
            List<Setting<?>> all = new ArrayList<>(CoordinatorKeys.ALL);
            all.add(SecurityKeys.REQUIRE_SECURITY);
            return List.copyOf(all);
        }

        /** @return a setting's value as {@link #start} found it */
        private <T> T get(Setting<T> setting) {
            return Objects.requireNonNull(Objects.requireNonNull(values, "not started").get(setting), setting.name());
        }

        /**
         * Takes the settings a command line or a config file gave ({@code mailboxctl coordinator start} does), and
         * their profile's defaults for the rest: the settings of {@link CoordinatorKeys} and
         * {@link SecurityKeys#REQUIRE_SECURITY} that {@code given} holds, except the id, the Raft address and the
         * peers, which this builder takes as arguments ({@link CoordinatorNode#builder}, {@link #peers}).
         *
         * @param given settings, checked (see {@link Settings.Builder#build})
         * @return this builder
         * @throws IllegalArgumentException if one of them does not go with what this builder was given before
         */
        public Builder settings(Settings given) {
            settings.profile(given.profile());
            for (Setting<?> s : SETTINGS) {
                if (s != CoordinatorKeys.ID && s != CoordinatorKeys.RAFT && s != CoordinatorKeys.PEERS
                        && given.settings().contains(s) && given.isSet(s)) {
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
         * @param registry where this node's meters go (default Micrometer's global registry, which records
         *                 nothing until the application adds one); they are removed when the node closes
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Serves the control plane over TLS and talks TLS to the other coordinators (mutual TLS: each
         * presents this certificate to the others and accepts only peers whose certificates the trusted CAs
         * signed, so the certificate must be usable for both server and client authentication).
         *
         * @param files this node's certificate and key, and the CAs that sign the cluster's and clients'
         * @return this builder
         */
        public Builder tls(dev.mailbox.coordination.TlsFiles files) {
            this.tls = Objects.requireNonNull(files, "files");
            if (files.certificate() == null || files.trusted() == null) {
                throw new IllegalArgumentException("a coordinator's TLS needs a certificate, a key and trusted CAs");
            }
            return this;
        }

        /**
         * @param access who may call this node and what they may do (default: anyone, anything)
         * @return this builder
         */
        public Builder access(Access access) {
            this.access = Objects.requireNonNull(access, "access");
            return this;
        }

        /**
         * @param require refuse to start without TLS and access rules when the control plane or Raft listens
         *                on an address other than loopback (default {@link SecurityKeys#REQUIRE_SECURITY}: off,
         *                start with a loud warning)
         * @return this builder
         */
        public Builder requireSecurity(boolean require) {
            settings.set(SecurityKeys.REQUIRE_SECURITY, require);
            return this;
        }

        /**
         * What to do when the node stops serving for good: it hit an {@link Error} (out of memory) or its
         * Raft server stopped by itself. By then it has stopped its Raft server (the others elect a leader
         * without it) and answers only its status, with the fault; a process that runs nothing but this
         * node should exit so that its supervisor restarts it ({@code mailboxctl coordinator start} does).
         *
         * @param handler called once, on a thread of its own, with the cause (default: nothing)
         * @return this builder
         */
        public Builder onFatal(Consumer<Throwable> handler) {
            this.onFatal = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * @param state how to start when the data dir is empty (default {@link CoordinatorKeys#INITIAL_CLUSTER_STATE}:
         *              {@link ClusterState#NEW}; say {@link ClusterState#EXISTING} for every start after the
         *              cluster's first, and {@link ClusterState#REPLACE} to bring back a member whose data was lost)
         * @return this builder
         */
        public Builder clusterState(ClusterState state) {
            settings.set(CoordinatorKeys.INITIAL_CLUSTER_STATE, state);
            return this;
        }

        /**
         * @param cluster the cluster's name (all nodes of a cluster use the same; default
         *                {@link CoordinatorKeys#CLUSTER}); a data dir holds its cluster's state under it
         * @return this builder
         */
        public Builder cluster(String cluster) {
            settings.set(CoordinatorKeys.CLUSTER, cluster);
            return this;
        }

        /**
         * @param nodeId  a node of the cluster (this one included)
         * @param address where its Raft server listens
         * @return this builder
         */
        public Builder peer(String nodeId, InetSocketAddress address) {
            CoordinationLimits.require(CoordinationLimits.nodeIdProblem(Objects.requireNonNull(nodeId, "nodeId")));
            peers.put(nodeId, Objects.requireNonNull(address, "address"));
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
         * Where this node's Raft server binds, when the others reach it at another address than its own entry in
         * {@link #peers} (the address they dial): a port published by a container or NAT, or a proxy in front
         * of it. Its peer entry stays what the cluster knows it by.
         *
         * @param address host and port to bind; default: this node's own peer address
         * @return this builder
         */
        public Builder raftListen(InetSocketAddress address) {
            settings.set(CoordinatorKeys.RAFT_LISTEN, address);
            return this;
        }

        /** @return where the Raft server binds: {@link #raftListen}, else this node's peer address */
        InetSocketAddress raftBind() {
            InetSocketAddress listen = settings.get(CoordinatorKeys.RAFT_LISTEN);
            return listen != null ? listen : Objects.requireNonNull(peers.get(id), "this node's peer address");
        }

        /**
         * @param dataDir where the log and snapshots live (required)
         * @return this builder
         */
        public Builder dataDir(Path dataDir) {
            settings.set(CoordinatorKeys.DATA_DIR, dataDir);
            return this;
        }

        /**
         * Sets the shortest election timeout and makes the longest twice it.
         *
         * @param timeout the shortest election timeout, 50 ms or more
         * @return this builder
         * @see #electionTimeout(Duration, Duration)
         */
        public Builder electionTimeout(Duration timeout) {
            settings.set(CoordinatorKeys.ELECTION_TIMEOUT_MIN, Objects.requireNonNull(timeout, "timeout"));
            settings.unset(CoordinatorKeys.ELECTION_TIMEOUT_MAX); // its default: twice the shortest
            return this;
        }

        /**
         * How long a follower waits without hearing from a leader before it starts an election: a time
         * between these two, drawn afresh after each contact from a leader, the members taking turns (each
         * draws from its own part of the range, by the order of the node ids, so that two followers rarely
         * start together). The node watches its follower's silence every 10 ms and stands at that time
         * (Ratis's own timer alone would notice only between one and two timeouts after the last heartbeat).
         * This is most of a failover: a crashed leader is noticed after it, then one round of (pre-)votes
         * elects the next. The leader sends heartbeats every half of {@code min}, and its leader lease (see
         * {@link #leaderLeaseRatio}) lasts a fraction of {@code min}. Too short for the machine and its
         * pauses (GC, a busy CPU, a slow disk) and followers elect a new leader while the old one is
         * merely slow; default {@link CoordinatorKeys#ELECTION_TIMEOUT_MIN} and
         * {@link CoordinatorKeys#ELECTION_TIMEOUT_MAX} (halving them fails over about twice as fast, and on a
         * loaded 2-core machine it also elected leaders spuriously: see benchmarks/HISTORY.md, "Coordinator failover").
         *
         * @param min the shortest election timeout, 50 ms or more
         * @param max the longest, more than {@code min}
         * @return this builder
         * @throws IllegalArgumentException if {@code min} is under 50 ms or {@code max} is not above it
         */
        public Builder electionTimeout(Duration min, Duration max) {
            Objects.requireNonNull(max, "max");
            settings.set(CoordinatorKeys.ELECTION_TIMEOUT_MIN, Objects.requireNonNull(min, "min"));
            settings.set(CoordinatorKeys.ELECTION_TIMEOUT_MAX, max); // checked against the shortest just set
            return this;
        }

        /**
         * @param timeout how long a Raft request between coordinators (an append, a vote, a snapshot
         *                chunk) may take before it is given up and sent again, at least the longest election
         *                timeout (default {@link CoordinatorKeys#RAFT_REQUEST_TIMEOUT}: 3 s, or the longest
         *                election timeout if that is longer); checked against the election timeouts at
         *                {@link #start}
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder raftRequestTimeout(Duration timeout) {
            settings.set(CoordinatorKeys.RAFT_REQUEST_TIMEOUT, Objects.requireNonNull(timeout, "timeout"));
            return this;
        }

        /**
         * @param enabled whether a follower first asks the others whether they would vote for it before it
         *                starts a real election (default {@link CoordinatorKeys#PRE_VOTE}: on). Pre-vote keeps a
         *                node that was cut off, or merely slow, from raising the term and deposing a healthy
         *                leader when it comes back.
         * @return this builder
         */
        public Builder preVote(boolean enabled) {
            settings.set(CoordinatorKeys.PRE_VOTE, enabled);
            return this;
        }

        /**
         * The leader's lease: after a majority acknowledged its heartbeat, the leader knows that no other
         * leader can be elected for this fraction of the shortest election timeout, and serves
         * {@link dev.mailbox.coordination.ReadConsistency#LEADER_LEASE} reads and renewals from its own state
         * without a round trip. Lower it where clocks may run at different rates.
         *
         * @param ratio more than 0 and at most 1 (default {@link CoordinatorKeys#LEADER_LEASE_RATIO})
         * @return this builder
         * @throws IllegalArgumentException if it is out of range
         */
        public Builder leaderLeaseRatio(double ratio) {
            settings.set(CoordinatorKeys.LEADER_LEASE_RATIO, ratio);
            return this;
        }

        /**
         * @param entries take a snapshot after this many log entries (default {@link CoordinatorKeys#SNAPSHOT_EVERY})
         * @return this builder
         */
        public Builder snapshotEvery(long entries) {
            settings.set(CoordinatorKeys.SNAPSHOT_EVERY, entries);
            return this;
        }

        /**
         * How large a file of the Raft log grows before the next one starts. The log before a snapshot is
         * deleted a whole file at a time, so smaller files free disk sooner after each snapshot, and a
         * member that was away longer than the log kept catches up by installing the leader's snapshot.
         *
         * @param bytes at least 4 KiB (default {@link CoordinatorKeys#LOG_SEGMENT_BYTES}; the open file's entries
         *              are kept in memory until it closes); an entry larger than this gets a file of its own
         * @return this builder
         * @throws IllegalArgumentException if it is under 4 KiB
         */
        public Builder logSegmentSize(long bytes) {
            settings.set(CoordinatorKeys.LOG_SEGMENT_BYTES, bytes);
            return this;
        }

        /**
         * @param snapshots how many snapshots to keep on disk, the newest ones (default
         *                  {@link CoordinatorKeys#SNAPSHOT_RETENTION}; older ones and the log before the oldest kept
         *                  are deleted)
         * @return this builder
         * @throws IllegalArgumentException if it is under 1
         */
        public Builder snapshotRetention(int snapshots) {
            settings.set(CoordinatorKeys.SNAPSHOT_RETENTION, snapshots);
            return this;
        }

        /**
         * The consistency of a read whose request does not say (see {@link ReadOperation}).
         *
         * @param operation   the read
         * @param consistency how fresh its answer is by default (default
         *                    {@link dev.mailbox.coordination.ReadConsistency#LEADER_LEASE} for every read)
         * @return this builder
         */
        public Builder readConsistency(ReadOperation operation, dev.mailbox.coordination.ReadConsistency consistency) {
            List<Map.Entry<ReadOperation, dev.mailbox.coordination.ReadConsistency>> reads = new ArrayList<>(
                    settings.get(CoordinatorKeys.READ_CONSISTENCY));
            reads.add(Map.entry(Objects.requireNonNull(operation, "operation"),
                    Objects.requireNonNull(consistency, "consistency")));
            settings.set(CoordinatorKeys.READ_CONSISTENCY, List.copyOf(reads));
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
         * @param address where the grpc-java control plane listens (default {@link CoordinatorKeys#CONTROL_PLANE}:
         *                127.0.0.1 on a free port)
         * @return this builder
         */
        public Builder controlPlane(InetSocketAddress address) {
            settings.set(CoordinatorKeys.CONTROL_PLANE, address);
            return this;
        }

        /**
         * Adds an interceptor to every control-plane call this node serves, such as {@code mailbox-opentelemetry}'s,
         * which makes each call a span in the caller's trace. It runs before the node's own (health, access,
         * metrics): the one added last runs first.
         *
         * @param interceptor a gRPC server interceptor
         * @return this builder
         */
        public Builder interceptor(io.grpc.ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * Whether the node first runs an election and a term as leader in a throwaway three-member cluster
         * of its own (in this JVM, on free loopback ports, temporary data dirs, deleted after), so that the
         * code of both is loaded and linked before it can win an election in its real cluster. A JVM that
         * has never led spends 100–250 ms of its first term loading that code (measured on 2 cores: ~350
         * classes and as many lambda call sites), which is a large share of a failover to a node that was
         * restarted since it last led. It adds 2–4 s to the start; a warm-up that fails is logged
         * and the node starts anyway. Default {@link CoordinatorKeys#WARM_UP}: off here (tests and embedded
         * single-node use start many nodes), on in {@code mailboxctl coordinator start}.
         *
         * @param enabled whether to warm up before starting
         * @return this builder
         */
        public Builder warmUp(boolean enabled) {
            settings.set(CoordinatorKeys.WARM_UP, enabled);
            return this;
        }

        /**
         * Starts the node.
         *
         * @return the running node
         * @throws IllegalStateException    if the peer list does not name this node, or there is no data dir
         * @throws IllegalArgumentException if the settings do not go together (a Raft request timeout shorter than
         *                                  the longest election timeout)
         * @throws UncheckedIOException     if the server cannot start
         */
        public CoordinatorNode start() {
            if (!peers.containsKey(id)) {
                throw new IllegalStateException("the peer list " + peers.keySet() + " does not include this node '"
                        + id + "'");
            }
            Path dir = settings.get(CoordinatorKeys.DATA_DIR);
            if (dir == null) {
                throw new IllegalStateException("dataDir(...) is required");
            }
            this.values = settings.build();
            if (get(CoordinatorKeys.WARM_UP)) {
                WarmUp.run(id, List.of(raftBind(), get(CoordinatorKeys.CONTROL_PLANE)));
            }
            try {
                return new CoordinatorNode(this, dir);
            } catch (IOException e) {
                throw new UncheckedIOException("coordinator node '" + id + "' could not start: " + e.getMessage(), e);
            }
        }

        /** @return the settings as {@link #start} would find them now (for tests) */
        Settings settingsForStart() {
            return settings.build();
        }

        /**
         * @param dataDir a data dir
         * @return the properties {@link #start} would give Ratis now (for tests: what reaches Raft)
         */
        RaftProperties raftProperties(Path dataDir) {
            this.values = settings.build();
            return properties(this, dataDir);
        }
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
        public long commitIndex() {
            return CoordinatorNode.this.commitIndex();
        }

        @Override
        public @Nullable String fault() {
            return CoordinatorNode.this.fault();
        }

        @Override
        public List<String[]> members() {
            List<String[]> out = new ArrayList<>();
            currentMembers().forEach((id, address) -> out.add(new String[] {id, address}));
            return out;
        }

        @Override
        public void addMember(String nodeId, InetSocketAddress address) throws IOException {
            CoordinatorNode.this.addMember(nodeId, address);
        }

        @Override
        public void removeMember(String nodeId) throws IOException {
            CoordinatorNode.this.removeMember(nodeId);
        }

        @Override
        public CompletableFuture<byte[]> readLocal(Query query) {
            return stateMachine().answer(query, false);
        }

        @Override
        public StateDigest digest() {
            return stateMachine().digest();
        }

        @Override
        public Runnable watchRoutes(long fromRevision, RouteHub.Sink sink) {
            return stateMachine().watchRoutes(fromRevision, sink);
        }

        @Override
        public CompletableFuture<Void> awaitApplied(long index) {
            return stateMachine().awaitApplied(index);
        }

        @Override
        public LeaseStateMachine.ExportFile export() throws IOException {
            return stateMachine().export(exportsDir());
        }
    }
}
