package dev.mailbox.coordination.internal;

import static dev.mailbox.coordination.CoordinationLimits.require;

import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.Leases;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.LeaseReply;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.ReclaimLeaseRequest;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeasesRequest;
import dev.mailbox.coordination.proto.RenewResult;
import dev.mailbox.coordination.proto.RevokeLeaseRequest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** {@link Leases} over the control plane, with renewals coalesced into batched calls. */
final class GrpcLeases implements Leases {

    /** At most this many RenewLeases calls are on their way at once. */
    private static final int RENEW_PIPELINE = 2;
    private static final int RENEW_BATCH = 500;

    private final ControlPlaneCalls calls;
    private final ArrayDeque<PendingRenewal> renewals = new ArrayDeque<>(); // guarded by itself
    private int renewalCalls; // guarded by renewals

    GrpcLeases(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public Lease acquire(String mailboxId, LeaseHolder holder) {
        return acquire(mailboxId, holder, Duration.ZERO);
    }

    @Override
    public Lease acquire(String mailboxId, LeaseHolder holder, Duration ttl) {
        return CoordinationException.await(acquireAsync(mailboxId, holder, ttl));
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(String mailboxId, LeaseHolder holder, Duration ttl, String requestId) {
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(requestId, "requestId");
        // in the control plane's order, so both name the same problem first
        CoordinationLimits.requireMailboxId(mailboxId);
        require(CoordinationLimits.requestedTtlProblem(ttl)); // on the Duration: ttl.toMillis() truncates, overflows
        require(CoordinationLimits.requestIdProblem(requestId));
        require(CoordinationLimits.acquirableProblem(mailboxId));
        AcquireLeaseRequest r = AcquireLeaseRequest.newBuilder().setMailboxId(mailboxId).setRunnerId(holder.runnerId())
                .setNodeId(holder.nodeId()).setAddress(holder.address()).setTtlMillis(ttl.toMillis())
                .setRequestId(requestId).setHolderSecret(holder.secret())
                // one number per call, kept on its retries: a late copy of this call cannot fence a newer one
                .setSequence(CallSequence.next()).build();
        return calls.call(s -> s.acquireLease(r)).thenApply(GrpcLeases::lease);
    }

    @Override
    public Lease renew(Lease lease) {
        return CoordinationException.await(renewAsync(lease));
    }

    @Override
    public CompletableFuture<Lease> renewAsync(Lease lease) {
        require(CoordinationLimits.leaseRefProblem(lease.mailboxId(), lease.leaseId(), lease.epoch()));
        RenewLeaseRequest r = RenewLeaseRequest.newBuilder().setMailboxId(lease.mailboxId()).setLeaseId(lease.leaseId())
                .setEpoch(lease.epoch()).build();
        PendingRenewal p = new PendingRenewal(r, lease, new CompletableFuture<>());
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
    private record PendingRenewal(RenewLeaseRequest request, Lease lease, CompletableFuture<Lease> result) {
        long ttlMillis() {
            return lease.ttlMillis();
        }
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
        // one attempt of a batch may take a third of the shortest TTL in it: then it is retried elsewhere
        long attemptMillis = Math.min(calls.callTimeout().toMillis(),
                Math.max(100, batch.stream().mapToLong(PendingRenewal::ttlMillis).min().orElse(0) / 3));
        calls.call(s -> s.renewLeases(request), attemptMillis).whenComplete((reply, e) -> {
            try {
                if (e != null) {
                    CoordinationException failure = CoordinationException.of(e);
                    batch.forEach(p -> p.result().completeExceptionally(failure));
                } else {
                    for (int i = 0; i < batch.size(); i++) {
                        complete(batch.get(i), i < reply.getResultsCount() ? reply.getResults(i) : null);
                    }
                }
            } catch (RuntimeException unexpected) {
                // whatever went wrong, every renewal of the batch is answered and the pipeline goes on: a renewal
                // left hanging here would hold its keeper, and a call slot never given back would stop them all
                CoordinationException failure = new CoordinationException(CoordinationException.Reason.INTERNAL,
                        "the renewals' answer could not be read: " + unexpected, unexpected);
                batch.forEach(p -> p.result().completeExceptionally(failure));
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
     * Answers one renewal of a batch from its result. A coordinator of a newer version may send a lease state or a
     * code this client does not know: an OK renewal is then the renewal of the lease as the caller holds it (the
     * coordinator accepted its id and epoch), and an unknown code a refusal that says what it was; neither may
     * break the other renewals of the batch (issue 30, finding 8).
     */
    private static void complete(PendingRenewal p, @org.jspecify.annotations.Nullable RenewResult r) {
        if (r == null) {
            p.result().completeExceptionally(new CoordinationException(CoordinationException.Reason.INTERNAL,
                    "the coordinator answered fewer renewals than the batch held", null));
        } else if ("OK".equals(r.getCode())) {
            p.result().complete(Protos.isKnownState(r.getLease().getStateValue()) ? Protos.fromProto(r.getLease())
                    : p.lease());
        } else {
            CoordinationException.Reason reason;
            try {
                reason = CoordinationException.Reason.valueOf(r.getCode());
            } catch (IllegalArgumentException unknown) {
                reason = CoordinationException.Reason.INTERNAL;
            }
            String message = reason == CoordinationException.Reason.INTERNAL && !"INTERNAL".equals(r.getCode())
                    ? r.getCode() + ": " + r.getMessage() : r.getMessage();
            p.result().completeExceptionally(new CoordinationException(reason, message, null));
        }
    }

    @Override
    public Lease release(Lease lease) {
        require(CoordinationLimits.leaseRefProblem(lease.mailboxId(), lease.leaseId(), lease.epoch()));
        ReleaseLeaseRequest r = ReleaseLeaseRequest.newBuilder().setMailboxId(lease.mailboxId())
                .setLeaseId(lease.leaseId()).setEpoch(lease.epoch()).build();
        return CoordinationException.await(calls.call(s -> s.releaseLease(r)).thenApply(GrpcLeases::lease));
    }

    @Override
    public Lease revoke(String mailboxId) {
        RevokeLeaseRequest r = RevokeLeaseRequest.newBuilder()
                .setMailboxId(CoordinationLimits.requireMailboxId(mailboxId)).build();
        return CoordinationException.await(calls.call(s -> s.revokeLease(r)).thenApply(GrpcLeases::lease));
    }

    @Override
    public Lease reclaim(String mailboxId) {
        ReclaimLeaseRequest r = ReclaimLeaseRequest.newBuilder()
                .setMailboxId(CoordinationLimits.requireMailboxId(mailboxId)).build();
        return CoordinationException.await(calls.call(s -> s.reclaimLease(r)).thenApply(GrpcLeases::lease));
    }

    @Override
    public Optional<Lease> get(String mailboxId, @org.jspecify.annotations.Nullable ReadConsistency consistency) {
        GetLeaseRequest r = GetLeaseRequest.newBuilder().setMailboxId(CoordinationLimits.requireMailboxId(mailboxId))
                .setConsistency(Protos.toProto(consistency)).build();
        return found(() -> CoordinationException.await(calls.call(s -> s.getLease(r)).thenApply(GrpcLeases::lease)));
    }

    @Override
    public List<Lease> list(String namespace, @org.jspecify.annotations.Nullable ReadConsistency consistency) {
        require(CoordinationLimits.namespaceFilterProblem(namespace));
        ListLeasesRequest r = ListLeasesRequest.newBuilder().setNamespace(namespace)
                .setConsistency(Protos.toProto(consistency)).build();
        return CoordinationException.await(calls.call(s -> s.listLeases(r)).thenApply(reply -> reply.getLeasesList()
                .stream().map(Protos::fromProto).toList()));
    }

    @Override
    public dev.mailbox.coordination.StaleRead<List<Lease>> listStale(String namespace) {
        require(CoordinationLimits.namespaceFilterProblem(namespace));
        ListLeasesRequest r = ListLeasesRequest.newBuilder().setNamespace(namespace)
                .setConsistency(Protos.toProto(ReadConsistency.STALE)).build();
        return CoordinationException.await(calls.call(s -> s.listLeases(r)).thenApply(reply ->
                new dev.mailbox.coordination.StaleRead<>(reply.getLeasesList().stream().map(Protos::fromProto).toList(),
                        reply.getAppliedIndex())));
    }

    /** Runs a lookup; NOT_FOUND becomes empty. */
    static <T> Optional<T> found(java.util.function.Supplier<T> lookup) {
        try {
            return Optional.of(lookup.get());
        } catch (CoordinationException e) {
            if (e.reason() == CoordinationException.Reason.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private static Lease lease(LeaseReply reply) {
        return Protos.fromProto(reply.getLease());
    }
}
