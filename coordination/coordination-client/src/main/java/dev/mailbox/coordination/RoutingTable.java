package dev.mailbox.coordination;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A current copy of the coordinators' routing table, kept by the WatchRoutes stream: a snapshot, then
 * every change in order. When the stream breaks it reconnects (to the next coordinator if the one it
 * used is gone) and resumes after the last revision it saw, or takes a fresh snapshot if that
 * coordinator no longer has the changes since.
 *
 * <p>Reads are lock-free and may be a little behind the coordinators. A snapshot replaces the whole
 * table at once, so a reader never sees part of one. A route may name a runner that has just lost its
 * lease, so whoever acts on a route must tolerate finding the owner gone. Thread-safe.
 * Obtain one from {@link Routes#table()}; it is built on {@link Routes#watch} alone, and stops (as if
 * closed) once its client is closed, when {@code watch} throws {@link IllegalStateException}.
 */
public final class RoutingTable implements AutoCloseable {

    /**
     * Told about every change, on the stream's thread, in revision order. Must not block: while it does,
     * the table reads nothing, and a coordinator ends a watch that falls too far behind (the table then
     * reconnects and resumes, but reads are stale meanwhile).
     */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param mailboxId the mailbox
         * @param route     its route now, or null if it has none
         * @param revision  the table's revision after the change
         */
        void changed(String mailboxId, @Nullable Route route, long revision);
    }

    private final Routes source;
    /** Replaced whole by a snapshot, so a reader never sees half of one; changes are applied in place. */
    private volatile ConcurrentHashMap<String, Route> routes = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private final Object monitor = new Object();
    private volatile long revision;
    private volatile boolean synced;
    private volatile boolean closed;
    private volatile Routes.@Nullable Watch watch;
    private volatile int failures;
    private volatile long snapshots;

    private RoutingTable(Routes source) {
        this.source = source;
    }

    /**
     * Starts keeping a copy of the routing table.
     *
     * @param source where to watch the routes
     * @return the table, already connecting
     */
    static RoutingTable start(Routes source) {
        RoutingTable table = new RoutingTable(source);
        table.connect();
        return table;
    }

    /**
     * @param mailboxId a mailbox
     * @return its route, or empty if it has none (or this copy has not heard of it yet)
     */
    public Optional<Route> route(String mailboxId) {
        return Optional.ofNullable(routes.get(mailboxId));
    }

    /** @return a copy of the whole table, by mailbox id */
    public Map<String, Route> routes() {
        return new TreeMap<>(routes);
    }

    /** @return the revision of the last change this copy has applied (0 before the first snapshot) */
    public long revision() {
        return revision;
    }

    /** @return whether this copy has received the table at least once */
    public boolean isSynced() {
        return synced;
    }

    /** @return how many snapshots (rather than resumed changes) this copy has received */
    public long snapshotsReceived() {
        return snapshots;
    }

    /**
     * @param listener told about every later change
     */
    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /**
     * Waits until the table satisfies a condition.
     *
     * @param condition checked after every change
     * @param timeout   how long to wait
     * @return whether it held in time
     * @throws InterruptedException if interrupted
     */
    public boolean await(Predicate<RoutingTable> condition, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        synchronized (monitor) {
            while (!condition.test(this)) {
                long left = until - System.nanoTime();
                if (left <= 0 || closed) {
                    return condition.test(this);
                }
                TimeUnit.NANOSECONDS.timedWait(monitor, left);
            }
            return true;
        }
    }

    /** Stops watching. */
    @Override
    public void close() {
        closed = true;
        Routes.Watch w = watch;
        if (w != null) {
            w.close();
        }
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    private void connect() {
        if (closed) {
            return;
        }
        try {
            watch = source.watch(synced ? revision : 0, new Watcher());
        } catch (IllegalStateException clientClosed) {
            close(); // nothing to reconnect with: a closed client never watches again
            return;
        } catch (RuntimeException e) {
            retry();
        }
        if (closed) {
            Routes.Watch w = watch;
            if (w != null) {
                w.close();
            }
        }
    }

    private void retry() {
        if (closed) {
            return;
        }
        failures++;
        try {
            Recipes.timer().schedule(this::connect, Recipes.backoffMillis(failures), TimeUnit.MILLISECONDS);
        } catch (RuntimeException rejected) {
            closed = true;
        }
    }

    private void snapshot(long at, List<Route> all) {
        ConcurrentHashMap<String, Route> fresh = new ConcurrentHashMap<>();
        all.forEach(r -> fresh.put(r.mailboxId(), r));
        Map<String, Route> before = routes;
        routes = fresh;
        revision = at;
        snapshots++;
        synced = true;
        for (String gone : before.keySet()) {
            if (!fresh.containsKey(gone)) {
                listeners.forEach(l -> l.changed(gone, null, at));
            }
        }
        for (Route r : all) {
            if (!r.equals(before.get(r.mailboxId()))) {
                listeners.forEach(l -> l.changed(r.mailboxId(), r, at));
            }
        }
        wake();
    }

    private void change(long at, List<Route> changed, List<String> removed) {
        if (at > revision) {
            revision = at;
            synced = true;
            for (Route route : changed) {
                routes.put(route.mailboxId(), route);
                listeners.forEach(l -> l.changed(route.mailboxId(), route, at));
            }
            for (String gone : removed) {
                routes.remove(gone);
                listeners.forEach(l -> l.changed(gone, null, at));
            }
        }
        wake();
    }

    private void wake() {
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    /** One stream's events; when it ends the table reconnects and resumes from its revision. */
    private final class Watcher implements RouteWatcher {
        @Override
        public void snapshot(long at, List<Route> all) {
            failures = 0;
            RoutingTable.this.snapshot(at, all);
        }

        @Override
        public void change(long at, List<Route> changed, List<String> removed) {
            failures = 0;
            RoutingTable.this.change(at, changed, removed);
        }

        @Override
        public void ended(@Nullable CoordinationException failure) {
            retry();
        }
    }

    @Override
    public String toString() {
        return "RoutingTable[revision=" + revision + ", routes=" + routes.size() + "]";
    }
}
