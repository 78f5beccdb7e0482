package dev.mailbox.coordination;

import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.RouteEvent;
import dev.mailbox.coordination.proto.WatchRoutesRequest;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
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
 * Obtain one from {@link CoordinationClient#watchRoutes()}.
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

    private final CoordinationClient client;
    /** Replaced whole by a snapshot, so a reader never sees half of one; changes are applied in place. */
    private volatile ConcurrentHashMap<String, Route> routes = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private final Object monitor = new Object();
    private volatile long revision;
    private volatile boolean synced;
    private volatile boolean closed;
    private volatile @Nullable ClientCallStreamObserver<WatchRoutesRequest> call;
    private volatile int endpoint; // the stream's callbacks and the scheduler take turns with these
    private volatile int failures;
    private volatile long snapshots;

    RoutingTable(CoordinationClient client) {
        this.client = client;
        this.endpoint = client.currentEndpoint();
        connect();
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
        ClientCallStreamObserver<WatchRoutesRequest> c = call;
        if (c != null) {
            c.cancel("routing table closed", null);
        }
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    private void connect() {
        if (closed) {
            return;
        }
        WatchRoutesRequest request = WatchRoutesRequest.newBuilder().setFromRevision(synced ? revision : 0).build();
        try {
            ControlPlaneGrpc.newStub(client.channel(endpoint)).watchRoutes(request, new Observer());
        } catch (RuntimeException e) {
            retry();
        }
    }

    private void retry() {
        if (closed) {
            return;
        }
        failures++;
        endpoint++;
        long pause = failures <= 1 ? 0 : client.pauseMillis(failures);
        try {
            client.scheduler().schedule(this::connect, pause, TimeUnit.MILLISECONDS);
        } catch (RuntimeException rejected) {
            closed = true; // the client was closed
        }
    }

    private void apply(RouteEvent event) {
        if (event.getSnapshot()) {
            ConcurrentHashMap<String, Route> fresh = new ConcurrentHashMap<>();
            event.getRoutesList().forEach(r -> fresh.put(r.getMailboxId(), Protos.fromProto(r)));
            Map<String, Route> before = routes;
            routes = fresh;
            revision = event.getRevision();
            snapshots++;
            synced = true;
            for (String gone : before.keySet()) {
                if (!fresh.containsKey(gone)) {
                    listeners.forEach(l -> l.changed(gone, null, event.getRevision()));
                }
            }
            for (var p : event.getRoutesList()) {
                Route r = fresh.get(p.getMailboxId());
                if (!r.equals(before.get(r.mailboxId()))) {
                    listeners.forEach(l -> l.changed(r.mailboxId(), r, event.getRevision()));
                }
            }
        } else if (event.getRevision() > revision) {
            revision = event.getRevision();
            synced = true;
            for (var r : event.getRoutesList()) {
                Route route = Protos.fromProto(r);
                routes.put(route.mailboxId(), route);
                listeners.forEach(l -> l.changed(route.mailboxId(), route, event.getRevision()));
            }
            for (String gone : event.getRemovedList()) {
                routes.remove(gone);
                listeners.forEach(l -> l.changed(gone, null, event.getRevision()));
            }
        }
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    private final class Observer implements ClientResponseObserver<WatchRoutesRequest, RouteEvent> {
        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRoutesRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(RouteEvent event) {
            failures = 0;
            apply(event);
        }

        @Override
        public void onError(Throwable t) {
            retry();
        }

        @Override
        public void onCompleted() {
            retry();
        }
    }

    @Override
    public String toString() {
        return "RoutingTable[revision=" + revision + ", routes=" + routes.size() + "]";
    }
}
