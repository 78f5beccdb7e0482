package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;

/**
 * Conversions between the coordination records and their protobuf messages. Shared by the client and the
 * server (which stores the same messages); not for applications.
 */
public final class Protos {

    private Protos() {
    }

    /**
     * @param l a lease
     * @return its message
     */
    public static dev.mailbox.coordination.proto.Lease toProto(Lease l) {
        return dev.mailbox.coordination.proto.Lease.newBuilder().setLeaseId(l.leaseId()).setMailboxId(l.mailboxId())
                .setRunnerId(l.runnerId()).setNodeId(l.nodeId()).setAddress(l.address()).setPartition(l.partition())
                .setEpoch(l.epoch()).setState(dev.mailbox.coordination.proto.LeaseState.forNumber(l.state().ordinal() + 1))
                .setTtlMillis(l.ttlMillis()).setGrantedAtMillis(l.grantedAtMillis()).setEndedAtMillis(l.endedAtMillis())
                .build();
    }

    /**
     * @param p a lease message
     * @return the lease
     */
    public static Lease fromProto(dev.mailbox.coordination.proto.Lease p) {
        return new Lease(p.getLeaseId(), p.getMailboxId(), p.getRunnerId(), p.getNodeId(), p.getAddress(),
                p.getPartition(), p.getEpoch(), state(p.getStateValue()), p.getTtlMillis(),
                p.getGrantedAtMillis(), p.getEndedAtMillis());
    }

    /**
     * @param value a lease state's number on the wire
     * @return whether this version knows it
     */
    public static boolean isKnownState(int value) {
        return value >= 1 && value <= LeaseState.values().length;
    }

    private static LeaseState state(int value) {
        if (!isKnownState(value)) {
            throw new IllegalArgumentException("lease state " + value + " is not one this version knows (it was "
                    + "sent by a newer coordinator, or none was set)");
        }
        return LeaseState.values()[value - 1];
    }

    public static dev.mailbox.coordination.proto.NodeInfo toProto(dev.mailbox.coordination.NodeInfo n) {
        return dev.mailbox.coordination.proto.NodeInfo.newBuilder().setNodeId(n.id()).setAddress(n.address())
                .setRegion(n.region()).setVersion(n.version()).addAllCapabilities(n.capabilities())
                .putAllLabels(n.labels()).setUp(n.up()).setRegisteredAtMillis(n.registeredAtMillis()).build();
    }

    public static dev.mailbox.coordination.NodeInfo fromProto(dev.mailbox.coordination.proto.NodeInfo p) {
        return new dev.mailbox.coordination.NodeInfo(p.getNodeId(), p.getAddress(), p.getRegion(), p.getVersion(),
                p.getCapabilitiesList(), p.getLabelsMap(), p.getUp(), p.getRegisteredAtMillis());
    }

    public static dev.mailbox.coordination.proto.Namespace toProto(dev.mailbox.coordination.NamespaceInfo n) {
        var b = dev.mailbox.coordination.proto.Namespace.newBuilder().setName(n.name()).setPartition(n.partition())
                .setTtlMillis(n.policy().ttl().toMillis())
                .setHeartbeatMillis(n.policy().heartbeatInterval().toMillis())
                .setGraceMillis(n.policy().grace().toMillis()).setCreatedAtMillis(n.createdAtMillis())
                .putAllLabels(n.labels());
        if (n.ownerNodeId() != null) {
            b.setOwnerNodeId(n.ownerNodeId());
        }
        return b.build();
    }

    public static dev.mailbox.coordination.NamespaceInfo fromProto(dev.mailbox.coordination.proto.Namespace p) {
        return new dev.mailbox.coordination.NamespaceInfo(p.getName(), p.getPartition(),
                p.getOwnerNodeId().isEmpty() ? null : p.getOwnerNodeId(),
                new dev.mailbox.coordination.LeasePolicy(java.time.Duration.ofMillis(p.getTtlMillis()),
                        java.time.Duration.ofMillis(p.getHeartbeatMillis()),
                        java.time.Duration.ofMillis(p.getGraceMillis())),
                p.getLabelsMap(), p.getCreatedAtMillis());
    }

    public static dev.mailbox.coordination.proto.Route toProto(dev.mailbox.coordination.Route r) {
        return dev.mailbox.coordination.proto.Route.newBuilder().setMailboxId(r.mailboxId()).setNodeId(r.nodeId())
                .setRunnerId(r.runnerId()).setAddress(r.address()).setPartition(r.partition())
                .setLeaseId(r.leaseId()).setEpoch(r.epoch()).build();
    }

    public static dev.mailbox.coordination.Route fromProto(dev.mailbox.coordination.proto.Route p) {
        return new dev.mailbox.coordination.Route(p.getMailboxId(), p.getNodeId(), p.getRunnerId(), p.getAddress(),
                p.getPartition(), p.getLeaseId(), p.getEpoch());
    }

    public static dev.mailbox.coordination.proto.PartitionRange toProto(dev.mailbox.coordination.PartitionMap.Range r) {
        return dev.mailbox.coordination.proto.PartitionRange.newBuilder().setStart(r.start()).setEnd(r.end())
                .setNodeId(r.nodeId()).build();
    }

    public static dev.mailbox.coordination.PartitionMap.Range fromProto(dev.mailbox.coordination.proto.PartitionRange p) {
        return new dev.mailbox.coordination.PartitionMap.Range(p.getStart(), p.getEnd(), p.getNodeId());
    }

    public static dev.mailbox.coordination.proto.Consistency toProto(
            dev.mailbox.coordination.@org.jspecify.annotations.Nullable ReadConsistency c) {
        if (c == null) {
            return dev.mailbox.coordination.proto.Consistency.CONSISTENCY_UNSPECIFIED; // the coordinator's default
        }
        return switch (c) {
            case STALE -> dev.mailbox.coordination.proto.Consistency.STALE;
            case LEADER_LEASE -> dev.mailbox.coordination.proto.Consistency.LEADER_LEASE;
            case LINEARIZABLE -> dev.mailbox.coordination.proto.Consistency.LINEARIZABLE;
        };
    }

    public static dev.mailbox.coordination.ClusterStatus fromProto(dev.mailbox.coordination.proto.ClusterStatusReply r) {
        java.util.Map<String, String> members = new java.util.LinkedHashMap<>();
        r.getMembersList().forEach(m -> members.put(m.getNodeId(), m.getAddress()));
        return new dev.mailbox.coordination.ClusterStatus(r.getNodeId(), r.getRole(),
                r.getLeaderId().isEmpty() ? null : r.getLeaderId(), r.getTerm(), r.getAppliedIndex(), r.getCommitIndex(),
                members, r.getFault().isEmpty() ? null : r.getFault());
    }

    public static dev.mailbox.coordination.proto.QueueRecord toProto(dev.mailbox.coordination.QueueInfo q) {
        return dev.mailbox.coordination.proto.QueueRecord.newBuilder().setName(q.name()).putAllAttributes(q.attributes())
                .putAllTags(q.tags()).setCreatedAtMillis(q.createdAtMillis())
                .setLastModifiedAtMillis(q.lastModifiedAtMillis()).build();
    }

    public static dev.mailbox.coordination.QueueInfo fromProto(dev.mailbox.coordination.proto.QueueRecord p) {
        return new dev.mailbox.coordination.QueueInfo(p.getName(), p.getAttributesMap(), p.getTagsMap(),
                p.getCreatedAtMillis(), p.getLastModifiedAtMillis());
    }
}
