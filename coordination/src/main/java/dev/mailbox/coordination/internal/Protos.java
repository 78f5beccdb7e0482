package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;

/** Conversions between the lease records and their protobuf messages. */
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
                p.getPartition(), p.getEpoch(), LeaseState.values()[p.getStateValue() - 1], p.getTtlMillis(),
                p.getGrantedAtMillis(), p.getEndedAtMillis());
    }
}
