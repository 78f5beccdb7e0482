package dev.mailbox.coordination.server.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.AddMemberRequest;
import dev.mailbox.coordination.proto.MembersReply;
import dev.mailbox.coordination.proto.RemoveMemberRequest;
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
import dev.mailbox.coordination.proto.state.GetLease;
import dev.mailbox.coordination.proto.state.GetPolicy;
import dev.mailbox.coordination.proto.state.LeaseList;
import dev.mailbox.coordination.proto.state.ListLeases;
import dev.mailbox.coordination.proto.state.Policy;
import dev.mailbox.coordination.proto.state.Query;
import dev.mailbox.coordination.proto.state.Renew;
import dev.mailbox.coordination.proto.state.RenewBatch;
import dev.mailbox.coordination.proto.ExportStateReply;
import dev.mailbox.coordination.proto.ExportStateRequest;
import dev.mailbox.coordination.proto.ImportStateReply;
import dev.mailbox.coordination.proto.ImportStateRequest;
import dev.mailbox.coordination.proto.state.View;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC control plane of one node. Requests are checked here first, so a malformed one is refused
 * with INVALID_ARGUMENT before it reaches the log. Writes go through the node's {@link RaftGateway}
 * (straight in while this node leads, else forwarded to the leader); renewals are linearizable leader
 * reads; lease, node, partition, namespace and route reads are as fresh as the request's consistency asks.
 */
