package dev.mailbox.coordination;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One coordinator node's view of its cluster.
 *
 * @param nodeId       the node that answered
 * @param role         its Raft role: LEADER, FOLLOWER, CANDIDATE or UNKNOWN
 * @param leaderId     the leader it knows of, or null while there is none
 * @param term         the Raft term it is in
 * @param appliedIndex the last log index it applied
 * @param members      node id to Raft address, for every member
 */
public record ClusterStatus(String nodeId, String role, @Nullable String leaderId, long term, long appliedIndex,
                            Map<String, String> members) {

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
