package dev.mailbox.coordination;

/** How fresh a read of the coordinator's state must be. */
public enum ReadConsistency {
    /** Whatever the node that answers has applied; any node answers, even without a leader. */
    STALE,
    /**
     * The leader answers from its own state while its Raft leader lease holds (a fraction of the shortest election
     * timeout since a majority last acknowledged it: no other leader can have been elected meanwhile, if clocks
     * run at the same rate), and with a Raft read index when it does not. The default.
     */
    LEADER_LEASE,
    /**
     * The leader confirms with a majority of the coordinators, at the time of the read, that they still follow
     * it, whatever its lease says, then answers once it has applied what was committed when the read arrived.
     * A leader cut off from the majority never answers it (the read fails as unavailable, and the client tries
     * elsewhere); it costs a round trip to the others.
     */
    LINEARIZABLE
}
