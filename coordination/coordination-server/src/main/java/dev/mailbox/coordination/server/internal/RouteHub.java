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
     * @param fromRevision the last revision the watcher saw, or 0 for a snapshot
     * @param table        the current table
     * @param sink         where the events go
     * @return removes the watcher
     */
    Runnable subscribe(long fromRevision, LeaseTable table, Sink sink) {
        Watcher w;
        if (fromRevision > 0 && fromRevision >= resumableFrom) {
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
