package dev.mailbox.coordination.server.internal;

import org.jspecify.annotations.Nullable;

/**
 * Where the parts of a coordinator report the faults that take it out of service, and where the control
 * plane asks whether it serves. A node that serves answers everything; one with a fault answers only its
 * status, so that clients go to another coordinator and operators see why.
 */
public interface Health {

    /**
     * The Raft log cannot be written (a full or failing disk). Ratis keeps the division running but fails
     * every later append, so the node stops its Raft server and starts it again, recovering from its data
     * dir, once the disk takes writes again.
     *
     * @param cause what the log reported
     */
    void logFailed(Throwable cause);

    /**
     * An {@link Error} (out of memory, a stack overflow) or the Raft server stopping by itself: what this
     * node holds in memory can no longer be trusted, so it stops serving for good and must be restarted.
     *
     * @param cause what happened
     */
    void fatal(Throwable cause);

    /** @return why this node does not serve now, or null while it serves */
    @Nullable String fault();

    /** @return the last log index this node applied */
    long appliedIndex();

    /** @return the highest log index this node knows to be committed */
    long commitIndex();
}
