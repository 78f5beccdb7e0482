package dev.mailbox.coordination.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.GetLeasePolicyRequest;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.LeasePolicyReply;
import dev.mailbox.coordination.proto.LeaseReply;
import dev.mailbox.coordination.proto.ListLeasesReply;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.Member;
import dev.mailbox.coordination.proto.ReclaimLeaseRequest;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeasesReply;
import dev.mailbox.coordination.proto.RenewLeasesRequest;
import dev.mailbox.coordination.proto.RenewResult;
import dev.mailbox.coordination.proto.RevokeLeaseRequest;
import dev.mailbox.coordination.proto.SetLeasePolicyRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.proto.CreateNamespaceRequest;
import dev.mailbox.coordination.proto.GetNamespaceRequest;
import dev.mailbox.coordination.proto.GetPartitionMapRequest;
import dev.mailbox.coordination.proto.ListNamespacesReply;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
import dev.mailbox.coordination.proto.ListNodesReply;
import dev.mailbox.coordination.proto.ListNodesRequest;
import dev.mailbox.coordination.proto.ListRoutesRequest;
import dev.mailbox.coordination.proto.NamespaceReply;
import dev.mailbox.coordination.proto.PartitionMapReply;
import dev.mailbox.coordination.proto.RegisterNodeReply;
import dev.mailbox.coordination.proto.RegisterNodeRequest;
import dev.mailbox.coordination.proto.RouteEvent;
import dev.mailbox.coordination.proto.RoutesReply;
import dev.mailbox.coordination.proto.WatchRoutesRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC control plane of one node. Requests are checked here first, so a malformed one is refused
 * with INVALID_ARGUMENT before it reaches the log. Writes go through the node's {@link RaftGateway}
 * (straight in while this node leads, else forwarded to the leader); renewals are linearizable leader
 * reads; lease, node, partition, namespace and route reads are as fresh as the request's consistency asks.
 */
public final class ControlPlaneService extends ControlPlaneGrpc.ControlPlaneImplBase {

    /** What the service needs of its node. */
    public interface Node {
        /** @return the node's id */
        String id();

        /** @return the leader's id, or null */
        @Nullable String leaderId();

        /** @return LEADER, FOLLOWER, CANDIDATE or UNKNOWN */
        String role();

        /** @return the current term */
        long term();

        /** @return the last applied index */
        long appliedIndex();

        /** @return node id and Raft address of each member */
        List<String[]> members();

        /**
         * Runs a read against this node's own table (a stale read).
         *
         * @param read what to read
         * @param <R>  the answer
         * @return the answer
         */
        <R> R readLocal(Function<LeaseTable, R> read);

        /**
         * Adds a routing table watcher on this node.
         *
         * @param fromRevision the last revision the watcher saw, or 0
         * @param sink         where the events go
         * @return removes the watcher
         */
        Runnable watchRoutes(long fromRevision, RouteHub.Sink sink);
    }

    /** Most renewals one RenewLeases call may carry. */
    public static final int MAX_BATCH = 1_000;

    private final Node node;
    private final RaftGateway raft;
    private final int maxWatchBacklog;

    /**
     * @param node the node
     * @param raft the node's way into the replicated state
     * @param maxWatchBacklog how many live route changes may queue for a stalled watcher before its
     *                        watch is ended (see {@code CoordinatorNode.Builder.maxWatchBacklog})
     */
    public ControlPlaneService(Node node, RaftGateway raft, int maxWatchBacklog) {
        this.node = node;
        this.raft = raft;
        this.maxWatchBacklog = maxWatchBacklog;
    }

