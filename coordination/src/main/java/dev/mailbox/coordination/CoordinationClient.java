package dev.mailbox.coordination;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.CreateNamespaceRequest;
import dev.mailbox.coordination.proto.GetNamespaceRequest;
import dev.mailbox.coordination.proto.GetPartitionMapRequest;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
import dev.mailbox.coordination.proto.ListNodesRequest;
import dev.mailbox.coordination.proto.ListRoutesRequest;
import dev.mailbox.coordination.proto.RegisterNodeRequest;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.GetLeasePolicyRequest;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.LeasePolicyReply;
import dev.mailbox.coordination.proto.LeaseReply;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.ReclaimLeaseRequest;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeasesRequest;
import dev.mailbox.coordination.proto.RenewResult;
import dev.mailbox.coordination.proto.RevokeLeaseRequest;
import dev.mailbox.coordination.proto.SetLeasePolicyRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A client of a coordinator cluster's control plane: leases, their policies, and cluster status.
 *
 * <p>Give it the control-plane address of one or more coordinator nodes. Any node accepts any call, but
 * the leader answers without a forwarding hop, so the client asks the nodes who leads (when it starts,
 * and whenever a call finds its node unavailable) and talks to the leader's endpoint; failing that, it
 * moves on to the next node, retrying with exponential backoff up to {@link Builder#maxAttempts} times. Every call it retries is idempotent on
 * the coordinator (the same runner acquiring again keeps its lease, under a new epoch; releasing, revoking and
 * reclaiming twice end in the same state), so a retry after a lost reply is safe.
 *
 * <p>Refusals throw {@link CoordinationException} with a {@link CoordinationException.Reason}: a
 * malformed request, no such lease, or a lease held by someone else or named with a stale id or epoch.
 * Only {@link CoordinationException.Reason#UNAVAILABLE} is retried. Thread-safe; close it when done.
 */
public final class CoordinationClient implements AutoCloseable {

    private final List<String> endpoints;
    private final List<ManagedChannel> channels;
    private final Duration callTimeout;
    private final int maxAttempts;
    private final Duration backoff;
    private final Duration maxBackoff;
    private final AtomicInteger current = new AtomicInteger();
    private final ScheduledThreadPoolExecutor scheduler;
    private static final int RENEW_PIPELINE = 2;
    private static final int RENEW_BATCH = 500;
    private final java.util.ArrayDeque<PendingRenewal> renewals = new java.util.ArrayDeque<>(); // guarded by itself
    private int renewalCalls; // guarded by renewals

    private CoordinationClient(Builder b) {
        this.endpoints = List.copyOf(b.endpoints);
        this.callTimeout = b.callTimeout;
        this.maxAttempts = b.maxAttempts;
        this.backoff = b.backoff;
        this.maxBackoff = b.maxBackoff;
        List<ManagedChannel> list = new ArrayList<>();
        for (String endpoint : endpoints) {
            list.add(NettyChannelBuilder.forTarget(endpoint).usePlaintext().build());
        }
        this.channels = List.copyOf(list);
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "coordination-client");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        if (channels.size() > 1) {
            discoverLeader(); // talk to the leader from the start: no forwarding hop
        }
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Acquires a mailbox's lease with its namespace's TTL.
     *
     * @param mailboxId the mailbox, {@code namespace@node}
     * @param holder    who holds it
     * @return the lease; if this runner already holds it, the same lease under a new epoch (the
     *         retries this client makes of one call do not count: they get the first one's answer)
     * @throws CoordinationException FAILED_PRECONDITION if another runner holds it or it is being revoked
     */
    public Lease acquire(String mailboxId, LeaseHolder holder) {
        return join(acquireAsync(mailboxId, holder, Duration.ZERO));
    }

    /**
     * Acquires a mailbox's lease.
     *
     * @param mailboxId the mailbox, {@code namespace@node}
     * @param holder    who holds it
     * @param ttl       how long it lasts without a renewal ({@link LeasePolicy#MIN_TTL} to
     *                  {@link LeasePolicy#MAX_TTL}), or zero for the namespace's policy
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if another runner holds it
     */
    public Lease acquire(String mailboxId, LeaseHolder holder, Duration ttl) {
        return join(acquireAsync(mailboxId, holder, ttl));
    }

    /**
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @param ttl       the TTL, or zero for the namespace's
     * @return the lease, or the refusal as a {@link CoordinationException}
     */
    public CompletableFuture<Lease> acquireAsync(String mailboxId, LeaseHolder holder, Duration ttl) {
        return acquireAsync(mailboxId, holder, ttl, java.util.UUID.randomUUID().toString());
    }

    /** An acquire whose every retry, here or by the caller, carries {@code requestId}. */
    CompletableFuture<Lease> acquireAsync(String mailboxId, LeaseHolder holder, Duration ttl, String requestId) {
        Objects.requireNonNull(mailboxId, "mailboxId");
        Objects.requireNonNull(holder, "holder");
        AcquireLeaseRequest r = AcquireLeaseRequest.newBuilder().setMailboxId(mailboxId).setRunnerId(holder.runnerId())
                .setNodeId(holder.nodeId()).setAddress(holder.address()).setTtlMillis(ttl.toMillis())
                .setRequestId(requestId).build();
        return call(s -> s.acquireLease(r)).thenApply(CoordinationClient::lease);
    }

    /**
     * Renews a lease: its holder's heartbeat.
     *
     * @param lease the lease as granted
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if it is no longer the mailbox's active lease
     *                               (expired, released, revoked, or a stale epoch)
     */
    public Lease renew(Lease lease) {
        return join(renewAsync(lease));
    }

    /**
     * @param lease the lease as granted
     * @return the lease, or the refusal
     */
    public CompletableFuture<Lease> renewAsync(Lease lease) {
        RenewLeaseRequest r = RenewLeaseRequest.newBuilder().setMailboxId(lease.mailboxId()).setLeaseId(lease.leaseId())
                .setEpoch(lease.epoch()).build();
        PendingRenewal p = new PendingRenewal(r, new CompletableFuture<>());
        List<PendingRenewal> batch = null;
        synchronized (renewals) {
            renewals.add(p);
            if (renewalCalls < RENEW_PIPELINE) {
                renewalCalls++;
                batch = drainRenewals();
            }
        }
        if (batch != null) {
            sendRenewals(batch);
        }
        return p.result();
    }

    /** A renewal waiting for its batch. */
    private record PendingRenewal(RenewLeaseRequest request, CompletableFuture<Lease> result) {
    }

    /** Holds the renewals lock. */
    private List<PendingRenewal> drainRenewals() {
        List<PendingRenewal> batch = new ArrayList<>(Math.min(renewals.size(), RENEW_BATCH));
        while (!renewals.isEmpty() && batch.size() < RENEW_BATCH) {
            batch.add(renewals.poll());
        }
        return batch;
    }

    /**
     * Renewals are coalesced: at most {@link #RENEW_PIPELINE} RenewLeases calls are on their way, and
     * whatever arrives meanwhile goes in the next one, so many keepers cost a few calls, not one each.
     */
    private void sendRenewals(List<PendingRenewal> batch) {
        RenewLeasesRequest.Builder b = RenewLeasesRequest.newBuilder();
        batch.forEach(p -> b.addRenewals(p.request()));
        RenewLeasesRequest request = b.build();
        call(s -> s.renewLeases(request)).whenComplete((reply, e) -> {
            if (e != null) {
                CoordinationException failure = rethrow(e);
                batch.forEach(p -> p.result().completeExceptionally(failure));
            } else {
                for (int i = 0; i < batch.size(); i++) {
                    RenewResult r = reply.getResults(i);
                    if ("OK".equals(r.getCode())) {
                        batch.get(i).result().complete(Protos.fromProto(r.getLease()));
                    } else {
                        batch.get(i).result().completeExceptionally(new CoordinationException(
                                CoordinationException.Reason.valueOf(r.getCode()), r.getMessage(), null));
                    }
                }
            }
            List<PendingRenewal> next;
            synchronized (renewals) {
                if (renewals.isEmpty()) {
                    renewalCalls--;
                    next = null;
                } else {
                    next = drainRenewals();
                }
            }
            if (next != null) {
                sendRenewals(next);
            }
        });
    }

    /**
     * Gives a lease up; releasing it again is harmless.
     *
     * @param lease the lease as granted
     * @return the released lease
     * @throws CoordinationException FAILED_PRECONDITION if it is not the mailbox's current lease
     */
    public Lease release(Lease lease) {
        ReleaseLeaseRequest r = ReleaseLeaseRequest.newBuilder().setMailboxId(lease.mailboxId())
                .setLeaseId(lease.leaseId()).setEpoch(lease.epoch()).build();
        return join(call(s -> s.releaseLease(r)).thenApply(CoordinationClient::lease));
    }

    /**
     * An operator takes a mailbox away: the epoch grows, the holder's renewals are refused, and the
     * mailbox stays unavailable until {@link #reclaim reclaimed}.
     *
     * @param mailboxId the mailbox
     * @return the revoking lease
     * @throws CoordinationException NOT_FOUND if it never had a lease, FAILED_PRECONDITION if it has no live one
     */
    public Lease revoke(String mailboxId) {
        RevokeLeaseRequest r = RevokeLeaseRequest.newBuilder().setMailboxId(mailboxId).build();
        return join(call(s -> s.revokeLease(r)).thenApply(CoordinationClient::lease));
    }

    /**
     * Frees a revoked mailbox.
     *
     * @param mailboxId the mailbox
     * @return the revoked lease
     * @throws CoordinationException FAILED_PRECONDITION unless it is revoking (or already revoked)
     */
    public Lease reclaim(String mailboxId) {
        ReclaimLeaseRequest r = ReclaimLeaseRequest.newBuilder().setMailboxId(mailboxId).build();
        return join(call(s -> s.reclaimLease(r)).thenApply(CoordinationClient::lease));
    }

    /**
     * @param mailboxId the mailbox
     * @return its latest lease (live or ended) as the leader sees it, or empty if it never had one
     */
    public Optional<Lease> get(String mailboxId) {
        return get(mailboxId, ReadConsistency.LEADER_LEASE);
    }

    /**
     * @param mailboxId   the mailbox
     * @param consistency how fresh the answer must be
     * @return its latest lease, or empty if it never had one
     */
    public Optional<Lease> get(String mailboxId, ReadConsistency consistency) {
        GetLeaseRequest r = GetLeaseRequest.newBuilder().setMailboxId(mailboxId).setConsistency(proto(consistency)).build();
        try {
            return Optional.of(join(call(s -> s.getLease(r)).thenApply(CoordinationClient::lease)));
        } catch (CoordinationException e) {
            if (e.reason() == CoordinationException.Reason.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * @param namespace a namespace, or "" for every namespace
     * @return every mailbox's latest lease in it, by mailbox id, as the leader sees it
     */
    public List<Lease> list(String namespace) {
        return list(namespace, ReadConsistency.LEADER_LEASE);
    }

    /**
     * @param namespace   a namespace, or "" for every namespace
     * @param consistency how fresh the answer must be
     * @return every mailbox's latest lease in it, by mailbox id
     */
    public List<Lease> list(String namespace, ReadConsistency consistency) {
        ListLeasesRequest r = ListLeasesRequest.newBuilder().setNamespace(namespace).setConsistency(proto(consistency))
                .build();
        return join(call(s -> s.listLeases(r)).thenApply(reply -> reply.getLeasesList().stream()
                .map(Protos::fromProto).toList()));
    }

    /**
     * Sets a namespace's lease policy; leases granted afterwards use it.
     *
     * @param namespace the namespace
     * @param policy    its policy
     * @throws CoordinationException INVALID_ARGUMENT for a malformed namespace
     */
    public void setPolicy(String namespace, LeasePolicy policy) {
        SetLeasePolicyRequest r = SetLeasePolicyRequest.newBuilder().setNamespace(namespace)
                .setTtlMillis(policy.ttl().toMillis()).setHeartbeatMillis(policy.heartbeatInterval().toMillis())
                .setGraceMillis(policy.grace().toMillis()).build();
        join(call(s -> s.setLeasePolicy(r)));
    }

    /**
     * @param namespace the namespace
     * @return its policy ({@link LeasePolicy#DEFAULT} unless one was set)
     */
    public LeasePolicy policy(String namespace) {
        GetLeasePolicyRequest r = GetLeasePolicyRequest.newBuilder().setNamespace(namespace).build();
        LeasePolicyReply p = join(call(s -> s.getLeasePolicy(r)));
        return new LeasePolicy(Duration.ofMillis(p.getTtlMillis()), Duration.ofMillis(p.getHeartbeatMillis()),
                Duration.ofMillis(p.getGraceMillis()));
    }

    /**
     * @return the status as the node this client talks to sees it
     */
    public ClusterStatus clusterStatus() {
        return join(call(s -> s.clusterStatus(ClusterStatusRequest.getDefaultInstance()))
                .thenApply(CoordinationClient::status));
    }

    /**
     * Asks every endpoint for its status, once each, without retrying.
     *
     * @return endpoint to status, for the endpoints that answered
     */
    public Map<String, ClusterStatus> clusterStatusOfEach() {
        Map<String, ClusterStatus> out = new LinkedHashMap<>();
        for (int i = 0; i < channels.size(); i++) {
            try {
                ClusterStatusReply reply = ControlPlaneGrpc.newBlockingStub(channels.get(i))
                        .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS)
                        .clusterStatus(ClusterStatusRequest.getDefaultInstance());
                out.put(endpoints.get(i), status(reply));
            } catch (StatusRuntimeException e) {
                // not answering: left out
            }
        }
        return out;
    }

    // --- nodes, partitions, namespaces, routes -----------------------------------------------------

    /**
     * What a node's registration returned.
     *
     * @param node   the node as registered
     * @param lease  its registration lease (mailbox {@code _nodes@<id>}): renew it with
     *               {@link #renew(Lease)} at the namespace's heartbeat interval, or the node goes down
     * @param ranges the partitions it owns as of the registration
     */
    public record Registration(NodeInfo node, Lease lease, List<PartitionMap.Range> ranges) {
    }

    /**
     * Registers a mailbox node (again, after a restart or after it was marked down), which acquires its
     * registration lease.
     *
     * @param node the node; {@code up} and {@code registeredAtMillis} are ignored
     * @param ttl  how long it stays up without a heartbeat, or zero for the {@code _nodes} namespace's policy
     * @return the registration
     * @throws CoordinationException INVALID_ARGUMENT for a malformed node
     */
    public Registration registerNode(NodeInfo node, Duration ttl) {
        RegisterNodeRequest r = RegisterNodeRequest.newBuilder().setNode(Protos.toProto(node))
                .setTtlMillis(ttl.toMillis()).setRequestId(java.util.UUID.randomUUID().toString()).build();
        return join(call(s -> s.registerNode(r)).thenApply(reply -> new Registration(Protos.fromProto(reply.getNode()),
                Protos.fromProto(reply.getLease()),
                reply.getPartitionRangesList().stream().map(Protos::fromProto).toList())));
    }

    /** @return every registered node, with whether it is up, as the leader has it */
    public List<NodeInfo> nodes() {
        return join(call(s -> s.listNodes(ListNodesRequest.getDefaultInstance()))
                .thenApply(reply -> reply.getNodesList().stream().map(Protos::fromProto).toList()));
    }

    /** @return the partition map over the nodes that are up */
    public PartitionMap partitionMap() {
        return join(call(s -> s.getPartitionMap(GetPartitionMapRequest.getDefaultInstance()))
                .thenApply(reply -> PartitionMap.fromRanges(reply.getRangesList().stream().map(Protos::fromProto)
                        .toList())));
    }

    /**
     * Creates a namespace.
     *
     * @param name   1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit
     * @param policy the lease policy of its mailboxes, or null for {@link LeasePolicy#DEFAULT}
     * @param labels free-form labels
     * @return the namespace, with its partition and current owner
     * @throws CoordinationException INVALID_ARGUMENT for a bad name, ALREADY_EXISTS if it exists
     */
    public NamespaceInfo createNamespace(String name, @Nullable LeasePolicy policy, Map<String, String> labels) {
        CreateNamespaceRequest.Builder b = CreateNamespaceRequest.newBuilder().setName(name).putAllLabels(labels);
        if (policy != null) {
            b.setTtlMillis(policy.ttl().toMillis()).setHeartbeatMillis(policy.heartbeatInterval().toMillis())
                    .setGraceMillis(policy.grace().toMillis());
        }
        CreateNamespaceRequest r = b.build();
        return join(call(s -> s.createNamespace(r)).thenApply(reply -> Protos.fromProto(reply.getNamespace())));
    }

    /**
     * @param name a namespace
     * @return it, or empty if the leader does not know it
     */
    public Optional<NamespaceInfo> namespace(String name) {
        GetNamespaceRequest r = GetNamespaceRequest.newBuilder().setName(name).build();
        try {
            return Optional.of(join(call(s -> s.getNamespace(r))
                    .thenApply(reply -> Protos.fromProto(reply.getNamespace()))));
        } catch (CoordinationException e) {
            if (e.reason() == CoordinationException.Reason.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** @return every namespace, by name */
    public List<NamespaceInfo> namespaces() {
        return join(call(s -> s.listNamespaces(ListNamespacesRequest.getDefaultInstance()))
                .thenApply(reply -> reply.getNamespacesList().stream().map(Protos::fromProto).toList()));
    }

    /**
     * The routing table at one revision.
     *
     * @param revision the log index of its last change
     * @param routes   a route per mailbox with an active lease, by mailbox id
     */
    public record Routes(long revision, List<Route> routes) {
    }

    /** @return the routing table as the leader has it */
    public Routes routes() {
        return join(call(s -> s.listRoutes(ListRoutesRequest.getDefaultInstance()))
                .thenApply(reply -> new Routes(reply.getRevision(), reply.getRoutesList().stream()
                        .map(Protos::fromProto).toList())));
    }

    /**
     * Starts a {@link RoutingTable} that keeps a current copy of the routing table from the
     * coordinators' WatchRoutes stream. Close it when done; closing this client stops it too.
     *
     * @return the table, already connecting
     */
    public RoutingTable watchRoutes() {
        return new RoutingTable(this);
    }

    ManagedChannel channel(int index) {
        return channels.get(Math.floorMod(index, channels.size()));
    }

    int currentEndpoint() {
        return current.get();
    }

    long pauseMillis(int attempt) {
        return pause(attempt);
    }

    /**
     * Starts building a {@link LeaseKeeper} that acquires a mailbox and keeps it.
     *
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @return the keeper's builder
     */
    public LeaseKeeper.Builder keeper(String mailboxId, LeaseHolder holder) {
        return new LeaseKeeper.Builder(this, mailboxId, holder);
    }

    /** @return the endpoints this client was given */
    public List<String> endpoints() {
        return endpoints;
    }

    ScheduledThreadPoolExecutor scheduler() {
        return scheduler;
    }

    /** Closes the connections; calls under way fail. */
    @Override
    public void close() {
        scheduler.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
    }

    // --- calls with failover --------------------------------------------------------------------------

    private <R> CompletableFuture<R> call(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc) {
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(rpc, 1, result);
        return result;
    }

    private <R> void attempt(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc, int attempt,
                             CompletableFuture<R> result) {
        int index = Math.floorMod(current.get(), channels.size());
        ListenableFuture<R> future;
        try {
            future = rpc.apply(ControlPlaneGrpc.newFutureStub(channels.get(index))
                    .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (RuntimeException e) {
            result.completeExceptionally(failure(e, index));
            return;
        }
        Futures.addCallback(future, new FutureCallback<>() {
            @Override
            public void onSuccess(R value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                CoordinationException e = failure(t, index);
                if (!e.isRetryable() || attempt >= maxAttempts || scheduler.isShutdown()) {
                    result.completeExceptionally(e);
                    return;
                }
                // this node is down or has no leader to forward to: move on, and wait for a leader
                current.compareAndSet(index, index + 1);
                retryAtLeader(rpc, attempt + 1, result, e);
            }
        }, MoreExecutors.directExecutor());
    }

    /**
     * Asks the nodes who leads and retries there as soon as one does (while the cluster elects, a call
     * to a follower would only wait in its forwarding client); without a leader it asks again after a
     * growing pause, and once the attempts are used up it sends the call wherever it can.
     */
    private <R> void retryAtLeader(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                                   int attempt, CompletableFuture<R> result, CoordinationException last) {
        discoverLeader().whenComplete((found, ignored) -> {
            try {
                if (Boolean.TRUE.equals(found) || attempt >= maxAttempts || channels.size() == 1) {
                    long pause = Boolean.TRUE.equals(found) ? 0 : pause(attempt);
                    scheduler.schedule(() -> attempt(rpc, attempt, result), pause, TimeUnit.MILLISECONDS);
                } else {
                    scheduler.schedule(() -> retryAtLeader(rpc, attempt + 1, result, last), pause(attempt),
                            TimeUnit.MILLISECONDS);
                }
            } catch (RuntimeException rejected) {
                result.completeExceptionally(last);
            }
        });
    }

    private long pause(int attempt) {
        long pause = Math.min(maxBackoff.toMillis(), backoff.toMillis() << Math.min(Math.max(attempt - 2, 0), 16));
        return pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
    }

    /**
     * Asks every endpoint who leads, briefly, and points this client at the leader's endpoint if one
     * says it is the leader. Completes when all have answered or timed out.
     */
    private CompletableFuture<Boolean> discoverLeader() {
        if (channels.size() == 1) {
            return CompletableFuture.completedFuture(false);
        }
        long deadline = Math.min(callTimeout.toMillis(), 500);
        List<CompletableFuture<Boolean>> asks = new ArrayList<>();
        for (int i = 0; i < channels.size(); i++) {
            int index = i;
            CompletableFuture<Boolean> ask = new CompletableFuture<>();
            asks.add(ask);
            try {
                Futures.addCallback(ControlPlaneGrpc.newFutureStub(channels.get(i))
                        .withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
                        .clusterStatus(ClusterStatusRequest.getDefaultInstance()), new FutureCallback<>() {
                            @Override
                            public void onSuccess(ClusterStatusReply reply) {
                                boolean leads = status(reply).isLeader();
                                if (leads) {
                                    current.set(index);
                                }
                                ask.complete(leads);
                            }

                            @Override
                            public void onFailure(Throwable t) {
                                ask.complete(false);
                            }
                        }, MoreExecutors.directExecutor());
            } catch (RuntimeException e) {
                ask.complete(false);
            }
        }
        return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
                .thenApply(v -> asks.stream().anyMatch(CompletableFuture::join));
    }

    private CoordinationException failure(Throwable t, int index) {
        Status status = Status.fromThrowable(t);
        CoordinationException.Reason reason = switch (status.getCode()) {
            case INVALID_ARGUMENT -> CoordinationException.Reason.INVALID_ARGUMENT;
            case NOT_FOUND -> CoordinationException.Reason.NOT_FOUND;
            case FAILED_PRECONDITION -> CoordinationException.Reason.FAILED_PRECONDITION;
            case ALREADY_EXISTS -> CoordinationException.Reason.ALREADY_EXISTS;
            default -> CoordinationException.Reason.UNAVAILABLE;
        };
        String message = status.getDescription() != null ? status.getDescription() : status.getCode().toString();
        if (reason == CoordinationException.Reason.UNAVAILABLE) {
            message = "coordinator " + endpoints.get(index) + ": " + status.getCode() + ": " + message;
        }
        return new CoordinationException(reason, message, t);
    }

    static <T> T join(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException(CoordinationException.Reason.UNAVAILABLE, "interrupted", e);
        } catch (ExecutionException e) {
            throw rethrow(e.getCause());
        }
    }

    static CoordinationException rethrow(@Nullable Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof CoordinationException c) {
            return c;
        }
        return new CoordinationException(CoordinationException.Reason.UNAVAILABLE, String.valueOf(t), t);
    }

    private static Lease lease(LeaseReply reply) {
        return Protos.fromProto(reply.getLease());
    }

    private static ClusterStatus status(ClusterStatusReply r) {
        Map<String, String> members = new LinkedHashMap<>();
        r.getMembersList().forEach(m -> members.put(m.getNodeId(), m.getAddress()));
        return new ClusterStatus(r.getNodeId(), r.getRole(), r.getLeaderId().isEmpty() ? null : r.getLeaderId(),
                r.getTerm(), r.getAppliedIndex(), members);
    }

    private static Consistency proto(ReadConsistency c) {
        return switch (c) {
            case STALE -> Consistency.STALE;
            case LEADER_LEASE -> Consistency.LEADER_LEASE;
            case LINEARIZABLE -> Consistency.LINEARIZABLE;
        };
    }

    /** Builds a {@link CoordinationClient}. */
    public static final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private Duration callTimeout = Duration.ofSeconds(5);
        private int maxAttempts = 10;
        private Duration backoff = Duration.ofMillis(50);
        private Duration maxBackoff = Duration.ofSeconds(1);

        private Builder() {
        }

        /**
         * @param hostPort a coordinator node's control-plane address, {@code host:port}
         * @return this builder
         */
        public Builder endpoint(String hostPort) {
            Objects.requireNonNull(hostPort, "hostPort");
            int colon = hostPort.lastIndexOf(':');
            if (colon <= 0 || colon == hostPort.length() - 1) {
                throw new IllegalArgumentException("endpoint must be host:port, was '" + hostPort + "'");
            }
            try {
                int port = Integer.parseInt(hostPort.substring(colon + 1));
                if (port < 1 || port > 65_535) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("endpoint port must be 1-65535, was '" + hostPort + "'");
            }
            endpoints.add(hostPort);
            return this;
        }

        /**
         * @param hostPorts coordinator nodes' control-plane addresses
         * @return this builder
         */
        public Builder endpoints(List<String> hostPorts) {
            hostPorts.forEach(this::endpoint);
            return this;
        }

        /**
         * @param timeout how long one attempt of a call may take (default 5 s)
         * @return this builder
         */
        public Builder callTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("callTimeout must be positive, was " + timeout);
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * @param attempts how many times a call is tried while coordinators are unavailable (default 10)
         * @return this builder
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be 1 or more, was " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * @param initial the first pause between attempts (default 50 ms); it doubles each time
         * @param max     the longest pause (default 1 s)
         * @return this builder
         */
        public Builder backoff(Duration initial, Duration max) {
            if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff must be positive with max >= initial, was " + initial
                        + " and " + max);
            }
            this.backoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /**
         * @return the client
         * @throws IllegalStateException if no endpoint was given
         */
        public CoordinationClient build() {
            if (endpoints.isEmpty()) {
                throw new IllegalStateException("at least one endpoint(...) is required");
            }
            return new CoordinationClient(this);
        }
    }
}
