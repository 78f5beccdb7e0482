package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Cluster;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.proto.AddMemberRequest;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import com.google.protobuf.ByteString;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ExportStateRequest;
import dev.mailbox.coordination.proto.ImportStateRequest;
import dev.mailbox.coordination.proto.MembersReply;
import dev.mailbox.coordination.proto.RemoveMemberRequest;
import java.util.Map;

/** {@link Cluster} over the control plane. */
final class GrpcCluster implements Cluster {

    private final ControlPlaneCalls calls;

    GrpcCluster(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public ClusterStatus status() {
        return CoordinationException.await(calls.call(s -> s.clusterStatus(ClusterStatusRequest.getDefaultInstance()))
                .thenApply(Protos::fromProto));
    }

    @Override
    public Map<String, ClusterStatus> statusOfEach() {
        return calls.statusOfEach();
    }

    @Override
    public Map<String, String> addMember(String nodeId, String raftAddress) {
        CoordinationLimits.require(CoordinationLimits.nodeIdProblem(nodeId));
        CoordinationLimits.require(CoordinationLimits.addressProblem(raftAddress));
        AddMemberRequest r = AddMemberRequest.newBuilder().setNodeId(nodeId).setRaftAddress(raftAddress).build();
        return CoordinationException.await(calls.call(s -> s.addMember(r), MEMBERSHIP_MILLIS, false)
                .thenApply(GrpcCluster::members));
    }

    @Override
    public Map<String, String> removeMember(String nodeId) {
        CoordinationLimits.require(CoordinationLimits.nodeIdProblem(nodeId));
        RemoveMemberRequest r = RemoveMemberRequest.newBuilder().setNodeId(nodeId).build();
        return CoordinationException.await(calls.call(s -> s.removeMember(r), MEMBERSHIP_MILLIS, false)
                .thenApply(GrpcCluster::members));
    }

    @Override
    public byte[] exportState() {
        ExportStateRequest r = ExportStateRequest.newBuilder().setConsistency(Consistency.LINEARIZABLE).build();
        return CoordinationException.await(calls.call(s -> s.exportState(r)).thenApply(x -> x.getSnapshot().toByteArray()));
    }

    @Override
    public Imported importState(byte[] state) {
        CoordinationLimits.require(CoordinationLimits.exportedStateProblem(state.length));
        ImportStateRequest r = ImportStateRequest.newBuilder().setSnapshot(ByteString.copyFrom(state)).build();
        return CoordinationException.await(calls.call(s -> s.importState(r), calls.callTimeout().toMillis(), false)
                .thenApply(x -> new Imported(x.getNamespaces(), x.getLeases(), x.getNodes())));
    }

    /** A membership change waits while the leader copies a new member the state: allow it a minute. */
    private static final long MEMBERSHIP_MILLIS = 60_000;

    private static Map<String, String> members(MembersReply reply) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        reply.getMembersList().forEach(m -> out.put(m.getNodeId(), m.getAddress()));
        return out;
    }
}
