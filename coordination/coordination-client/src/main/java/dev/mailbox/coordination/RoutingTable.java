package dev.mailbox.coordination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
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
 * <p>Every table a client's {@link Routes#table()} returns is a view of one copy, kept by one stream: a
 * process that opens a thousand tables (a node's, each component's) holds and syncs the table once. Each
 * view has its own listeners and its own {@link #close()}; the copy and its stream go when the last view
 * closes, or when the client closes.
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
     * the table reads nothing (for every view of the copy), and a coordinator ends a watch that falls too
     * far behind (the table then reconnects and resumes, but reads are stale meanwhile).
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

    /** The copies kept now, one per {@link Routes} object (one per client); guarded by itself. */
    private static final Map<Routes, Copy> COPIES = new IdentityHashMap<>();

    private final Copy copy;
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private RoutingTable(Copy copy) {
        this.copy = copy;
    }

    /**
     * A view of the copy of {@code source}'s table, starting that copy if there is none.
     *
     * @param source where to watch the routes
     * @return the view, already connecting (or synced, if the copy was)
     */
    static RoutingTable start(Routes source) {
        Copy copy;
        RoutingTable view;
        synchronized (COPIES) {
            copy = COPIES.get(source);
            boolean fresh = copy == null || copy.closed;
            if (fresh) {
                copy = new Copy(source);
                COPIES.put(source, copy);
            }
            view = new RoutingTable(copy);
            copy.views.add(view);
            if (!fresh) {
                return view;
            }
        }
        copy.connect();
        return view;
    }

    /** @return how many copies of a routing table this process keeps now (for tests and the harness) */
    static int copies() {
        synchronized (COPIES) {
            return COPIES.size();
        }
    }

    /**
     * @param mailboxId a mailbox
     * @return its route, or empty if it has none (or this copy has not heard of it yet)
     */
    public Optional<Route> route(String mailboxId) {
        return Optional.ofNullable(copy.routes.get(mailboxId));
    }

    /** @return a copy of the whole table, by mailbox id */
    public Map<String, Route> routes() {
        return new TreeMap<>(copy.routes);
    }

    /** @return the revision of the last change this copy has applied (0 before the first snapshot) */
    public long revision() {
        return copy.revision;
    }

    /** @return whether this copy has received the table at least once */
    public boolean isSynced() {
        return copy.synced;
    }

    /** @return how many snapshots (rather than resumed changes) this copy has received */
    public long snapshotsReceived() {
        return copy.snapshots;
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
        synchronized (copy.monitor) {
            while (!condition.test(this)) {
                long left = until - System.nanoTime();
                if (left <= 0 || closed || copy.closed) {
                    return condition.test(this);
                }
                TimeUnit.NANOSECONDS.timedWait(copy.monitor, left);
            }
            return true;
        }
    }

    /** Stops this view; the last view of the copy stops its watch. */
    @Override
    public void close() {
        closed = true;
        listeners.clear();
        copy.leave(this);
    }

    private void tell(String mailboxId, @Nullable Route route, long revision) {
        for (Listener l : listeners) {
            l.changed(mailboxId, route, revision);
        }
    }

    @Override
    public String toString() {
        return "RoutingTable[revision=" + copy.revision + ", routes=" + copy.routes.size() + "]";
    }

    /** One copy of the table and the stream that keeps it, shared by the views of one {@link Routes}. */
    private static final class Copy {
        final Routes source;
        final CopyOnWriteArrayList<RoutingTable> views = new CopyOnWriteArrayList<>();
        /** Replaced whole by a snapshot, so a reader never sees half of one; changes are applied in place. */
        volatile ConcurrentHashMap<String, Route> routes = new ConcurrentHashMap<>();
        final Object monitor = new Object();
        volatile long revision;
        volatile boolean synced;
        volatile boolean closed;
        volatile Routes.@Nullable Watch watch;
        volatile int failures;
        volatile long snapshots;

        Copy(Routes source) {
            this.source = source;
        }

        void leave(RoutingTable view) {
            boolean last;
            synchronized (COPIES) {
                views.remove(view);
                last = views.isEmpty() && !closed;
            }
            if (last) {
                close();
            } else {
                wake();
            }
        }

        void close() {
            synchronized (COPIES) {
                closed = true;
                COPIES.remove(source, this);
            }
            Routes.Watch w = watch;
            if (w != null) {
                w.close();
            }
            wake();
        }

        void connect() {
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

        void retry() {
            if (closed) {
                return;
            }
            failures++;
            try {
                Recipes.timer().schedule(this::connect, Recipes.backoffMillis(failures), TimeUnit.MILLISECONDS);
            } catch (RuntimeException rejected) {
                close();
            }
        }

        void snapshot(long at, List<Route> all) {
            ConcurrentHashMap<String, Route> fresh = new ConcurrentHashMap<>();
            all.forEach(r -> fresh.put(r.mailboxId(), r));
            Map<String, Route> before = routes;
            routes = fresh;
            revision = at;
            snapshots++;
            synced = true;
            List<RoutingTable> told = new ArrayList<>(views);
            if (told.stream().anyMatch(v -> !v.listeners.isEmpty())) {
                for (String gone : before.keySet()) {
                    if (!fresh.containsKey(gone)) {
                        told.forEach(v -> v.tell(gone, null, at));
                    }
                }
                for (Route r : fresh.values()) {
                    if (!r.equals(before.get(r.mailboxId()))) {
                        told.forEach(v -> v.tell(r.mailboxId(), r, at));
                    }
                }
            }
            wake();
        }

        void change(long at, List<Route> changed, List<String> removed) {
            if (at > revision) {
                revision = at;
                synced = true;
                for (Route route : changed) {
                    routes.put(route.mailboxId(), route);
                    views.forEach(v -> v.tell(route.mailboxId(), route, at));
                }
                for (String gone : removed) {
                    routes.remove(gone);
                    views.forEach(v -> v.tell(gone, null, at));
                }
            }
            wake();
        }

        void wake() {
            synchronized (monitor) {
                monitor.notifyAll();
            }
        }

        /** One stream's events; when it ends the copy reconnects and resumes from its revision. */
        private final class Watcher implements RouteWatcher {
            @Override
            public void snapshot(long at, List<Route> all) {
                failures = 0;
                Copy.this.snapshot(at, all);
            }

            @Override
            public void change(long at, List<Route> changed, List<String> removed) {
                failures = 0;
                Copy.this.change(at, changed, removed);
            }

            @Override
            public void ended(@Nullable CoordinationException failure) {
                retry();
            }
        }
    }
}
