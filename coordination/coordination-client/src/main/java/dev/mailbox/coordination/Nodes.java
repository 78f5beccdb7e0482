package dev.mailbox.coordination;

import java.time.Duration;
import java.util.List;

/**
 * Mailbox nodes and the partition map over them. Get it from {@link CoordinationClient#nodes()}.
 * Thread-safe.
 */
public interface Nodes {

    /**
     * Registers a mailbox node (again, after a restart or after it was marked down), which acquires its
     * registration lease.
     *
     * @param node the node (see {@link CoordinationLimits#nodeProblem}); {@code up} and
     *             {@code registeredAtMillis} are ignored
     * @param ttl  how long it stays up without a heartbeat, or zero for the {@code _nodes} namespace's policy
     * @return the registration
     */
    Registration register(NodeInfo node, Duration ttl);

    /** @return every registered node, with whether it is up, as the leader has it */
    default List<NodeInfo> list() {
        return list(ReadConsistency.LEADER_LEASE);
    }

    /**
     * @param consistency how fresh the answer must be
     * @return every registered node, with whether it is up
     */
    List<NodeInfo> list(ReadConsistency consistency);

    /** @return the partition map over the nodes that are up, as the leader has it */
    default PartitionMap partitionMap() {
        return partitionMap(ReadConsistency.LEADER_LEASE);
    }

    /**
     * @param consistency how fresh the answer must be
     * @return the partition map over the nodes that are up
     */
    PartitionMap partitionMap(ReadConsistency consistency);
}
