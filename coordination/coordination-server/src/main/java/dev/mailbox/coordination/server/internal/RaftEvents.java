package dev.mailbox.coordination.server.internal;

/**
 * What the state machine tells its node about the Raft work it sees, for the node's meters and log: a new
 * leader, a write applied on the leader and how long it took, a snapshot taken or failed. Called on Ratis
 * threads; an implementation must be quick and must not throw.
 */
public interface RaftEvents {

    /** Tells nothing to anyone. */
    RaftEvents NONE = new RaftEvents() {
    };

    /**
     * This node learned of a new leader (Ratis tells it on every change, and again after a time without one).
     *
     * @param leaderId the leader now
     */
    default void leaderChanged(String leaderId) {
    }

    /**
     * A write proposed on this node while it led has been committed and applied here.
     *
     * @param nanos from the leader taking the request to it being applied
     */
    default void committed(long nanos) {
    }

    /**
     * A snapshot was written.
     *
     * @param index the log index it covers
     * @param nanos how long writing it took
     */
    default void snapshotTaken(long index, long nanos) {
    }

    /**
     * Writing a snapshot failed (nothing of it is left under a name a restart loads).
     *
     * @param cause why
     */
    default void snapshotFailed(Throwable cause) {
    }
}
