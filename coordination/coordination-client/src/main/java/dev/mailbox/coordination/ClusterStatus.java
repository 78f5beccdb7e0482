package dev.mailbox.coordination;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One coordinator node's view of its cluster.
 *
 * @param nodeId       the node that answered
 * @param role         its Raft role: LEADER, FOLLOWER, CANDIDATE or UNKNOWN; FAILED while it has a fault
 * @param leaderId     the leader it knows of, or null while there is none
 * @param term         the Raft term it is in
 * @param appliedIndex the last log index it applied
 * @param commitIndex  the highest log index it knows to be committed; a node whose applied index is below
 *                     it has not applied everything yet (its {@link ReadConsistency#STALE} reads lag)
 * @param members      node id to Raft address, for every member
 * @param fault        why it does not serve now (its disk takes no writes; it stopped after a fatal error),
 *                     or null while it serves; a node with a fault answers nothing but its status
 */
public record ClusterStatus(String nodeId, String role, @Nullable String leaderId, long term, long appliedIndex,
                            long commitIndex, Map<String, String> members, @Nullable String fault) {

    /** Copies the members. */
    public ClusterStatus {
        members = Map.copyOf(members);
    }

    /** @return whether the answering node is the leader */
    public boolean isLeader() {
        return nodeId.equals(leaderId) && "LEADER".equals(role);
    }

    /** @return the member ids, sorted */
    public List<String> memberIds() {
        return members.keySet().stream().sorted().toList();
    }
}
