package dev.mailbox.coordination;

/** How fresh a read of the coordinator's state must be. */
public enum ReadConsistency {
    /** Whatever the node that answers has applied; any node answers, even without a leader. */
    STALE,
    /** The leader answers from its own state while its Raft leader lease holds (the default). */
    LEADER_LEASE,
    /** The leader confirms it still leads before it answers (a Raft read index when its lease has lapsed). */
    LINEARIZABLE
}
