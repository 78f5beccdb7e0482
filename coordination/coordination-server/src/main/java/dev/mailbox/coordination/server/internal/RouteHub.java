package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.RouteEvent;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Streams the routing table of one coordinator node to its watchers: a snapshot, then every change in log
 * order. Every watcher reads from the same two immutable things: a shared snapshot of the table (one list of
 * routes, its snapshot events built once), and the log of recent changes (one event each, built once). A
 * new watcher is sent the latest shared snapshot and then the changes logged since it, so a thousand
 * watchers joining at once cost one copy of the table, not a thousand; the snapshot is rebuilt only when the
 * changes since it would cost more to replay than the table to send. A watcher that reconnects with the
 * last revision it saw gets only what it missed, while the log still holds it.
 *
 * <p>Each watcher is sent what it has not seen only while its stream is ready (gRPC's flow control), in
 * parts of at most {@link #PART} routes, so what a slow watcher costs is its place in the shared log, not a
 * queue of its own: a caught-up watcher that falls more than its backlog bound behind, or a syncing one that
 * the log's {@link #RETAINED} changes overtake, is ended with RESOURCE_EXHAUSTED and resumes when it
 * reconnects.
 *
 * <p>The state machine calls {@link #publish} and {@link #resync} under its write lock and {@link #subscribe}
 * under its read lock; watchers are pumped by their streams' threads, each by one thread at a time, and
 * never hold the state machine's lock.
 */
public final class RouteHub {

    /** Where one watcher's events go. */
    public interface Sink {
        /** @return whether the stream takes another event now without queueing it */
        boolean isReady();

        /**
         * Sends one event; called by one thread at a time.
         *
         * @param event the event
         */
        void send(RouteEvent event);

        /**
         * Ends the stream with an error; nothing is sent after it.
         *
         * @param status why, for the watcher
         */
        void end(Status status);

        /** @return whether the watcher takes a snapshot in parts (older clients take it in one event) */
        boolean inParts();

        /** @return how many changes a caught-up watcher may fall behind before it is ended */
        int maxBacklog();

        /**
         * The hub gives the sink what to run when its stream becomes ready again (and once after it subscribed):
         * it sends whatever the watcher has not seen, while the stream takes it.
         *
         * @param pump the watcher's pump; safe to run from any thread, at any time
         */
        void attach(Runnable pump);
    }

    /** How many recent changes are kept for watchers that resume or are catching up. */
    public static final int RETAINED = 10_000;
    /** The most routes in one part of a snapshot (about 100 KB). */
    public static final int PART = 1_000;

    /** Pumps started by the state machine's thread (after a resync), which must not send snapshots itself. */
    private static final ExecutorService PUMPS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "route-watch-pump");
        t.setDaemon(true);
        return t;
    });

    private final Object lock = new Object();
    // guarded by lock: the log, a ring of the last RETAINED changes, with sequence numbers that only grow
    private final LeaseTable.RouteChange[] changes = new LeaseTable.RouteChange[RETAINED];
    private final RouteEvent[] events = new RouteEvent[RETAINED];
    private long head; // the sequence number of the oldest change kept
    private long tail; // the sequence number the next change gets
    /** A watcher that has seen this revision or a later one can resume from the retained changes. */
    private long resumableFrom;
    private @Nullable Shared shared;

    private final CopyOnWriteArrayList<Watcher> watchers = new CopyOnWriteArrayList<>();

    /**
     * Records a change and sends it to every caught-up watcher whose stream takes it.
     *
     * @param change what the last applied command changed
     */
    void publish(LeaseTable.RouteChange change) {
        long size;
        synchronized (lock) {
            if (tail - head == RETAINED) {
                resumableFrom = changes[index(head)].revision();
                head++;
            }
            changes[index(tail)] = change;
            events[index(tail)] = null; // built when first sent
            tail++;
            size = tail;
        }
        for (Watcher w : watchers) {
            w.published(size);
        }
    }

    /**
     * Forgets the retained changes and sends every watcher a fresh snapshot: the table was replaced
     * (loaded from a snapshot), so the changes in between are unknown.
     *
     * @param table the new table
     */
    void resync(LeaseTable table) {
        Shared s;
        synchronized (lock) {
            head = tail;
            resumableFrom = table.routesRevision();
            s = new Shared(table.routesRevision(), table.routes(), tail);
            shared = s;
        }
        for (Watcher w : watchers) {
            w.restart(s);
        }
    }

    /**
     * Adds a watcher: it will be sent what it missed since {@code fromRevision} if this node still has it,
     * else a snapshot of the table, as its stream takes them (see {@link Sink#attach}).
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
        Watcher w = new Watcher(sink);
        boolean sameHistory = fromRevision <= Math.max(lastLogIndex, table.appliedIndex())
                && !(fromRevision > table.routesRevision() && fromRevision <= table.appliedIndex());
        synchronized (lock) {
            if (fromRevision > 0 && fromRevision >= resumableFrom && sameHistory) {
                w.phase = CATCHING_UP;
                w.cursor = firstAfter(fromRevision);
                w.seen = fromRevision;
            } else {
                Shared s = shared;
                // reused while replaying the changes since it costs less than sending the table again
                if (s == null || s.seq < head || tail - s.seq > Math.max(PART, s.routes.size() / 4)) {
                    s = new Shared(table.routesRevision(), table.routes(), tail);
                    shared = s;
                }
                w.startSnapshot(s);
            }
        }
        watchers.add(w);
        sink.attach(w::pump);
        return w::remove;
    }

    /**
     * Ends and removes every watcher.
     *
     * @param why what they are told
     */
    void endAll(String why) {
        for (Watcher w : watchers) {
            w.endWith(Status.UNAVAILABLE.withDescription(why + "; reconnect (to another coordinator) with "
                    + "from_revision set to the last revision applied to resume"));
        }
    }

    /** @return how many watchers are subscribed */
    public int watchers() {
        return watchers.size();
    }

    /** @return how many snapshots of the table the watchers share now: 0 or 1 (for tests) */
    int sharedSnapshots() {
        synchronized (lock) {
            return shared == null ? 0 : 1;
        }
    }

    private static int index(long seq) {
        return (int) (seq % RETAINED);
    }

    /** The sequence number of the first retained change after {@code revision}; called with the lock held. */
    private long firstAfter(long revision) {
        long lo = head;
        long hi = tail;
        while (lo < hi) {
            long mid = (lo + hi) >>> 1;
            if (changes[index(mid)].revision() > revision) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** The event of a retained change, built on first use; called with the lock held. */
    private RouteEvent eventAt(long seq) {
        int i = index(seq);
        RouteEvent e = events[i];
        if (e == null) {
            LeaseTable.RouteChange c = changes[i];
            RouteEvent.Builder b = RouteEvent.newBuilder().setRevision(c.revision());
            if (c.route() != null) {
                b.addRoutes(Protos.toProto(c.route()));
            } else {
                b.addRemoved(c.mailboxId());
            }
            e = b.build();
            events[i] = e;
        }
        return e;
    }

    /** One copy of the table at a revision, which any number of watchers are sent; immutable. */
    private static final class Shared {
        final long revision;
        final List<Route> routes;
        /** The sequence number of the first change after it. */
        final long seq;
        private @Nullable RouteEvent[] parts; // guarded by this
        private @Nullable RouteEvent whole; // guarded by this

        Shared(long revision, List<Route> routes, long seq) {
            this.revision = revision;
            this.routes = List.copyOf(routes);
            this.seq = seq;
        }

        synchronized RouteEvent[] parts() {
            if (parts == null) {
                int n = Math.max(1, (routes.size() + PART - 1) / PART);
                RouteEvent[] out = new RouteEvent[n];
                for (int i = 0; i < n; i++) {
                    RouteEvent.Builder b = RouteEvent.newBuilder().setRevision(revision).setSnapshot(true)
                            .setMore(i < n - 1);
                    for (Route r : routes.subList(i * PART, Math.min(routes.size(), (i + 1) * PART))) {
                        b.addRoutes(Protos.toProto(r));
                    }
                    out[i] = b.build();
                }
                parts = out;
            }
            return parts;
        }

        synchronized RouteEvent[] whole() {
            if (whole == null) {
                RouteEvent.Builder b = RouteEvent.newBuilder().setRevision(revision).setSnapshot(true);
                routes.forEach(r -> b.addRoutes(Protos.toProto(r)));
                whole = b.build();
            }
            return new RouteEvent[] {whole};
        }
    }

    private static final int SNAPSHOT = 0;
    private static final int CATCHING_UP = 1;
    private static final int LIVE = 2;

    /** One watcher: where it is in the shared snapshot and the log. */
    private final class Watcher {
        final Sink sink;
        final ReentrantLock pumping = new ReentrantLock();
        final AtomicBoolean dirty = new AtomicBoolean();
        // written under pumping (or before the watcher is published); read by publish to decide what to do
        volatile int phase;
        volatile long cursor; // the sequence number of the next change to send
        volatile @Nullable Status cut; // set by publish, acted on by the pump
        volatile boolean ended;
        // guarded by pumping
        long seen; // the last revision sent
        @Nullable Shared snapshot;
        int part;

        Watcher(Sink sink) {
            this.sink = sink;
        }

        void startSnapshot(Shared s) {
            phase = SNAPSHOT;
            snapshot = s;
            part = 0;
            cursor = s.seq;
        }

        /** A change was logged; {@code size} is the log's end now. Called on the state machine's thread. */
        void published(long size) {
            if (ended) {
                return;
            }
            if (phase == LIVE) {
                if (size - cursor > sink.maxBacklog()) {
                    cut = Status.RESOURCE_EXHAUSTED.withDescription("this route watcher fell more than "
                            + sink.maxBacklog() + " changes behind (at revision " + seen + "); reconnect with "
                            + "from_revision set to the last revision applied to resume");
                }
                pump(); // sends it now if the stream takes it (most often: on this thread, at once)
            } else if (size - cursor > RETAINED) {
                cut = Status.RESOURCE_EXHAUSTED.withDescription("this route watcher fell more than " + RETAINED
                        + " changes behind while it synced; reconnect to resume");
                pump();
            }
            // otherwise it is syncing: its stream's readiness pumps it, and it reads this change from the log
        }

        /** The table was replaced: start over with its snapshot. Called on the state machine's thread. */
        void restart(Shared s) {
            pumping.lock();
            try {
                startSnapshot(s);
            } finally {
                pumping.unlock();
            }
            PUMPS.execute(this::pump); // a snapshot is not sent on the state machine's thread
        }

        /** Sends what the watcher has not seen while the stream takes it; any thread, never two at once. */
        void pump() {
            dirty.set(true);
            while (dirty.get() && pumping.tryLock()) {
                try {
                    dirty.set(false);
                    drain();
                } catch (RuntimeException e) {
                    endNow(Status.INTERNAL.withDescription("route watch failed: " + e));
                } finally {
                    pumping.unlock();
                }
            }
        }

        /** Called with {@link #pumping} held. */
        private void drain() {
            while (!ended) {
                Status c = cut;
                if (c != null) {
                    endNow(c);
                    return;
                }
                if (!sink.isReady()) {
                    return; // the stream's next ready pumps again
                }
                if (phase == SNAPSHOT) {
                    Shared s = java.util.Objects.requireNonNull(snapshot);
                    RouteEvent[] events = sink.inParts() ? s.parts() : s.whole();
                    if (part < events.length) {
                        sink.send(events[part++]);
                        continue;
                    }
                    seen = Math.max(seen, s.revision);
                    snapshot = null;
                    phase = CATCHING_UP;
                    continue;
                }
                RouteEvent next;
                long revision;
                synchronized (lock) {
                    if (cursor < head) {
                        cut = Status.RESOURCE_EXHAUSTED.withDescription("this route watcher fell more than "
                                + RETAINED + " changes behind; reconnect to resume");
                        continue;
                    }
                    if (cursor == tail) {
                        phase = LIVE;
                        return;
                    }
                    revision = changes[index(cursor)].revision();
                    next = revision > seen ? eventAt(cursor) : null;
                }
                cursor++;
                if (next != null) {
                    seen = revision;
                    sink.send(next);
                }
            }
        }

        void endWith(Status status) {
            cut = status;
            pumping.lock();
            try {
                if (!ended) {
                    endNow(status);
                }
            } finally {
                pumping.unlock();
            }
        }

        /** Called with {@link #pumping} held. */
        private void endNow(Status status) {
            if (ended) {
                return;
            }
            ended = true;
            watchers.remove(this);
            sink.end(status);
        }

        void remove() {
            ended = true;
            watchers.remove(this);
        }
    }
}
