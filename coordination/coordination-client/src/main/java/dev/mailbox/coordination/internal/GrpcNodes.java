package dev.mailbox.coordination.internal;

import static dev.mailbox.coordination.CoordinationLimits.require;

import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.Nodes;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.Registration;
import dev.mailbox.coordination.proto.GetPartitionMapRequest;
import dev.mailbox.coordination.proto.ListNodesRequest;
import dev.mailbox.coordination.proto.RegisterNodeRequest;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/** {@link Nodes} over the control plane. */
final class GrpcNodes implements Nodes {

    private final ControlPlaneCalls calls;

    GrpcNodes(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public Registration register(NodeInfo node, Duration ttl) {
        require(CoordinationLimits.nodeProblem(node.id(), node.address(), node.region(), node.version(),
                node.capabilities(), node.labels()));
        require(CoordinationLimits.requestedTtlProblem(ttl)); // on the Duration: ttl.toMillis() truncates, overflows
        RegisterNodeRequest r = RegisterNodeRequest.newBuilder().setNode(Protos.toProto(node))
                .setTtlMillis(ttl.toMillis()).setRequestId(UUID.randomUUID().toString()).build();
        return CoordinationException.await(calls.call(s -> s.registerNode(r)).thenApply(reply -> new Registration(
                Protos.fromProto(reply.getNode()), Protos.fromProto(reply.getLease()),
                reply.getPartitionRangesList().stream().map(Protos::fromProto).toList())));
    }

    @Override
    public List<NodeInfo> list(@org.jspecify.annotations.Nullable ReadConsistency consistency) {
        ListNodesRequest r = ListNodesRequest.newBuilder().setConsistency(Protos.toProto(consistency)).build();
        return CoordinationException.await(calls.call(s -> s.listNodes(r))
                .thenApply(reply -> reply.getNodesList().stream().map(Protos::fromProto).toList()));
    }

    @Override
    public PartitionMap partitionMap(@org.jspecify.annotations.Nullable ReadConsistency consistency) {
        GetPartitionMapRequest r = GetPartitionMapRequest.newBuilder().setConsistency(Protos.toProto(consistency))
                .build();
        return CoordinationException.await(calls.call(s -> s.getPartitionMap(r))
                .thenApply(reply -> PartitionMap.fromRanges(reply.getRangesList().stream().map(Protos::fromProto)
                        .toList())));
    }
}