    @Override
    public void acquireLease(AcquireLeaseRequest r, StreamObserver<LeaseReply> out) {
        String bad = LeaseTable.firstInvalid(r.getMailboxId(), r.getRunnerId(), r.getNodeId(), r.getAddress());
        if (bad == null && LeaseTable.namespaceOf(r.getMailboxId()).equals(NodeInfo.NAMESPACE)) {
            bad = "namespace '" + NodeInfo.NAMESPACE + "' is reserved for node registrations (RegisterNode)";
        }
        if (bad == null && r.getTtlMillis() != 0) {
            bad = ttlProblem(r.getTtlMillis());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        if (r.getRequestId().length() > 64) {
            out.onError(invalid("request id must be at most 64 characters, was " + r.getRequestId().length()));
            return;
        }
        reply(raft.write(new Command.Acquire(r.getMailboxId(), r.getRunnerId(), r.getNodeId(), r.getAddress(),
                r.getTtlMillis(), r.getRequestId(), 0)), out);
    }

    @Override
    public void renewLease(RenewLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (refuseLeaseRef(r.getMailboxId(), r.getLeaseId(), r.getEpoch(), out)) {
            return;
        }
        reply(raft.leaderRead(new Wire.Read.Renew(r.getMailboxId(), r.getLeaseId(), r.getEpoch()))
                .thenApply(Wire::decodeOutcome), out);
    }

    @Override
    public void renewLeases(RenewLeasesRequest r, StreamObserver<RenewLeasesReply> out) {
        int n = r.getRenewalsCount();
        if (n > MAX_BATCH) {
            out.onError(invalid("at most " + MAX_BATCH + " renewals per call, was " + n));
            return;
        }
        RenewResult[] results = new RenewResult[n];
        List<Wire.Read.Renew> batch = new ArrayList<>(n);
        List<Integer> positions = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            RenewLeaseRequest one = r.getRenewals(i);
            String bad = leaseRefProblem(one.getMailboxId(), one.getLeaseId(), one.getEpoch());
            if (bad != null) {
                results[i] = RenewResult.newBuilder().setCode("INVALID_ARGUMENT").setMessage(bad).build();
            } else {
                batch.add(new Wire.Read.Renew(one.getMailboxId(), one.getLeaseId(), one.getEpoch()));
                positions.add(i);
            }
        }
        CompletableFuture<List<Outcome>> answers = batch.isEmpty() ? CompletableFuture.completedFuture(List.of())
                : raft.leaderRead(new Wire.Read.RenewBatch(batch)).thenApply(Wire::decodeOutcomes);
        answers.whenComplete((outcomes, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
                return;
            }
            for (int k = 0; k < outcomes.size(); k++) {
                Outcome o = outcomes.get(k);
                RenewResult.Builder b = RenewResult.newBuilder().setCode(o.code().name()).setMessage(o.message());
                if (o.lease() != null) {
                    b.setLease(Protos.toProto(o.lease()));
                }
                results[positions.get(k)] = b.build();
            }
            out.onNext(RenewLeasesReply.newBuilder().addAllResults(java.util.Arrays.asList(results)).build());
            out.onCompleted();
        });
    }

    @Override
    public void releaseLease(ReleaseLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (refuseLeaseRef(r.getMailboxId(), r.getLeaseId(), r.getEpoch(), out)) {
            return;
        }
        reply(raft.write(new Command.Release(r.getMailboxId(), r.getLeaseId(), r.getEpoch(), 0)), out);
    }

    @Override
    public void revokeLease(RevokeLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (!refuseMailbox(r.getMailboxId(), out)) {
            reply(raft.write(new Command.Revoke(r.getMailboxId(), 0)), out);
        }
    }

    @Override
    public void reclaimLease(ReclaimLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (!refuseMailbox(r.getMailboxId(), out)) {
            reply(raft.write(new Command.Reclaim(r.getMailboxId(), 0)), out);
        }
    }

    @Override
    public void getLease(GetLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (refuseMailbox(r.getMailboxId(), out)) {
            return;
        }
        Wire.Read.Get read = new Wire.Read.Get(r.getMailboxId());
        reply(read(r.getConsistency(), read, t -> {
            Lease l = t.get(r.getMailboxId());
            return Wire.encode(l == null ? Outcome.notFound(r.getMailboxId()) : Outcome.ok(l));
        }).thenApply(Wire::decodeOutcome), out);
    }

    @Override
    public void listLeases(ListLeasesRequest r, StreamObserver<ListLeasesReply> out) {
        Wire.Read.ListLeases read = new Wire.Read.ListLeases(r.getNamespace());
        read(r.getConsistency(), read, t -> Wire.encode(t.leases().stream()
                .filter(l -> r.getNamespace().isEmpty() || l.namespace().equals(r.getNamespace())).toList()))
                .thenApply(Wire::decodeLeases)
                .whenComplete((leases, e) -> {
                    if (e != null) {
                        out.onError(unavailable(e));
                        return;
                    }
                    ListLeasesReply.Builder b = ListLeasesReply.newBuilder();
                    leases.forEach(l -> b.addLeases(Protos.toProto(l)));
                    out.onNext(b.build());
                    out.onCompleted();
                });
    }

    @Override
    public void setLeasePolicy(SetLeasePolicyRequest r, StreamObserver<LeasePolicyReply> out) {
        String bad = namespaceProblem(r.getNamespace());
        if (bad == null) {
            bad = policyProblem(r.getTtlMillis(), r.getHeartbeatMillis(), r.getGraceMillis());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        LeasePolicy set = policy(r.getTtlMillis(), r.getHeartbeatMillis(), r.getGraceMillis());
        whenApplied(raft.write(new Command.SetPolicy(r.getNamespace(), r.getTtlMillis(), r.getHeartbeatMillis(),
                r.getGraceMillis(), 0)), out, o -> answer(out, policyReply(r.getNamespace(), set)));
    }

    @Override
    public void getLeasePolicy(GetLeasePolicyRequest r, StreamObserver<LeasePolicyReply> out) {
        String bad = namespaceProblem(r.getNamespace());
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        raft.leaderRead(new Wire.Read.Policy(r.getNamespace())).thenApply(Wire::decodePolicy).whenComplete((p, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
            } else {
                out.onNext(policyReply(r.getNamespace(), p));
                out.onCompleted();
            }
        });
    }

    @Override
    public void clusterStatus(ClusterStatusRequest r, StreamObserver<ClusterStatusReply> out) {
        ClusterStatusReply.Builder b = ClusterStatusReply.newBuilder().setNodeId(node.id()).setTerm(node.term())
                .setAppliedIndex(node.appliedIndex()).setRole(node.role());
        String leader = node.leaderId();
        if (leader != null) {
            b.setLeaderId(leader);
        }
        node.members().forEach(m -> b.addMembers(Member.newBuilder().setNodeId(m[0]).setAddress(m[1])));
        out.onNext(b.build());
        out.onCompleted();
    }

    @Override
    public void registerNode(RegisterNodeRequest r, StreamObserver<RegisterNodeReply> out) {
        dev.mailbox.coordination.proto.NodeInfo n = r.getNode();
        String bad = n.getNodeId().isBlank() || n.getNodeId().contains("@") ? "node id must be non-blank and without '@', was '"
                + n.getNodeId() + "'" : null;
        if (bad == null) {
            bad = LeaseTable.firstInvalid(NodeInfo.NAMESPACE + "@" + n.getNodeId(), n.getNodeId(), n.getNodeId(),
                    n.getAddress());
        }
        if (bad == null && r.getTtlMillis() != 0) {
            bad = ttlProblem(r.getTtlMillis());
        }
        if (bad == null && r.getRequestId().length() > 64) {
            bad = "request id must be at most 64 characters, was " + r.getRequestId().length();
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(new Command.RegisterNode(n.getNodeId(), n.getAddress(), n.getRegion(), n.getVersion(),
                n.getCapabilitiesList(), new java.util.TreeMap<>(n.getLabelsMap()), r.getTtlMillis(), r.getRequestId(), 0)),
                out, o -> {
                    // the leader's partition map: it has applied the registration, a forwarding follower may not have
                    view(Consistency.LEADER_LEASE, Wire.ViewKind.PARTITIONS, "", PartitionMapReply.parser(), out, map -> {
                        RegisterNodeReply.Builder b = RegisterNodeReply.newBuilder()
                                .setNode(n.toBuilder().setUp(true).build()).setLease(Protos.toProto(o.lease()));
                        map.getRangesList().stream().filter(x -> x.getNodeId().equals(n.getNodeId()))
                                .forEach(b::addPartitionRanges);
                        answer(out, b.build());
                    });
                });
    }

    @Override
    public void listNodes(ListNodesRequest r, StreamObserver<ListNodesReply> out) {
        view(r.getConsistency(), Wire.ViewKind.NODES, "", ListNodesReply.parser(), out);
    }

    @Override
    public void getPartitionMap(GetPartitionMapRequest r, StreamObserver<PartitionMapReply> out) {
        view(r.getConsistency(), Wire.ViewKind.PARTITIONS, "", PartitionMapReply.parser(), out);
    }

    @Override
    public void createNamespace(CreateNamespaceRequest r, StreamObserver<NamespaceReply> out) {
        String bad = LeaseTable.namespaceProblem(r.getName());
        if (bad == null && (r.getTtlMillis() != 0 || r.getHeartbeatMillis() != 0 || r.getGraceMillis() != 0)) {
            bad = policyProblem(r.getTtlMillis(), r.getHeartbeatMillis(), r.getGraceMillis());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        // answered by a leader read: the leader has applied the create when the write returns, while
        // a follower that forwarded it may not have yet
        whenApplied(raft.write(new Command.CreateNamespace(r.getName(), r.getTtlMillis(), r.getHeartbeatMillis(),
                r.getGraceMillis(), new java.util.TreeMap<>(r.getLabelsMap()), 0)), out,
                o -> view(Consistency.LEADER_LEASE, Wire.ViewKind.NAMESPACE, r.getName(), NamespaceReply.parser(), out));
    }

    @Override
    public void getNamespace(GetNamespaceRequest r, StreamObserver<NamespaceReply> out) {
        String bad = LeaseTable.namespaceProblem(r.getName());
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        view(r.getConsistency(), Wire.ViewKind.NAMESPACE, r.getName(), NamespaceReply.parser(), out);
    }

    @Override
    public void listNamespaces(ListNamespacesRequest r, StreamObserver<ListNamespacesReply> out) {
        view(r.getConsistency(), Wire.ViewKind.NAMESPACES, "", ListNamespacesReply.parser(), out);
    }

    @Override
    public void listRoutes(ListRoutesRequest r, StreamObserver<RoutesReply> out) {
        view(r.getConsistency(), Wire.ViewKind.ROUTES, "", RoutesReply.parser(), out);
    }

    /** Reads nodes, partitions, namespaces or routes as fresh as asked, and answers with the reply message. */
    private <M> void view(Consistency consistency, Wire.ViewKind kind, String arg, Parser<M> parser,
                          StreamObserver<M> out) {
        view(consistency, kind, arg, parser, out, m -> answer(out, m));
    }

    /** Reads a view and hands its reply message on, or ends the call with a status naming what failed. */
    private <M> void view(Consistency consistency, Wire.ViewKind kind, String arg, Parser<M> parser,
                          StreamObserver<?> out, java.util.function.Consumer<M> then) {
        Wire.Read.View v = new Wire.Read.View(kind, arg);
        read(consistency, v, t -> Views.answer(v, t)).whenComplete((bytes, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
            } else if (kind == Wire.ViewKind.NAMESPACE && bytes.length == 0) {
                out.onError(new StatusRuntimeException(Status.NOT_FOUND.withDescription("no namespace '" + arg + "'")));
            } else {
                M message;
                try {
                    message = parser.parseFrom(bytes);
                } catch (InvalidProtocolBufferException x) {
                    out.onError(new StatusRuntimeException(Status.INTERNAL.withDescription("unreadable " + kind
                            + " answer: " + x.getMessage())));
                    return;
                }
                then.accept(message);
            }
        });
    }

    @Override
    public void watchRoutes(WatchRoutesRequest r, StreamObserver<RouteEvent> out) {
        if (r.getFromRevision() < 0) {
            out.onError(invalid("from_revision must be 0 or more, was " + r.getFromRevision()));
            return;
        }
        ServerCallStreamObserver<RouteEvent> call = (ServerCallStreamObserver<RouteEvent>) out;
        RouteSink sink = new RouteSink(call);
        call.setOnReadyHandler(sink::ready);
        Runnable cancel = node.watchRoutes(r.getFromRevision(), sink);
        sink.remove = cancel;
        call.setOnCancelHandler(cancel);
        if (call.isCancelled() || sink.cut) {
            cancel.run();
        }
    }

    /**
     * One watcher's stream. gRPC queues whatever is sent to a stream that cannot take it, so live changes
     * sent while the stream is not ready are counted, and past {@link #maxWatchBacklog} the watch is ended:
     * a stalled watcher costs a bounded amount of memory and resumes from its revision when it reconnects.
     */
    private final class RouteSink implements RouteHub.Sink {
        private final ServerCallStreamObserver<RouteEvent> call;
        private final AtomicInteger backlog = new AtomicInteger();
        volatile @Nullable Runnable remove;
        volatile boolean cut;

        RouteSink(ServerCallStreamObserver<RouteEvent> call) {
            this.call = call;
        }

        void ready() {
            backlog.set(0);
        }

        @Override
        public void snapshot(long revision, List<Route> routes) {
            RouteEvent.Builder b = RouteEvent.newBuilder().setRevision(revision).setSnapshot(true);
            routes.forEach(x -> b.addRoutes(Protos.toProto(x)));
            send(b.build());
        }

        @Override
        public void change(LeaseTable.RouteChange c, boolean live) {
            if (cut) {
                return;
            }
            if (!live || call.isReady()) {
                backlog.set(0);
            } else if (backlog.incrementAndGet() > maxWatchBacklog) {
                cutOff(c.revision());
                return;
            }
            send(eventOf(c));
        }

        private void cutOff(long revision) {
            cut = true;
            try {
                call.onError(Status.RESOURCE_EXHAUSTED.withDescription("this route watcher fell more than "
                        + maxWatchBacklog + " changes behind (at revision " + revision
                        + "); reconnect with from_revision set to the last revision applied to resume").asRuntimeException());
            } catch (RuntimeException e) {
                // the call ended under us
            }
            Runnable r = remove;
            if (r != null) {
                r.run();
            }
        }

        private void send(RouteEvent event) {
            try {
                if (!call.isCancelled()) {
                    call.onNext(event);
                }
            } catch (RuntimeException e) {
                // the call ended under us; the cancel handler removes this watcher
            }
        }
    }

    private LeaseTable.@Nullable RouteChange lastChange; // guarded by this
    private @Nullable RouteEvent lastEvent; // guarded by this

    /** Every watcher is sent the same change in turn: build its message once, not once per watcher. */
    private synchronized RouteEvent eventOf(LeaseTable.RouteChange c) {
        if (lastChange != c || lastEvent == null) {
            RouteEvent.Builder b = RouteEvent.newBuilder().setRevision(c.revision());
            if (c.route() != null) {
                b.addRoutes(Protos.toProto(c.route()));
            } else {
                b.addRemoved(c.mailboxId());
            }
            lastEvent = b.build();
            lastChange = c;
        }
        return lastEvent;
    }

    private CompletableFuture<byte[]> read(Consistency consistency, Wire.Read read, Function<LeaseTable, byte[]> local) {
        if (consistency == Consistency.STALE) {
            try {
                return CompletableFuture.completedFuture(node.readLocal(local));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        // LEADER_LEASE and LINEARIZABLE both go to the leader; Ratis serves them from its state while
        // its leader lease holds and confirms leadership with a read index when it does not
        return raft.leaderRead(read);
    }

    private static LeasePolicy policy(long ttlMillis, long heartbeatMillis, long graceMillis) {
        return new LeasePolicy(Duration.ofMillis(ttlMillis), Duration.ofMillis(heartbeatMillis), Duration.ofMillis(graceMillis));
    }

    /** @return why these policy figures are refused (LeasePolicy's own checks), or null */
    private static @Nullable String policyProblem(long ttlMillis, long heartbeatMillis, long graceMillis) {
        try {
            policy(ttlMillis, heartbeatMillis, graceMillis);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static LeasePolicyReply policyReply(String namespace, LeasePolicy p) {
        return LeasePolicyReply.newBuilder().setNamespace(namespace).setTtlMillis(p.ttl().toMillis())
                .setHeartbeatMillis(p.heartbeatInterval().toMillis()).setGraceMillis(p.grace().toMillis()).build();
    }

    private static boolean refuseMailbox(String mailboxId, StreamObserver<?> out) {
        if (mailboxId.isBlank()) {
            out.onError(invalid("mailbox id must not be blank"));
            return true;
        }
        return false;
    }

    private static boolean refuseLeaseRef(String mailboxId, long leaseId, long epoch, StreamObserver<?> out) {
        String bad = leaseRefProblem(mailboxId, leaseId, epoch);
        if (bad != null) {
            out.onError(invalid(bad));
        }
        return bad != null;
    }

    private static @Nullable String leaseRefProblem(String mailboxId, long leaseId, long epoch) {
        if (mailboxId.isBlank()) {
            return "mailbox id must not be blank";
        }
        if (leaseId <= 0 || epoch <= 0) {
            return "lease id and epoch must be positive, were " + leaseId + " and " + epoch;
        }
        return null;
    }

    private static @Nullable String ttlProblem(long ttlMillis) {
        if (ttlMillis < LeasePolicy.MIN_TTL.toMillis() || ttlMillis > LeasePolicy.MAX_TTL.toMillis()) {
            return "ttl must be 0 (the namespace's policy) or between " + LeasePolicy.MIN_TTL + " and "
                    + LeasePolicy.MAX_TTL + ", was " + ttlMillis + " ms";
        }
        return null;
    }

    private static @Nullable String namespaceProblem(String namespace) {
        return namespace.isBlank() || namespace.contains("@")
                ? "namespace must be non-blank and without '@', was '" + namespace + "'" : null;
    }

    private static void reply(CompletableFuture<Outcome> outcome, StreamObserver<LeaseReply> out) {
        whenApplied(outcome, out, o -> {
            LeaseReply.Builder b = LeaseReply.newBuilder();
            if (o.lease() != null) {
                b.setLease(Protos.toProto(o.lease()));
            }
            answer(out, b.build());
        });
    }

    /** Runs {@code ok} with a write's outcome if it took effect; otherwise ends the call with why not. */
    private static void whenApplied(CompletableFuture<Outcome> outcome, StreamObserver<?> out,
                                    java.util.function.Consumer<Outcome> ok) {
        outcome.whenComplete((o, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
            } else if (!o.isOk()) {
                out.onError(status(o));
            } else {
                ok.accept(o);
            }
        });
    }

    private static <R> void answer(StreamObserver<R> out, R reply) {
        out.onNext(reply);
        out.onCompleted();
    }

    private static StatusRuntimeException status(Outcome o) {
        Status status = switch (o.code()) {
            case OK -> Status.OK;
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case NOT_FOUND -> Status.NOT_FOUND;
            case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
            case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
        };
        return new StatusRuntimeException(status.withDescription(o.message()));
    }

    private static StatusRuntimeException invalid(String message) {
        return new StatusRuntimeException(Status.INVALID_ARGUMENT.withDescription(message));
    }

    private static StatusRuntimeException unavailable(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return new StatusRuntimeException(Status.UNAVAILABLE.withDescription("coordinator cluster unavailable: "
                + cause.getMessage()).withCause(cause));
    }
}