public final class ControlPlaneService extends ControlPlaneGrpc.ControlPlaneImplBase {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ControlPlaneService.class);

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

        /** @return the highest log index this node knows to be committed */
        long commitIndex();

        /** @return why this node does not serve, or null while it serves */
        @Nullable String fault();

        /** @return node id and Raft address of each member */
        List<String[]> members();

        /**
         * Answers a read from this node's own state, whatever it has applied (a stale read).
         *
         * @param query what to read
         * @return the answer's bytes
         */
        CompletableFuture<byte[]> readLocal(Query query);

        /**
         * Adds a routing table watcher on this node.
         *
         * @param fromRevision the last revision the watcher saw, or 0
         * @param sink         where the events go
         * @return removes the watcher
         */
        Runnable watchRoutes(long fromRevision, RouteHub.Sink sink);

        /** @return a fingerprint of the state this node has applied */
        StateDigest digest();

        /**
         * @param index a command's log index
         * @return completes once this node has applied it
         */
        CompletableFuture<Void> awaitApplied(long index);

        /**
         * Writes this node's state as a backup into a file of its own (see {@link LeaseStateMachine#export}).
         *
         * @return the file, open and unlinked
         * @throws java.io.IOException if it cannot be written
         */
        LeaseStateMachine.ExportFile export() throws java.io.IOException;

        /**
         * @param nodeId  a coordinator to add
         * @param address its Raft address
         * @throws java.io.IOException if the change does not go through
         */
        void addMember(String nodeId, java.net.InetSocketAddress address) throws java.io.IOException;

        /**
         * @param nodeId a coordinator to remove
         * @throws java.io.IOException if the change does not go through
         */
        void removeMember(String nodeId) throws java.io.IOException;
    }


    private final Node node;
    private final RaftGateway raft;
    private final int maxWatchBacklog;
    private final java.util.Map<String, Consistency> readDefaults;

    /**
     * @param node the node
     * @param raft the node's way into the replicated state
     * @param maxWatchBacklog how many route changes a caught-up watcher may fall behind (its stream not
     *                        taking them) before its watch is ended (see
     *                        {@code CoordinatorNode.Builder.maxWatchBacklog})
     * @param readDefaults    the consistency of a read whose request does not say, by operation key
     *                        ({@code ReadOperation.key()}: get-lease, list-leases, list-nodes, partition-map,
     *                        get-namespace, list-namespaces, list-routes, export-state, get-queue, list-queues); LEADER_LEASE
     *                        where absent
     */
    public ControlPlaneService(Node node, RaftGateway raft, int maxWatchBacklog,
                               java.util.Map<String, Consistency> readDefaults) {
        this.node = node;
        this.raft = raft;
        this.maxWatchBacklog = maxWatchBacklog;
        this.readDefaults = java.util.Map.copyOf(readDefaults);
    }

    /** @return the consistency asked for, or the operation's default when the request does not say */
    private Consistency consistency(Consistency asked, String operation) {
        if (asked != Consistency.CONSISTENCY_UNSPECIFIED && asked != Consistency.UNRECOGNIZED) {
            return asked;
        }
        return readDefaults.getOrDefault(operation, Consistency.LEADER_LEASE);
    }

    /**
     * A level this coordinator does not know (sent by a newer client) is refused: serving it at the operation's
     * default (which an operator may have made STALE) could answer a read that asked for more than it got.
     *
     * @return why the consistency is refused, or null
     */
    private static @Nullable String consistencyProblem(Consistency asked, int value) {
        return asked != Consistency.UNRECOGNIZED ? null : "consistency " + value + " is not a read level this "
                + "coordinator knows (STALE, LEADER_LEASE, LINEARIZABLE, or unspecified for the default)";
    }

    private static boolean refuseConsistency(Consistency asked, int value, StreamObserver<?> out) {
        String bad = consistencyProblem(asked, value);
        if (bad != null) {
            out.onError(invalid(bad));
        }
        return bad != null;
    }

    @Override
    public void acquireLease(AcquireLeaseRequest r, StreamObserver<LeaseReply> out) {
        String secret = r.getHolderSecret();
        // a raw caller may send no secret: it is then a holder without one, as every holder was before them
        Command.Acquire c = new Command.Acquire(r.getMailboxId(), r.getRunnerId(), r.getNodeId(), r.getAddress(),
                r.getTtlMillis(), r.getRequestId(), secret.isEmpty() ? "" : sha256(secret), r.getSequence(), 0);
        // in the order a client meets the rules: its LeaseHolder (ids, then secret), then the call
        String bad = CoordinationLimits.holderProblem(r.getRunnerId(), r.getNodeId(), r.getAddress());
        if (bad == null && !secret.isEmpty()) {
            bad = CoordinationLimits.secretProblem(secret);
        }
        if (bad == null) {
            bad = LeaseTable.problem(c);
        }
        if (bad == null) {
            bad = CoordinationLimits.acquirableProblem(r.getMailboxId());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        reply(raft.write(c).whenComplete((o, e) -> {
            if (o != null && o.code() == Outcome.Code.FAILED_PRECONDITION && o.message().contains(DUPLICATE_RUNNER)) {
                LOG.warn("duplicate runner id: {}", o.message());
            }
        }), out);
    }

    /** What the lease table says when an acquire names the holder's runner id without its secret. */
    private static final String DUPLICATE_RUNNER = "without that holder's secret";

    private static String sha256(String secret) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * How many renewal calls (a batch each) may wait for the renewal threads before more are refused as
     * UNAVAILABLE (the client retries): a bound on what renewals can hold in memory, not a rate limit.
     */
    static final int MAX_WAITING_RENEWAL_CALLS = 4_096;

    /**
     * Renewals run on threads of their own, apart from the calls that write (issue 33: renewals must never queue
     * behind writes). Serving one is a lookup in memory on the leader (see {@code LeaseStateMachine}), so a few
     * threads keep up with tens of thousands a second; their queue is bounded.
     */
    private static final java.util.concurrent.ThreadPoolExecutor RENEWALS = new java.util.concurrent.ThreadPoolExecutor(
            Math.max(2, Runtime.getRuntime().availableProcessors()), Math.max(2, Runtime.getRuntime().availableProcessors()),
            30, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.ArrayBlockingQueue<>(MAX_WAITING_RENEWAL_CALLS),
            r -> {
                Thread t = new Thread(r, "coordinator-renewals");
                t.setDaemon(true);
                return t;
            });

    static {
        RENEWALS.allowCoreThreadTimeOut(true);
    }

    /** Runs a renewal call on the renewal threads, or refuses it as UNAVAILABLE when too many wait. */
    private static void onRenewalThread(StreamObserver<?> out, Runnable call) {
        try {
            RENEWALS.execute(call);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            out.onError(io.grpc.Status.UNAVAILABLE.withDescription("this coordinator has " + MAX_WAITING_RENEWAL_CALLS
                    + " renewal calls waiting already; retry shortly").asRuntimeException());
        }
    }

    @Override
    public void renewLease(RenewLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (refuseLeaseRef(r.getMailboxId(), r.getLeaseId(), r.getEpoch(), out)) {
            return;
        }
        onRenewalThread(out, () -> reply(raft.renew(Query.newBuilder().setRenew(renew(r)).build())
                .thenApply(Outcome::parse), out));
    }

    @Override
    public void renewLeases(RenewLeasesRequest r, StreamObserver<RenewLeasesReply> out) {
        onRenewalThread(out, () -> renewBatch(r, out));
    }

    private void renewBatch(RenewLeasesRequest r, StreamObserver<RenewLeasesReply> out) {
        int n = r.getRenewalsCount();
        if (n > CoordinationLimits.MAX_RENEWALS_PER_CALL) {
            out.onError(invalid("at most " + CoordinationLimits.MAX_RENEWALS_PER_CALL + " renewals per call, was " + n));
            return;
        }
        RenewResult[] results = new RenewResult[n];
        RenewBatch.Builder batch = RenewBatch.newBuilder();
        List<Integer> positions = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            RenewLeaseRequest one = r.getRenewals(i);
            String bad = CoordinationLimits.leaseRefProblem(one.getMailboxId(), one.getLeaseId(), one.getEpoch());
            if (bad != null) {
                results[i] = RenewResult.newBuilder().setCode("INVALID_ARGUMENT").setMessage(bad).build();
            } else {
                batch.addRenewals(renew(one));
                positions.add(i);
            }
        }
        CompletableFuture<List<Outcome>> answers = positions.isEmpty() ? CompletableFuture.completedFuture(List.of())
                : raft.renew(Query.newBuilder().setRenewBatch(batch).build()).thenApply(Outcome::parseAll);
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
        write(new Command.Release(r.getMailboxId(), r.getLeaseId(), r.getEpoch(), 0), out);
    }

    @Override
    public void revokeLease(RevokeLeaseRequest r, StreamObserver<LeaseReply> out) {
        write(new Command.Revoke(r.getMailboxId(), 0), out);
    }

    @Override
    public void reclaimLease(ReclaimLeaseRequest r, StreamObserver<LeaseReply> out) {
        write(new Command.Reclaim(r.getMailboxId(), 0), out);
    }

    /** Checks a command against the rules the state machine holds it to, then proposes it. */
    private void write(Command c, StreamObserver<LeaseReply> out) {
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
        } else {
            reply(raft.write(c), out);
        }
    }

    @Override
    public void getLease(GetLeaseRequest r, StreamObserver<LeaseReply> out) {
        String bad = CoordinationLimits.mailboxIdProblem(r.getMailboxId());
        if (bad == null) {
            bad = consistencyProblem(r.getConsistency(), r.getConsistencyValue());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        reply(read(consistency(r.getConsistency(), "get-lease"), Query.newBuilder().setGetLease(GetLease.newBuilder()
                .setMailboxId(r.getMailboxId())).build()).thenApply(Outcome::parse), out);
    }

    @Override
    public void listLeases(ListLeasesRequest r, StreamObserver<ListLeasesReply> out) {
        String bad = CoordinationLimits.namespaceFilterProblem(r.getNamespace());
        if (bad == null) {
            bad = consistencyProblem(r.getConsistency(), r.getConsistencyValue());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        Consistency consistency = consistency(r.getConsistency(), "list-leases");
        long applied = staleIndex(consistency);
        read(consistency, Query.newBuilder().setListLeases(ListLeases.newBuilder()
                .setNamespace(r.getNamespace())).build()).whenComplete((bytes, e) -> {
                    if (e != null) {
                        out.onError(unavailable(e));
                        return;
                    }
                    try {
                        answer(out, ListLeasesReply.newBuilder().addAllLeases(LeaseList.parseFrom(bytes).getLeasesList())
                                .setAppliedIndex(applied).build());
                    } catch (InvalidProtocolBufferException x) {
                        out.onError(internal("unreadable lease list: " + x.getMessage()));
                    }
                });
    }

    @Override
    public void setLeasePolicy(SetLeasePolicyRequest r, StreamObserver<LeasePolicyReply> out) {
        Command.SetPolicy c = new Command.SetPolicy(r.getNamespace(), r.getTtlMillis(), r.getHeartbeatMillis(),
                r.getGraceMillis(), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        LeasePolicy set = LeasePolicy.ofMillis(r.getTtlMillis(), r.getHeartbeatMillis(), r.getGraceMillis());
        whenApplied(raft.write(c), out, o -> answer(out, policyReply(r.getNamespace(), set)));
    }

    @Override
    public void getLeasePolicy(GetLeasePolicyRequest r, StreamObserver<LeasePolicyReply> out) {
        String bad = CoordinationLimits.namespaceOrReservedProblem(r.getNamespace());
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        raft.leaderRead(Query.newBuilder().setGetPolicy(GetPolicy.newBuilder().setNamespace(r.getNamespace())).build())
                .whenComplete((bytes, e) -> {
                    if (e != null) {
                        out.onError(unavailable(e));
                        return;
                    }
                    try {
                        Policy p = Policy.parseFrom(bytes);
                        answer(out, LeasePolicyReply.newBuilder().setNamespace(r.getNamespace())
                                .setTtlMillis(p.getTtlMillis()).setHeartbeatMillis(p.getHeartbeatMillis())
                                .setGraceMillis(p.getGraceMillis()).build());
                    } catch (InvalidProtocolBufferException x) {
                        out.onError(internal("unreadable policy: " + x.getMessage()));
                    }
                });
    }

    @Override
    public void clusterStatus(ClusterStatusRequest r, StreamObserver<ClusterStatusReply> out) {
        ClusterStatusReply.Builder b = ClusterStatusReply.newBuilder().setNodeId(node.id()).setTerm(node.term())
                .setAppliedIndex(node.appliedIndex()).setCommitIndex(node.commitIndex()).setRole(node.role());
        String fault = node.fault();
        if (fault != null) {
            b.setFault(fault);
        }
        String leader = node.leaderId();
        if (leader != null) {
            b.setLeaderId(leader);
        }
        node.members().forEach(m -> b.addMembers(Member.newBuilder().setNodeId(m[0]).setAddress(m[1])));
        if (r.getIncludeStateDigest() && fault == null) {
            StateDigest d = node.digest();
            b.setStateDigest(d.sha256()).setStateIndex(d.index());
        }
        out.onNext(b.build());
        out.onCompleted();
    }

    @Override
    public void addMember(AddMemberRequest r, StreamObserver<MembersReply> out) {
        String bad = CoordinationLimits.nodeIdProblem(r.getNodeId());
        if (bad == null) {
            bad = CoordinationLimits.addressProblem(r.getRaftAddress());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        if (node.members().stream().anyMatch(m -> m[0].equals(r.getNodeId()))) {
            out.onError(new StatusRuntimeException(Status.ALREADY_EXISTS.withDescription("coordinator '"
                    + r.getNodeId() + "' is a member already")));
            return;
        }
        int colon = r.getRaftAddress().lastIndexOf(':');
        java.net.InetSocketAddress address = java.net.InetSocketAddress.createUnresolved(
                r.getRaftAddress().substring(0, colon), Integer.parseInt(r.getRaftAddress().substring(colon + 1)));
        changeMembership(() -> node.addMember(r.getNodeId(), address), "add coordinator '" + r.getNodeId() + "' at "
                + r.getRaftAddress() + " (is it running, empty, started with the existing cluster state?)", out);
    }

    @Override
    public void removeMember(RemoveMemberRequest r, StreamObserver<MembersReply> out) {
        String bad = CoordinationLimits.nodeIdProblem(r.getNodeId());
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        List<String[]> members = node.members();
        if (members.stream().noneMatch(m -> m[0].equals(r.getNodeId()))) {
            out.onError(new StatusRuntimeException(Status.NOT_FOUND.withDescription("coordinator '" + r.getNodeId()
                    + "' is not a member; members are " + members.stream().map(m -> m[0]).toList())));
            return;
        }
        if (members.size() == 1) {
            out.onError(new StatusRuntimeException(Status.FAILED_PRECONDITION.withDescription("coordinator '"
                    + r.getNodeId() + "' is the only member; a cluster cannot remove its last member")));
            return;
        }
        changeMembership(() -> node.removeMember(r.getNodeId()), "remove coordinator '" + r.getNodeId() + "'", out);
    }

    /**
     * The whole state in one message is not served any more: it cost the coordinators (the leader that built it,
     * the follower that relayed it) several copies of the state at once, and took one past its heap (issue 30,
     * findings 1 and 2). Backups stream: {@link #exportStateStream}, {@link #importStateChunk}.
     */
    @Override
    public void exportState(ExportStateRequest r, StreamObserver<ExportStateReply> out) {
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        out.onError(new StatusRuntimeException(Status.FAILED_PRECONDITION.withDescription(WHOLE_STATE)));
    }

    /** See {@link #exportState}. */
    @Override
    public void importState(ImportStateRequest r, StreamObserver<ImportStateReply> out) {
        out.onError(new StatusRuntimeException(Status.FAILED_PRECONDITION.withDescription(WHOLE_STATE)));
    }

    private static final String WHOLE_STATE = "this coordinator exports and imports backups in chunks "
            + "(ExportStateStream, ImportStateChunk), never the whole state in one message: use a client (mailboxctl) "
            + "of this version";

    /** At most this many exports run at once on one coordinator: each writes a copy of the state to disk. */
    static final int MAX_EXPORTS = 2;
    /** An export whose client takes nothing for this long is ended, its file closed. */
    static final long EXPORT_STALL_MILLIS = 60_000;
    /** How long an export waits for this node to apply what the leader had applied when it was asked. */
    static final long EXPORT_CATCH_UP_MILLIS = 30_000;
    private final java.util.concurrent.Semaphore exports = new java.util.concurrent.Semaphore(MAX_EXPORTS);
    private static final java.util.concurrent.ScheduledExecutorService EXPORTS =
            java.util.concurrent.Executors.newScheduledThreadPool(MAX_EXPORTS, r -> {
                Thread t = new Thread(r, "coordinator-export");
                t.setDaemon(true);
                return t;
            });

    /**
     * Streams the state as a backup file, from this node's own state once it has applied everything the leader
     * had applied when asked (LINEARIZABLE, LEADER_LEASE; STALE: as this node has it): the state is written to a
     * file of this node's (under its read lock, as a snapshot is), then sent a chunk at a time as the client takes
     * them. Memory: whatever the state's size, a chunk being read and one being sent; at most {@link #MAX_EXPORTS}
     * exports at once (more: RESOURCE_EXHAUSTED); a client that takes nothing for {@link #EXPORT_STALL_MILLIS}
     * loses its export.
     */
    @Override
    public void exportStateStream(ExportStateRequest r, StreamObserver<dev.mailbox.coordination.proto.ExportStateChunk> out) {
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        if (!exports.tryAcquire()) {
            out.onError(new StatusRuntimeException(Status.RESOURCE_EXHAUSTED.withDescription("this coordinator runs "
                    + MAX_EXPORTS + " exports already; try again when one ends")));
            return;
        }
        ServerCallStreamObserver<dev.mailbox.coordination.proto.ExportStateChunk> call =
                (ServerCallStreamObserver<dev.mailbox.coordination.proto.ExportStateChunk>) out;
        ExportStream stream = new ExportStream(call, exports::release);
        call.setOnReadyHandler(stream::pump);
        call.setOnCancelHandler(stream::close);
        Consistency consistency = consistency(r.getConsistency(), "export-state");
        CompletableFuture<Void> caughtUp = consistency == Consistency.STALE ? CompletableFuture.completedFuture(null)
                : read(consistency, Query.newBuilder().setView(View.newBuilder().setKind(View.Kind.PARTITIONS)).build())
                        .thenCompose(bytes -> {
                            long leaderApplied;
                            try {
                                leaderApplied = PartitionMapReply.parseFrom(bytes).getAppliedIndex();
                            } catch (InvalidProtocolBufferException e) {
                                throw new CompletionException(e);
                            }
                            return node.awaitApplied(leaderApplied).orTimeout(EXPORT_CATCH_UP_MILLIS,
                                    java.util.concurrent.TimeUnit.MILLISECONDS);
                        });
        caughtUp.thenApplyAsync(v -> {
            try {
                return node.export();
            } catch (java.io.IOException e) {
                throw new CompletionException(e);
            }
        }, EXPORTS).whenComplete((file, e) -> {
            if (e != null) {
                stream.fail(e instanceof CompletionException && e.getCause() instanceof java.util.concurrent.TimeoutException
                        ? new StatusRuntimeException(Status.UNAVAILABLE.withDescription("this coordinator did not catch "
                        + "up with the leader within " + EXPORT_CATCH_UP_MILLIS + " ms: export from another one"))
                        : unavailable(e));
            } else {
                stream.begin(file);
            }
        });
    }

    /** One export: its file, sent a chunk at a time while the call can take one. */
    private static final class ExportStream {
        private final ServerCallStreamObserver<dev.mailbox.coordination.proto.ExportStateChunk> call;
        private final Runnable release;
        private LeaseStateMachine.@Nullable ExportFile file; // guarded by this
        private long offset; // guarded by this
        private boolean done; // guarded by this
        private long progressAt = System.nanoTime(); // guarded by this
        private final java.security.MessageDigest sha;
        private final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(CoordinationLimits.MAX_IMPORT_CHUNK_BYTES);
        private java.util.concurrent.@Nullable ScheduledFuture<?> watchdog;

        ExportStream(ServerCallStreamObserver<dev.mailbox.coordination.proto.ExportStateChunk> call, Runnable release) {
            this.call = call;
            this.release = release;
            try {
                this.sha = java.security.MessageDigest.getInstance("SHA-256");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JVM", e);
            }
        }

        synchronized void begin(LeaseStateMachine.ExportFile f) {
            if (done) { // cancelled while the file was written
                closeQuietly(f.channel());
                return;
            }
            file = f;
            progressAt = System.nanoTime();
            watchdog = EXPORTS.scheduleWithFixedDelay(this::checkStalled, 1, 1, java.util.concurrent.TimeUnit.SECONDS);
            pump();
        }

        synchronized void pump() {
            LeaseStateMachine.ExportFile f = file;
            if (f == null || done) {
                return;
            }
            try {
                while (!done && call.isReady()) {
                    buffer.clear();
                    int n = 0;
                    while (buffer.hasRemaining() && offset + n < f.size()) {
                        int read = f.channel().read(buffer, offset + n);
                        if (read < 0) {
                            throw new java.io.IOException("the export file ended at " + (offset + n) + " of " + f.size()
                                    + " bytes");
                        }
                        n += read;
                    }
                    buffer.flip();
                    com.google.protobuf.ByteString data = com.google.protobuf.ByteString.copyFrom(buffer);
                    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                    buffer.rewind();
                    crc.update(buffer);
                    buffer.rewind();
                    sha.update(buffer);
                    var chunk = dev.mailbox.coordination.proto.ExportStateChunk.newBuilder().setOffset(offset)
                            .setData(data).setCrc32C((int) crc.getValue());
                    if (offset == 0) {
                        chunk.setTotalBytes(f.size()).setAppliedIndex(f.appliedIndex());
                    }
                    offset += n;
                    boolean last = offset >= f.size();
                    if (last) {
                        chunk.setLast(true).setSha256(com.google.protobuf.ByteString.copyFrom(sha.digest()));
                    }
                    call.onNext(chunk.build());
                    progressAt = System.nanoTime();
                    if (last) {
                        call.onCompleted();
                        close();
                    }
                }
            } catch (java.io.IOException | RuntimeException e) {
                fail(new StatusRuntimeException(Status.INTERNAL.withDescription("export failed on this coordinator: "
                        + e.getMessage())));
            }
        }

        synchronized void checkStalled() {
            if (!done && System.nanoTime() - progressAt > java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                    EXPORT_STALL_MILLIS)) {
                fail(new StatusRuntimeException(Status.RESOURCE_EXHAUSTED.withDescription("the export took nothing for "
                        + EXPORT_STALL_MILLIS + " ms; it was ended")));
            }
        }

        synchronized void fail(StatusRuntimeException status) {
            if (done) {
                return;
            }
            try {
                call.onError(status);
            } catch (RuntimeException e) {
                // the call ended under us
            }
            close();
        }

        synchronized void close() {
            if (done) {
                return;
            }
            done = true;
            if (watchdog != null) {
                watchdog.cancel(false);
            }
            if (file != null) {
                closeQuietly(file.channel());
            }
            release.run();
        }

        private static void closeQuietly(java.nio.channels.FileChannel channel) {
            try {
                channel.close();
            } catch (java.io.IOException e) {
                // read-only, unlinked: nothing to lose
            }
        }
    }

    /**
     * One chunk of a backup being imported: checked here (size, checksum) and then proposed, to be applied by every
     * member into the import's staged state (see {@link LeaseTable}). Memory: the chunk, at most
     * {@link CoordinationLimits#MAX_IMPORT_CHUNK_BYTES}.
     */
    @Override
    public void importStateChunk(dev.mailbox.coordination.proto.ImportChunkRequest r,
                                 StreamObserver<dev.mailbox.coordination.proto.ImportChunkReply> out) {
        Command.ImportChunk c = new Command.ImportChunk(r.getImportId(), r.getOffset(), r.getData(), r.getCrc32C(),
                r.getLast(), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(c), out, o -> {
            var reply = dev.mailbox.coordination.proto.ImportChunkReply.newBuilder().setNextOffset(o.nextOffset())
                    .setDone(o.imported() != null);
            if (o.imported() != null) {
                reply.setImported(o.imported());
            }
            answer(out, reply.build());
        });
    }


    /**
     * Runs a membership change (it blocks while the leader brings a new member up to date, on this call's
     * executor thread) and answers with the configuration after it.
     */
    private void changeMembership(MembershipChange change, String what, StreamObserver<MembersReply> out) {
        try {
            change.run();
        } catch (java.io.IOException | RuntimeException e) {
            // not retried as is: the usual cause (a new member that is not running) needs an operator
            out.onError(new StatusRuntimeException(Status.FAILED_PRECONDITION.withDescription("could not " + what
                    + ": " + e)));
            return;
        }
        MembersReply.Builder b = MembersReply.newBuilder();
        node.members().forEach(m -> b.addMembers(Member.newBuilder().setNodeId(m[0]).setAddress(m[1])));
        answer(out, b.build());
    }

    @FunctionalInterface
    private interface MembershipChange {
        void run() throws java.io.IOException;
    }

    @Override
    public void registerNode(RegisterNodeRequest r, StreamObserver<RegisterNodeReply> out) {
        dev.mailbox.coordination.proto.NodeInfo n = r.getNode();
        Command.RegisterNode c = new Command.RegisterNode(n.getNodeId(), n.getAddress(), n.getRegion(), n.getVersion(),
                n.getCapabilitiesList(), new java.util.TreeMap<>(n.getLabelsMap()), r.getTtlMillis(), r.getRequestId(), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(c), out, o -> {
                    // the leader's partition map: it has applied the registration, a forwarding follower may not have
                    view(Consistency.LEADER_LEASE, View.Kind.PARTITIONS, "", PartitionMapReply.parser(), out, map -> {
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
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        view(consistency(r.getConsistency(), "list-nodes"), View.Kind.NODES, "", ListNodesReply.parser(), out);
    }

    @Override
    public void getPartitionMap(GetPartitionMapRequest r, StreamObserver<PartitionMapReply> out) {
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        view(consistency(r.getConsistency(), "partition-map"), View.Kind.PARTITIONS, "", PartitionMapReply.parser(), out);
    }

    @Override
    public void createNamespace(CreateNamespaceRequest r, StreamObserver<NamespaceReply> out) {
        Command.CreateNamespace c = new Command.CreateNamespace(r.getName(), r.getTtlMillis(), r.getHeartbeatMillis(),
                r.getGraceMillis(), new java.util.TreeMap<>(r.getLabelsMap()), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        // answered by a leader read: the leader has applied the create when the write returns, while
        // a follower that forwarded it may not have yet
        whenApplied(raft.write(c), out,
                o -> view(Consistency.LEADER_LEASE, View.Kind.NAMESPACE, r.getName(), NamespaceReply.parser(), out));
    }

    @Override
    public void getNamespace(GetNamespaceRequest r, StreamObserver<NamespaceReply> out) {
        String bad = CoordinationLimits.namespaceProblem(r.getName());
        if (bad == null) {
            bad = consistencyProblem(r.getConsistency(), r.getConsistencyValue());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        view(consistency(r.getConsistency(), "get-namespace"), View.Kind.NAMESPACE, r.getName(), NamespaceReply.parser(), out);
    }

    @Override
    public void listNamespaces(ListNamespacesRequest r, StreamObserver<ListNamespacesReply> out) {
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        Consistency consistency = consistency(r.getConsistency(), "list-namespaces");
        long applied = staleIndex(consistency);
        view(consistency, View.Kind.NAMESPACES, "", ListNamespacesReply.parser(), out,
                m -> answer(out, m.toBuilder().setAppliedIndex(applied).build()));
    }

    /**
     * How fresh a STALE read's answer is at least: this node's applied index, taken before the read (what
     * it has applied only grows, so the answer holds at least this much). 0 for a leader read, whose
     * answer is as fresh as the leader's commit.
     */
    private long staleIndex(Consistency consistency) {
        return consistency == Consistency.STALE ? Math.max(node.appliedIndex(), 0) : 0;
    }

    @Override
    public void listRoutes(ListRoutesRequest r, StreamObserver<RoutesReply> out) {
        if (refuseConsistency(r.getConsistency(), r.getConsistencyValue(), out)) {
            return;
        }
        view(consistency(r.getConsistency(), "list-routes"), View.Kind.ROUTES, "", RoutesReply.parser(), out);
    }

    // --- queue records ---------------------------------------------------------------------------

    @Override
    public void createQueue(dev.mailbox.coordination.proto.CreateQueueRequest r,
                            StreamObserver<dev.mailbox.coordination.proto.QueueReply> out) {
        Command.CreateQueue c = new Command.CreateQueue(Protos.fromProto(r.getQueue()), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(c), out, o -> answer(out, queueReply(o).setCreated(o.created()).build()));
    }

    @Override
    public void getQueue(dev.mailbox.coordination.proto.GetQueueRequest r,
                         StreamObserver<dev.mailbox.coordination.proto.QueueReply> out) {
        String bad = CoordinationLimits.queueNameProblem(r.getName());
        if (bad == null) {
            bad = consistencyProblem(r.getConsistency(), r.getConsistencyValue());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        view(consistency(r.getConsistency(), "get-queue"), View.Kind.QUEUE, r.getName(),
                dev.mailbox.coordination.proto.QueueReply.parser(), out);
    }

    @Override
    public void listQueues(dev.mailbox.coordination.proto.ListQueuesRequest r,
                           StreamObserver<dev.mailbox.coordination.proto.ListQueuesReply> out) {
        String bad = CoordinationLimits.queueListProblem(r.getPrefix(), r.getAfter(), r.getLimit());
        if (bad == null) {
            bad = consistencyProblem(r.getConsistency(), r.getConsistencyValue());
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        java.util.function.Predicate<String> visible = Guard.QUEUE_FILTER.get();
        listQueues(consistency(r.getConsistency(), "list-queues"), r.getPrefix(), r.getAfter(), r.getLimit(),
                visible == null ? name -> true : visible, new ArrayList<>(), out);
    }

    /**
     * Pages through the queue names as the state machine lists them, keeping those the caller may see, until the
     * page asked for is full or the names run out: a caller that may see only some queues still gets full pages,
     * so it can tell the last page by its being short.
     */
    private void listQueues(Consistency consistency, String prefix, String after, int limit,
                            java.util.function.Predicate<String> visible, List<String> names,
                            StreamObserver<dev.mailbox.coordination.proto.ListQueuesReply> out) {
        View v = View.newBuilder().setKind(View.Kind.QUEUES).setPrefix(prefix).setAfter(after).setLimit(limit).build();
        read(consistency, Query.newBuilder().setView(v).build()).whenComplete((bytes, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
                return;
            }
            List<String> page;
            try {
                page = dev.mailbox.coordination.proto.ListQueuesReply.parseFrom(bytes).getNamesList();
            } catch (InvalidProtocolBufferException x) {
                out.onError(internal("unreadable queue list: " + x.getMessage()));
                return;
            }
            for (String name : page) {
                if (names.size() < limit && visible.test(name)) {
                    names.add(name);
                }
            }
            if (names.size() < limit && page.size() == limit) {
                listQueues(consistency, prefix, page.get(page.size() - 1), limit, visible, names, out);
            } else {
                answer(out, dev.mailbox.coordination.proto.ListQueuesReply.newBuilder().addAllNames(names).build());
            }
        });
    }

    @Override
    public void updateQueue(dev.mailbox.coordination.proto.UpdateQueueRequest r,
                            StreamObserver<dev.mailbox.coordination.proto.QueueReply> out) {
        Command.UpdateQueue c = new Command.UpdateQueue(r.getName(), new java.util.TreeMap<>(r.getSetAttributesMap()),
                new java.util.TreeSet<>(r.getRemovedAttributesList()), new java.util.TreeMap<>(r.getSetTagsMap()),
                new java.util.TreeSet<>(r.getRemovedTagsList()), r.getModifiedAtMillis(), 0);
        // a repeated key would vanish in the sorted set: count what was sent
        String bad = r.getRemovedAttributesCount() > CoordinationLimits.MAX_QUEUE_ATTRIBUTES
                ? "at most " + CoordinationLimits.MAX_QUEUE_ATTRIBUTES + " queue attributes removed at once, was "
                + r.getRemovedAttributesCount()
                : r.getRemovedTagsCount() > CoordinationLimits.MAX_QUEUE_TAGS ? "at most " + CoordinationLimits.MAX_QUEUE_TAGS
                + " tags removed at once, was " + r.getRemovedTagsCount() : null;
        if (bad == null) {
            bad = LeaseTable.problem(c);
        }
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(c), out, o -> answer(out, queueReply(o).build()));
    }

    @Override
    public void deleteQueue(dev.mailbox.coordination.proto.DeleteQueueRequest r,
                            StreamObserver<dev.mailbox.coordination.proto.DeleteQueueReply> out) {
        Command.DeleteQueue c = new Command.DeleteQueue(r.getName(), 0);
        String bad = LeaseTable.problem(c);
        if (bad != null) {
            out.onError(invalid(bad));
            return;
        }
        whenApplied(raft.write(c), out, o -> {
            var b = dev.mailbox.coordination.proto.DeleteQueueReply.newBuilder();
            if (o.queue() != null) {
                b.setQueue(Protos.toProto(o.queue()));
            }
            answer(out, b.build());
        });
    }

    private static dev.mailbox.coordination.proto.QueueReply.Builder queueReply(Outcome o) {
        var b = dev.mailbox.coordination.proto.QueueReply.newBuilder();
        if (o.queue() != null) {
            b.setQueue(Protos.toProto(o.queue()));
        }
        return b;
    }

    /** Reads nodes, partitions, namespaces or routes as fresh as asked, and answers with the reply message. */
    private <M> void view(Consistency consistency, View.Kind kind, String arg, Parser<M> parser,
                          StreamObserver<M> out) {
        view(consistency, kind, arg, parser, out, m -> answer(out, m));
    }

    /** Reads a view and hands its reply message on, or ends the call with a status naming what failed. */
    private <M> void view(Consistency consistency, View.Kind kind, String arg, Parser<M> parser,
                          StreamObserver<?> out, java.util.function.Consumer<M> then) {
        View v = View.newBuilder().setKind(kind).setNamespace(arg).build();
        read(consistency, Query.newBuilder().setView(v).build()).whenComplete((bytes, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
            } else if (kind == View.Kind.NAMESPACE && bytes.length == 0) {
                out.onError(new StatusRuntimeException(Status.NOT_FOUND.withDescription("no namespace '" + arg + "'")));
            } else if (kind == View.Kind.QUEUE && bytes.length == 0) {
                out.onError(new StatusRuntimeException(Status.NOT_FOUND.withDescription("no queue '" + arg + "'")));
            } else {
                M message;
                try {
                    message = parser.parseFrom(bytes);
                } catch (InvalidProtocolBufferException x) {
                    out.onError(internal("unreadable " + kind + " answer: " + x.getMessage()));
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
        RouteSink sink = new RouteSink(call, r.getSnapshotInParts());
        call.setOnReadyHandler(sink::pump);
        Runnable cancel = node.watchRoutes(r.getFromRevision(), sink);
        call.setOnCancelHandler(cancel);
        if (call.isCancelled()) {
            cancel.run();
            return;
        }
        sink.pump(); // the first events, here rather than under the state machine's lock
    }

    /**
     * One watcher's stream. The hub sends it events only while gRPC says the stream takes them, so nothing
     * queues here: a stalled watcher falls behind in the hub's shared log, and past {@link #maxWatchBacklog}
     * changes it is ended (and resumes from its revision when it reconnects).
     */
    private final class RouteSink implements RouteHub.Sink {
        private final ServerCallStreamObserver<RouteEvent> call;
        private final boolean parts;
        private volatile Runnable pump = () -> { };

        RouteSink(ServerCallStreamObserver<RouteEvent> call, boolean parts) {
            this.call = call;
            this.parts = parts;
        }

        void pump() {
            pump.run();
        }

        @Override
        public boolean isReady() {
            return !call.isCancelled() && call.isReady();
        }

        @Override
        public void send(RouteEvent event) {
            try {
                call.onNext(event);
            } catch (RuntimeException e) {
                // the call ended under us; the cancel handler removes this watcher
            }
        }

        @Override
        public void end(Status status) {
            try {
                call.onError(status.asRuntimeException());
            } catch (RuntimeException e) {
                // the call ended under us
            }
        }

        @Override
        public boolean inParts() {
            return parts;
        }

        @Override
        public int maxBacklog() {
            return maxWatchBacklog;
        }

        @Override
        public void attach(Runnable pump) {
            this.pump = pump;
        }
    }

    private CompletableFuture<byte[]> read(Consistency consistency, Query query) {
        if (consistency == Consistency.STALE) {
            return node.readLocal(query);
        }
        if (consistency == Consistency.LINEARIZABLE) {
            // the leader confirms with a majority that it still leads, whatever its lease says
            return raft.leaderRead(query.toBuilder().setConfirmLeadership(true).build());
        }
        // LEADER_LEASE: Ratis serves it from the leader's state while its leader lease holds, and with a read
        // index when it does not
        return raft.leaderRead(query);
    }

    private static Renew renew(RenewLeaseRequest r) {
        return Renew.newBuilder().setMailboxId(r.getMailboxId()).setLeaseId(r.getLeaseId()).setEpoch(r.getEpoch())
                .build();
    }

    private static LeasePolicyReply policyReply(String namespace, LeasePolicy p) {
        return LeasePolicyReply.newBuilder().setNamespace(namespace).setTtlMillis(p.ttl().toMillis())
                .setHeartbeatMillis(p.heartbeatInterval().toMillis()).setGraceMillis(p.grace().toMillis()).build();
    }

    private static boolean refuseLeaseRef(String mailboxId, long leaseId, long epoch, StreamObserver<?> out) {
        String bad = CoordinationLimits.leaseRefProblem(mailboxId, leaseId, epoch);
        if (bad != null) {
            out.onError(invalid(bad));
        }
        return bad != null;
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

    private static StatusRuntimeException internal(String message) {
        return new StatusRuntimeException(Status.INTERNAL.withDescription(message));
    }

    private static StatusRuntimeException invalid(String message) {
        return new StatusRuntimeException(Status.INVALID_ARGUMENT.withDescription(message));
    }

    /**
     * What a failed write or read becomes. The cluster being unreachable, leaderless or slow is UNAVAILABLE
     * (worth retrying, perhaps elsewhere); anything else is a fault of this server or of the request that
     * retrying cannot fix, and is INTERNAL, never UNKNOWN.
     */
    static StatusRuntimeException unavailable(Throwable e) {
        Throwable cause = e;
        while ((cause instanceof CompletionException || cause instanceof java.util.concurrent.ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof IllegalArgumentException
                || (cause instanceof IllegalStateException && (cause.getMessage() == null
                        || !cause.getMessage().startsWith(LeaseStateMachine.NOT_LEADING)))) {
            return internal("coordinator failed the request: " + cause.getMessage());
        }
        return new StatusRuntimeException(Status.UNAVAILABLE.withDescription("coordinator cluster unavailable: "
                + cause.getMessage()).withCause(cause));
    }
}
