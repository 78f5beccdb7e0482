package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.Route;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Streams the routing table of one coordinator node to its watchers: a snapshot, then every change
 * in log order. It keeps the most recent changes so a watcher that reconnects with the last revision
 * it saw gets only what it missed.
 *
 * <p>The state machine calls {@link #publish} and {@link #resync} under its write lock and
 * {@link #subscribe} under its read lock, so a new watcher's snapshot and the changes after it never
 * interleave, and each sink is called by one thread at a time.
 */
public final class RouteHub {

    /** Where one watcher's events go. Called with the state machine's lock held: must not block. */
    public interface Sink {
        /**
         * @param revision the table's revision
         * @param routes   the whole table
         */
        void snapshot(long revision, List<Route> routes);

        /**
         * @param change one change
         * @param live   true for a change as it is applied, false for one a resuming watcher missed
         */
        void change(LeaseTable.RouteChange change, boolean live);

        /**
         * The watch ends: this node stops serving it.
         *
         * @param why the reason, for the watcher
         */
        void ended(String why);
    }

    /** How many recent changes are kept for watchers that resume. */
    public static final int RETAINED = 10_000;

    private final ArrayDeque<LeaseTable.RouteChange> recent = new ArrayDeque<>();
    private final CopyOnWriteArrayList<Watcher> watchers = new CopyOnWriteArrayList<>();
    /** A watcher that has seen this revision or a later one can resume from the retained changes. */
    private long resumableFrom;

    private static final class Watcher {
        final Sink sink;
        long seen;

        Watcher(Sink sink, long seen) {
            this.sink = sink;
            this.seen = seen;
        }
    }

    /**
     * Records a change and sends it to every watcher that has not seen it.
     *
     * @param change what the last applied command changed
     */
    void publish(LeaseTable.RouteChange change) {
        recent.addLast(change);
        if (recent.size() > RETAINED) {
            resumableFrom = recent.removeFirst().revision();
        }
        for (Watcher w : watchers) {
            if (change.revision() > w.seen) {
                w.seen = change.revision();
                w.sink.change(change, true);
            }
        }
    }

    /**
     * Forgets the retained changes and sends every watcher a fresh snapshot: the table was replaced
     * (loaded from a snapshot), so the changes in between are unknown.
     *
     * @param table the new table
     */
    void resync(LeaseTable table) {
        recent.clear();
        resumableFrom = table.routesRevision();
        List<Route> routes = table.routes();
        for (Watcher w : watchers) {
            w.seen = Math.max(w.seen, table.routesRevision());
            w.sink.snapshot(table.routesRevision(), routes);
        }
    }

    /**
     * Adds a watcher: sends what it missed since {@code fromRevision} if this node still has it, else
     * a snapshot of the table.
     *
     * <p>A revision is a log index, and resuming after it only makes sense in the history it came from. A
     * watcher that names a revision beyond every entry this node holds ({@code lastLogIndex}) saw a history this
     * node does not have (the cluster was rebuilt from a backup, whose log starts again from the beginning, or
     * it watched another cluster); and one that names a revision this node has applied past without a route
     * change there saw another history too. Resuming would hold back every change up to that revision, so both
     * get a snapshot (issue 30, finding 8). A revision this node holds but has not applied yet (a follower a
     * little behind) resumes as before: the changes arrive as it applies them.
     *
     * @param fromRevision the last revision the watcher saw, or 0 for a snapshot
     * @param lastLogIndex the index of the last entry in this node's log (written, perhaps not applied yet)
     * @param table        the current table
     * @param sink         where the events go
     * @return removes the watcher
     */
    Runnable subscribe(long fromRevision, long lastLogIndex, LeaseTable table, Sink sink) {
        Watcher w;
        boolean sameHistory = fromRevision <= Math.max(lastLogIndex, table.appliedIndex())
                && !(fromRevision > table.routesRevision() && fromRevision <= table.appliedIndex());
        if (fromRevision > 0 && fromRevision >= resumableFrom && sameHistory) {
            w = new Watcher(sink, fromRevision);
            for (LeaseTable.RouteChange c : recent) {
                if (c.revision() > w.seen) {
                    w.seen = c.revision();
                    sink.change(c, false);
                }
            }
        } else {
            w = new Watcher(sink, table.routesRevision());
            sink.snapshot(table.routesRevision(), table.routes());
        }
        watchers.add(w);
        return () -> watchers.remove(w);
    }

    /**
     * Ends and removes every watcher.
     *
     * @param why what they are told
     */
    void endAll(String why) {
        for (Watcher w : watchers) {
            watchers.remove(w);
            w.sink.ended(why);
        }
    }

    /** @return how many watchers are subscribed */
    public int watchers() {
        return watchers.size();
    }
}
