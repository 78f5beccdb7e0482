package dev.mailbox.coordination;

import java.util.List;
import java.util.Objects;

/**
 * What a mailbox node's registration returned.
 *
 * @param node   the node as registered
 * @param lease  its registration lease (mailbox {@code _nodes@<id>}): renew it with
 *               {@link Leases#renew(Lease)} at the {@code _nodes} namespace's heartbeat interval, or the
 *               node goes down
 * @param ranges the partitions it owns as of the registration
 */
public record Registration(NodeInfo node, Lease lease, List<PartitionMap.Range> ranges) {

    /** Checks the fields and copies the ranges. */
    public Registration {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(lease, "lease");
        ranges = List.copyOf(ranges);
    }
}
