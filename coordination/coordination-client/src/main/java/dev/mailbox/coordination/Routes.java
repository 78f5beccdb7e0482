package dev.mailbox.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The routing table: where each mailbox is served, derived from its active lease. Get it from
 * {@link CoordinationClient#routes()}. Thread-safe.
 */
public interface Routes {

    /** An open WatchRoutes stream. */
    interface Watch extends AutoCloseable {
        /** Ends the stream; the watcher is told nothing more. Idempotent. */
        @Override
        void close();
    }

    /** @return the routing table as the leader has it */
    default RoutingSnapshot list() {
        return list((ReadConsistency) null);
    }

    /**
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return the routing table
     */
    RoutingSnapshot list(@Nullable ReadConsistency consistency);

    /**
     * Opens one WatchRoutes stream on the coordinator this client talks to. The stream does not
     * reconnect by itself; {@link RoutingTable} is the recipe that does.
     *
     * @param fromRevision the last revision the watcher has seen (the stream resumes after it when the
     *                     coordinator still has the changes since), or 0 for a snapshot
     * @param watcher      receives the stream
     * @return the stream, to close when done
     * @throws IllegalStateException if the client is closed
     */
    Watch watch(long fromRevision, RouteWatcher watcher);

    /**
     * A {@link RoutingTable} that keeps a current copy of the routing table. Every table of one client is a
     * view of one copy, kept by one stream, however many are open. Close it when done (the copy goes with
     * the last view); it stops by itself once its client is closed.
     *
     * @return the table, already connecting
     */
    default RoutingTable table() {
        return RoutingTable.start(this);
    }
}
