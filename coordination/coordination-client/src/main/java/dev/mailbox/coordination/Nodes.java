package dev.mailbox.coordination;

import org.jspecify.annotations.Nullable;
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
        return list((ReadConsistency) null);
    }

    /**
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return every registered node, with whether it is up
     */
    List<NodeInfo> list(@Nullable ReadConsistency consistency);

    /** @return the partition map over the nodes that are up, as the leader has it */
    default PartitionMap partitionMap() {
        return partitionMap((ReadConsistency) null);
    }

    /**
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return the partition map over the nodes that are up
     */
    PartitionMap partitionMap(@Nullable ReadConsistency consistency);
}
