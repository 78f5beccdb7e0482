package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.LeaseReply;
import dev.mailbox.coordination.proto.ListLeasesReply;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.Member;
import dev.mailbox.coordination.proto.ReclaimLeaseRequest;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RevokeLeaseRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC control plane of one node. Writes go through the node's Ratis client (which finds the
 * leader: a follower forwards); renewals and reads are served as the request's consistency asks.
 */
public final class ControlPlaneService extends ControlPlaneGrpc.ControlPlaneImplBase {

    /** What the service needs of its node. */
    public interface Node {
        /** @return the node's id */
        String id();

        /** @return the leader's id, or null */
        @Nullable String leaderId();

        /** @return the current term */
        long term();

        /** @return the last applied index */
        long appliedIndex();

        /** @return node id and Raft address of each member */
        List<String[]> members();

        /** @return this node's own table, for stale reads */
        LeaseTable localTable();
    }

    private final Node node;
    private final LeaseClient raft;

    /**
     * @param node the node
     * @param raft a Ratis client of the node's group
     */
    public ControlPlaneService(Node node, LeaseClient raft) {
        this.node = node;
        this.raft = raft;
    }

    @Override
    public void acquireLease(AcquireLeaseRequest r, StreamObserver<LeaseReply> out) {
        write(new Command.Acquire(r.getMailboxId(), r.getRunnerId(), r.getNodeId(), r.getAddress(), r.getTtlMillis(), 0),
                out);
    }

    @Override
    public void renewLease(RenewLeaseRequest r, StreamObserver<LeaseReply> out) {
        reply(raft.renewAsync(r.getMailboxId(), r.getLeaseId(), r.getEpoch()), out);
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

    @Override
    public void getLease(GetLeaseRequest r, StreamObserver<LeaseReply> out) {
        if (r.getConsistency() == Consistency.STALE) {
            Lease l = node.localTable().get(r.getMailboxId());
            reply(CompletableFuture.completedFuture(l == null ? Outcome.notFound(r.getMailboxId()) : Outcome.ok(l)), out);
        } else {
            boolean linearizable = r.getConsistency() == Consistency.LINEARIZABLE;
            reply(CompletableFuture.supplyAsync(() -> raft.get(r.getMailboxId(), linearizable)), out);
        }
    }

    @Override
    public void listLeases(ListLeasesRequest r, StreamObserver<ListLeasesReply> out) {
        Supplier<List<Lease>> read;
        if (r.getConsistency() == Consistency.STALE) {
            read = () -> node.localTable().leases().stream()
                    .filter(l -> r.getNamespace().isEmpty() || l.namespace().equals(r.getNamespace())).toList();
        } else {
            boolean linearizable = r.getConsistency() == Consistency.LINEARIZABLE;
            read = () -> raft.list(r.getNamespace(), linearizable);
        }
        CompletableFuture.supplyAsync(read).whenComplete((leases, e) -> {
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
    public void clusterStatus(ClusterStatusRequest r, StreamObserver<ClusterStatusReply> out) {
        ClusterStatusReply.Builder b = ClusterStatusReply.newBuilder().setNodeId(node.id()).setTerm(node.term())
                .setAppliedIndex(node.appliedIndex());
        String leader = node.leaderId();
        if (leader != null) {
            b.setLeaderId(leader);
        }
        node.members().forEach(m -> b.addMembers(Member.newBuilder().setNodeId(m[0]).setAddress(m[1])));
        out.onNext(b.build());
        out.onCompleted();
    }

    private void write(Command command, StreamObserver<LeaseReply> out) {
        reply(raft.writeAsync(command), out);
    }

    private static void reply(CompletableFuture<Outcome> outcome, StreamObserver<LeaseReply> out) {
        outcome.whenComplete((o, e) -> {
            if (e != null) {
                out.onError(unavailable(e));
                return;
            }
            Status status = switch (o.code()) {
                case OK -> Status.OK;
                case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
                case NOT_FOUND -> Status.NOT_FOUND;
                case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
            };
            if (!status.isOk()) {
                out.onError(new StatusRuntimeException(status.withDescription(o.message())));
                return;
            }
            LeaseReply.Builder b = LeaseReply.newBuilder();
            if (o.lease() != null) {
                b.setLease(Protos.toProto(o.lease()));
            }
            out.onNext(b.build());
            out.onCompleted();
        });
    }

    private static StatusRuntimeException unavailable(Throwable e) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        return new StatusRuntimeException(Status.UNAVAILABLE.withDescription("coordinator cluster unavailable: " + cause)
                .withCause(cause));
    }
}
