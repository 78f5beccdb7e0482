package dev.mailbox.coordination.internal;

import static dev.mailbox.coordination.CoordinationLimits.require;

import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.Namespaces;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.CreateNamespaceRequest;
import dev.mailbox.coordination.proto.GetLeasePolicyRequest;
import dev.mailbox.coordination.proto.GetNamespaceRequest;
import dev.mailbox.coordination.proto.LeasePolicyReply;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
import dev.mailbox.coordination.proto.SetLeasePolicyRequest;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** {@link Namespaces} over the control plane. */
final class GrpcNamespaces implements Namespaces {

    private final ControlPlaneCalls calls;

    GrpcNamespaces(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public NamespaceInfo create(String name, @Nullable LeasePolicy policy, Map<String, String> labels) {
        CoordinationLimits.requireNamespace(name);
        require(CoordinationLimits.labelsProblem(Objects.requireNonNull(labels, "labels")));
        CreateNamespaceRequest.Builder b = CreateNamespaceRequest.newBuilder().setName(name).putAllLabels(labels);
        if (policy != null) {
            b.setTtlMillis(policy.ttl().toMillis()).setHeartbeatMillis(policy.heartbeatInterval().toMillis())
                    .setGraceMillis(policy.grace().toMillis());
        }
        CreateNamespaceRequest r = b.build();
        try {
            return CoordinationException.await(calls.call(s -> s.createNamespace(r))
                    .thenApply(reply -> Protos.fromProto(reply.getNamespace())));
        } catch (CoordinationException e) {
            if (e.reason() != CoordinationException.Reason.ALREADY_EXISTS) {
                throw e;
            }
            // A create retried after an attempt whose answer was lost (a leader change, a timeout) finds the
            // namespace that attempt made: what exists exactly as asked is this call's own result.
            LeasePolicy wanted = policy == null ? LeasePolicy.DEFAULT : policy;
            Optional<NamespaceInfo> existing = get(name, ReadConsistency.LINEARIZABLE);
            if (existing.isPresent() && existing.get().policy().equals(wanted) && existing.get().labels().equals(labels)) {
                return existing.get();
            }
            throw e;
        }
    }

    @Override
    public Optional<NamespaceInfo> get(String name, @org.jspecify.annotations.Nullable ReadConsistency consistency) {
        GetNamespaceRequest r = GetNamespaceRequest.newBuilder().setName(CoordinationLimits.requireNamespace(name))
                .setConsistency(Protos.toProto(consistency)).build();
        return GrpcLeases.found(() -> CoordinationException.await(calls.call(s -> s.getNamespace(r))
                .thenApply(reply -> Protos.fromProto(reply.getNamespace()))));
    }

    @Override
    public List<NamespaceInfo> list(@org.jspecify.annotations.Nullable ReadConsistency consistency) {
        ListNamespacesRequest r = ListNamespacesRequest.newBuilder().setConsistency(Protos.toProto(consistency)).build();
        return CoordinationException.await(calls.call(s -> s.listNamespaces(r))
                .thenApply(reply -> reply.getNamespacesList().stream().map(Protos::fromProto).toList()));
    }

    @Override
    public dev.mailbox.coordination.StaleRead<List<NamespaceInfo>> listStale() {
        ListNamespacesRequest r = ListNamespacesRequest.newBuilder()
                .setConsistency(Protos.toProto(ReadConsistency.STALE)).build();
        return CoordinationException.await(calls.call(s -> s.listNamespaces(r))
                .thenApply(reply -> new dev.mailbox.coordination.StaleRead<>(reply.getNamespacesList().stream()
                        .map(Protos::fromProto).toList(), reply.getAppliedIndex())));
    }

    @Override
    public void setPolicy(String namespace, LeasePolicy policy) {
        CoordinationLimits.requireNamespace(namespace);
        SetLeasePolicyRequest r = SetLeasePolicyRequest.newBuilder().setNamespace(namespace)
                .setTtlMillis(policy.ttl().toMillis()).setHeartbeatMillis(policy.heartbeatInterval().toMillis())
                .setGraceMillis(policy.grace().toMillis()).build();
        CoordinationException.await(calls.call(s -> s.setLeasePolicy(r)));
    }

    @Override
    public LeasePolicy policy(String namespace) {
        require(CoordinationLimits.namespaceOrReservedProblem(namespace));
        GetLeasePolicyRequest r = GetLeasePolicyRequest.newBuilder().setNamespace(namespace).build();
        LeasePolicyReply p = CoordinationException.await(calls.call(s -> s.getLeasePolicy(r)));
        return LeasePolicy.ofMillis(p.getTtlMillis(), p.getHeartbeatMillis(), p.getGraceMillis());
    }
}
