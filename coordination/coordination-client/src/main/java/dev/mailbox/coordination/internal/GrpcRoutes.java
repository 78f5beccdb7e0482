package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.RouteWatcher;
import dev.mailbox.coordination.Routes;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.ListRoutesRequest;
import dev.mailbox.coordination.proto.RouteEvent;
import dev.mailbox.coordination.proto.WatchRoutesRequest;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/** {@link Routes} over the control plane. */
final class GrpcRoutes implements Routes {

    private final ControlPlaneCalls calls;

    GrpcRoutes(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public RoutingSnapshot list(@org.jspecify.annotations.Nullable ReadConsistency consistency) {
        ListRoutesRequest r = ListRoutesRequest.newBuilder().setConsistency(Protos.toProto(consistency)).build();
        return CoordinationException.await(calls.call(s -> s.listRoutes(r))
                .thenApply(reply -> new RoutingSnapshot(reply.getRevision(), reply.getRoutesList().stream()
                        .map(Protos::fromProto).toList())));
    }

    @Override
    public Watch watch(long fromRevision, RouteWatcher watcher) {
        if (fromRevision < 0) {
            throw new IllegalArgumentException("fromRevision must be 0 or more, was " + fromRevision);
        }
        if (calls.scheduler().isShutdown()) {
            throw new IllegalStateException("this coordination client is closed: it watches no routes");
        }
        ManagedChannel channel = calls.currentChannel();
        Stream stream = new Stream(channel, watcher);
        try {
            ControlPlaneGrpc.newStub(channel).watchRoutes(WatchRoutesRequest.newBuilder().setFromRevision(fromRevision)
                    .setSnapshotInParts(true).build(), stream);
        } catch (RuntimeException e) {
            stream.onError(e);
        }
        return stream;
    }

    /**
     * One watch: relays events until it ends or is closed. A snapshot comes in parts (each a bounded size, so
     * neither side holds a table's worth in one message); they are put together here and handed on whole.
     */
    private final class Stream implements ClientResponseObserver<WatchRoutesRequest, RouteEvent>, Watch {
        private final ManagedChannel channel;
        private final RouteWatcher watcher;
        private final AtomicBoolean done = new AtomicBoolean();
        private volatile @Nullable ClientCallStreamObserver<WatchRoutesRequest> call;
        /** The parts of a snapshot received so far, by mailbox id; called on the stream's thread only. */
        private java.util.@Nullable LinkedHashMap<String, dev.mailbox.coordination.Route> parts;
        private long partsRevision;

        Stream(ManagedChannel channel, RouteWatcher watcher) {
            this.channel = channel;
            this.watcher = watcher;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRoutesRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(RouteEvent e) {
            if (done.get()) {
                return;
            }
            if (e.getSnapshot()) {
                if (parts == null || partsRevision != e.getRevision()) {
                    parts = new java.util.LinkedHashMap<>(); // a new snapshot (the table was replaced meanwhile)
                    partsRevision = e.getRevision();
                }
                for (dev.mailbox.coordination.proto.Route r : e.getRoutesList()) {
                    dev.mailbox.coordination.Route route = Protos.fromProto(r);
                    parts.put(route.mailboxId(), route);
                }
                if (!e.getMore()) {
                    java.util.List<dev.mailbox.coordination.Route> all = java.util.List.copyOf(parts.values());
                    parts = null;
                    watcher.snapshot(e.getRevision(), all);
                }
            } else {
                watcher.change(e.getRevision(), e.getRoutesList().stream().map(Protos::fromProto).toList(),
                        e.getRemovedList());
            }
        }

        @Override
        public void onError(Throwable t) {
            if (done.compareAndSet(false, true)) {
                calls.moveOn(channel); // the next watch (or call) tries another coordinator first
                watcher.ended(calls.failure(t, calls.endpointIndex(channel)));
            }
        }

        @Override
        public void onCompleted() {
            if (done.compareAndSet(false, true)) {
                watcher.ended(null);
            }
        }

        @Override
        public void close() {
            if (done.compareAndSet(false, true)) {
                ClientCallStreamObserver<WatchRoutesRequest> c = call;
                if (c != null) {
                    c.cancel("watch closed", null);
                }
            }
        }
    }
}
