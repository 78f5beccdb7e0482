package dev.mailbox.coordination.server.internal;

import com.google.protobuf.ByteString;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.proto.data.CapabilitiesReply;
import dev.mailbox.coordination.proto.data.CountReply;
import dev.mailbox.coordination.proto.data.Delivery;
import dev.mailbox.coordination.proto.data.HandleReply;
import dev.mailbox.coordination.proto.data.HandleRequest;
import dev.mailbox.coordination.proto.data.MailboxRequest;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.coordination.proto.data.SendReply;
import dev.mailbox.coordination.proto.data.SendRequest;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.wire.DataPlane;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The data plane of one mailbox node: serves the mailboxes the node hosts, and forwards a call for
 * any other mailbox, once, to the address its routing table names.
 *
 * <p>The node keeps nothing a client relies on in its memory: receipt handles are the backend's own
 * and are acted on through the backend by handle, and a send's request id is the backend's
 * deduplication id, so a node restarted on a shared backend honours both (unless the client made the id up
 * and the mailbox deduplicates by content, which then does it). Group ids and sequence numbers pass through
 * both ways, and a FIFO mailbox's rules are the hosted mailbox's own. A receive or handle action
 * that carries a fence is refused when its epoch is below the epoch of the mailbox's current route,
 * and is otherwise made through the backend's {@link Mailbox#fenced fenced} view, which refuses it
 * once a later holder has used the mailbox.
 */
public final class MailboxServiceImpl extends MailboxServiceGrpc.MailboxServiceImplBase implements AutoCloseable {


    /** Set while a call runs on the transport thread (see {@link #executors}). */
    private static final ThreadLocal<Boolean> INLINE = new ThreadLocal<>();
    private static final java.util.concurrent.Executor INLINE_EXECUTOR = task -> {
        INLINE.set(Boolean.TRUE);
        try {
            task.run();
        } finally {
            INLINE.remove();
        }
    };

    /** Where the node finds the mailbox a call is for, if it serves it itself. */
    public interface Hosting {
        /**
         * @param mailbox the mailbox id
         * @param route   its route, if it has one
         * @param hops    how many nodes the call came through (1: it was forwarded here)
         * @return the mailbox to serve the call with here, or null to forward it by its route (or refuse it)
         */
        @Nullable Mailbox<byte[]> serveHere(String mailbox, Optional<Route> route, int hops);

        /**
         * @param mailbox the mailbox id
         * @return whether the node has a mailbox object for it now (hosted, or opened from its backend)
         */
        boolean has(String mailbox);
    }

    /**
     * The most waiting receives that hold a thread each at once: on a backend that cannot park a receive
     * without one (see {@link dev.mailbox.api.spi.AsyncReceiver}), whatever the node's own limit.
     */
    public static final int MAX_BLOCKING_WAITS = 256;

    private final String selfAddress;
    private final java.util.concurrent.Executor pool;
    private final java.util.concurrent.Executor receives;
    private final java.util.concurrent.Executor blockingPool;
    private final java.util.concurrent.Semaphore blockingWaits = new java.util.concurrent.Semaphore(MAX_BLOCKING_WAITS);
    private final Hosting hosting;
    private final @Nullable AccessPolicy policy;
    private final dev.mailbox.coordination.ClientSecurity peerSecurity;
    private final List<io.grpc.ClientInterceptor> peerInterceptors;
    private final Function<String, Optional<Route>> routes;
    private final ConcurrentHashMap<String, Peer> peers = new ConcurrentHashMap<>();
    private final java.util.concurrent.Semaphore waiting;
    private final int maxWaiting;
    private final Counter busy;
    private final Counter local;
    private final Counter forwarded;
    private final Counter unroutable;

    /**
     * @param selfAddress the address routes name for this node
     * @param hosting     which mailboxes the node serves itself
     * @param routes      the routing table
     * @param meters      where the counters go
     * @param pool        where calls other than receives run (sends, acknowledgements, counts: short ones)
     * @param receives    where receives start (their first pass; a parked one then holds no thread)
     * @param blockingPool where the waiting receives of a backend that cannot park them wait, a thread each
     *                    (at most {@link #MAX_BLOCKING_WAITS} at once)
     * @param maxWaiting  the most receives that may wait at once
     * @param policy       who may do what, or null when security is off
     * @param peerSecurity how this node calls other nodes when it forwards
     * @param peerInterceptors run around every forwarded call
     */
    public MailboxServiceImpl(String selfAddress, Hosting hosting,
                              Function<String, Optional<Route>> routes, Meters meters,
                              java.util.concurrent.Executor pool, java.util.concurrent.Executor receives,
                              java.util.concurrent.Executor blockingPool, int maxWaiting,
                              @Nullable AccessPolicy policy, dev.mailbox.coordination.ClientSecurity peerSecurity,
                              List<io.grpc.ClientInterceptor> peerInterceptors) {
        this.policy = policy;
        this.peerSecurity = peerSecurity;
        this.peerInterceptors = peerInterceptors;
        this.pool = pool;
        this.receives = receives;
        this.blockingPool = blockingPool;
        this.selfAddress = selfAddress;
        this.hosting = hosting;
        this.routes = routes;
        this.maxWaiting = maxWaiting;
        this.waiting = new java.util.concurrent.Semaphore(maxWaiting);
        this.busy = meters.counter("mailbox.node.receives.refused");
        this.local = meters.counter("mailbox.node.calls", "path", "local");
        this.forwarded = meters.counter("mailbox.node.calls", "path", "forwarded");
        this.unroutable = meters.counter("mailbox.node.calls", "path", "unroutable");
        meters.gauge("mailbox.node.receives.waiting", "receives waiting (long-polling) on this node now", waiting,
                w -> maxWaiting - w.availablePermits());
    }

    /**
     * Picks each call's executor: a call for a mailbox this node does not host only starts a
     * non-blocking forward, so it runs on the transport thread, saving a thread hop per forwarded
     * call; a receive starts on the receive threads, so that however many receives arrive at once, sends
     * and acknowledgements never queue behind them; everything else runs on the pool (the server's executor).
     *
     * @return the supplier for the server builder
     */
    public io.grpc.ServerCallExecutorSupplier executors() {
        String receive = MailboxServiceGrpc.getReceiveMethod().getFullMethodName();
        return new io.grpc.ServerCallExecutorSupplier() {
            @Override
            public <Q, A> java.util.concurrent.@Nullable Executor getExecutor(io.grpc.ServerCall<Q, A> call,
                                                                           io.grpc.Metadata headers) {
                String mailbox = headers.get(DataPlane.MAILBOX_HEADER);
                if (mailbox != null && forwardsOnly(mailbox)) {
                    return INLINE_EXECUTOR;
                }
                return call.getMethodDescriptor().getFullMethodName().equals(receive) ? receives : null;
            }
        };
    }

    /**
     * A call picked to run inline that finds its mailbox hosted after all (it was hosted in between)
     * moves to {@code executor}, where blocking is allowed.
     */
    private boolean movedTo(java.util.concurrent.Executor executor, String mailbox, Runnable handler) {
        if (INLINE.get() == Boolean.TRUE && !forwardsOnly(mailbox)) {
            executor.execute(Context.current().wrap(handler));
            return true;
        }
        return false;
    }

    private boolean movedToPool(String mailbox, Runnable handler) {
        return movedTo(pool, mailbox, handler);
    }

    /** Whether a call for this mailbox will surely be forwarded: no object here, and a route elsewhere. */
    private boolean forwardsOnly(String mailbox) {
        if (hosting.has(mailbox)) {
            return false;
        }
        Optional<Route> route = routes.apply(mailbox);
        return route.isPresent() && !route.get().address().equals(selfAddress);
    }

    /** The header a forwarding node names the original caller in; captured by {@link #vouching()}. */
    private static final Context.Key<String> ON_BEHALF_OF = Context.key("mailbox-on-behalf-of");

    /**
     * Puts the {@code mailbox-on-behalf-of} header in the call's context, for the authorization that
     * decides whether to believe it (only a caller with the node role is believed).
     *
     * @return the interceptor, to run after {@link Caller}
     */
    public static io.grpc.ServerInterceptor vouching() {
        return new io.grpc.ServerInterceptor() {
            @Override
            public <Q, A> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, A> call,
                                                                      io.grpc.Metadata headers,
                                                                      io.grpc.ServerCallHandler<Q, A> next) {
                String onBehalf = headers.get(DataPlane.ON_BEHALF_OF);
                return onBehalf == null ? next.startCall(call, headers) : io.grpc.Contexts.interceptCall(
                        Context.current().withValue(ON_BEHALF_OF, onBehalf), call, headers, next);
            }
        };
    }

    /**
     * The principal a call is made for: its caller's, or, for a call a node forwarded, the original
     * caller's that the node names (believed from callers with the node role only).
     */
    private String principal(String namespace) {
        String caller = Caller.current();
        String onBehalf = ON_BEHALF_OF.get();
        if (onBehalf != null && policy != null && policy.allows(caller, AccessPolicy.Permission.NODE, namespace)) {
            return onBehalf;
        }
        return caller;
    }

    /** What to do with a call: serve it here, forward it, or refuse it. */
    private @Nullable Mailbox<byte[]> local(String mailbox, int hops, StreamObserver<?> out,
                                           AccessPolicy.Permission needed,
                                           java.util.function.Consumer<MailboxServiceGrpc.MailboxServiceStub> forward) {
        String bad = CoordinationLimits.mailboxIdProblem(mailbox);
        if (bad == null && hops < 0) {
            // forwarding nodes count up from 0: a negative count would let a call be forwarded again and again
            bad = "hops must be 0 or more, was " + hops;
        }
        if (bad != null) {
            out.onError(DataPlane.invalid(bad));
            return null;
        }
        String namespace = CoordinationLimits.namespaceOf(mailbox);
        String principal = principal(namespace);
        if (policy != null && !policy.allows(principal, needed, namespace)) {
            String action = needed.name().toLowerCase(java.util.Locale.ROOT);
            Audit.refused(principal, action, mailbox, "not granted");
            out.onError(io.grpc.Status.PERMISSION_DENIED.withDescription(principal + " may not " + action
                    + " in namespace '" + namespace + "'").asRuntimeException());
            return null;
        }
        Optional<Route> route = routes.apply(mailbox);
        Mailbox<byte[]> m;
        try {
            m = hosting.serveHere(mailbox, route, hops);
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e)); // the backend refused the id, or cannot be reached
            return null;
        }
        if (m != null) {
            local.increment();
            return m;
        }
        if (route.isEmpty() || route.get().address().equals(selfAddress) || hops > 0) {
            unroutable.increment();
            String why = route.isEmpty() ? "no runner holds its lease" : "the route points back at this node";
            out.onError(DataPlane.noRoute("mailbox '" + mailbox + "' is not hosted on node " + selfAddress + " and "
                    + why + "; retry once it has an owner"));
            return null;
        }
        forwarded.increment();
        Peer peer = peer(route.get().address());
        // the peer's channel stays open while this call runs: released when the call closes (see Peer)
        MailboxServiceGrpc.MailboxServiceStub stub = MailboxServiceGrpc.newStub(peer.channel).withInterceptors(peer);
        io.grpc.Metadata header = new io.grpc.Metadata();
        if (DataPlane.headerSafe(mailbox)) {
            header.put(DataPlane.MAILBOX_HEADER, mailbox);
        }
        if (policy != null) {
            // the owner checks the original caller, not this node: a node cannot launder a call
            header.put(DataPlane.ON_BEHALF_OF, principal);
        }
        stub = stub.withInterceptors(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(header));
        io.grpc.Deadline deadline = Context.current().getDeadline();
        if (deadline != null) {
            stub = stub.withDeadline(deadline);
        }
        try {
            forward.accept(stub.withMaxInboundMessageSize(DataPlane.MAX_MESSAGE)
                    .withMaxOutboundMessageSize(DataPlane.MAX_MESSAGE));
        } finally {
            peer.release(); // the call holds its own use from its start to its close
        }
        return null;
    }


    /**
     * Relays a forwarded call's answer. The owner's own errors pass unchanged; an owner that cannot be
     * reached at all (it died, and its lease has not expired yet) becomes a retryable no-route error, so
     * that a {@link dev.mailbox.coordination.RemoteMailbox} waits for the route to move rather than fail.
     */
    private <R> StreamObserver<R> relay(StreamObserver<R> out, String mailbox) {
        return new StreamObserver<>() {
            @Override
            public void onNext(R value) {
                out.onNext(value);
            }

            @Override
            public void onError(Throwable t) {
                if (t instanceof io.grpc.StatusRuntimeException e && DataPlane.kind(e) == null
                        && e.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE) {
                    out.onError(DataPlane.noRoute("the owner of mailbox '" + mailbox + "' cannot be reached ("
                            + e.getStatus().getDescription() + "); retry once its lease moves"));
                } else {
                    out.onError(t);
                }
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    /** A channel to a peer that is in use: release it when done (see {@link Peer#release}). */
    private Peer peer(String address) {
        while (true) {
            Peer p = peers.computeIfAbsent(address, this::openPeer);
            if (p.acquire()) {
                return p;
            }
            peers.remove(address, p); // closed by a sweep between the lookup and the acquire
        }
    }

    private Peer openPeer(String address) {
        // replies are relayed straight to the caller's observer, which never blocks: no executor hop
        return new Peer(address, dev.mailbox.coordination.internal.Tls.channel(address, peerSecurity)
                .directExecutor().maxInboundMessageSize(DataPlane.MAX_MESSAGE).intercept(peerInterceptors).build());
    }

    /**
     * Closes the channels to peers that no call has used for {@code idleNanos} and that carry no call now. A
     * peer that moved (a node restarted at another address, a route now naming another node) is no longer
     * called at its old address, so its channel there goes; a peer still in use keeps its channel, and one
     * idle a while is reconnected on its next call.
     *
     * @param idleNanos how long a channel may go unused
     * @return how many were closed
     */
    public int closeIdlePeers(long idleNanos) {
        int closed = 0;
        long now = System.nanoTime();
        for (Peer p : peers.values()) {
            if (p.closeIfIdle(now, idleNanos)) {
                peers.remove(p.address, p);
                closed++;
            }
        }
        return closed;
    }

    /** @return the addresses this node holds a channel to now, for forwarding */
    public java.util.Set<String> peerAddresses() {
        return new java.util.TreeSet<>(peers.keySet());
    }

    /**
     * A channel to another node and the calls on it: counted from {@link #acquire} (or, for a call, from its
     * start) to {@link #release} (its close), so that a sweep never closes a channel a call is using or about
     * to use.
     */
    private static final class Peer implements io.grpc.ClientInterceptor {
        final String address;
        final ManagedChannel channel;
        private int inUse; // guarded by this
        private long lastUsed = System.nanoTime(); // guarded by this
        private boolean closed; // guarded by this

        Peer(String address, ManagedChannel channel) {
            this.address = address;
            this.channel = channel;
        }

        synchronized boolean acquire() {
            if (closed) {
                return false;
            }
            inUse++;
            lastUsed = System.nanoTime();
            return true;
        }

        synchronized void release() {
            inUse--;
            lastUsed = System.nanoTime();
        }

        boolean closeIfIdle(long now, long idleNanos) {
            synchronized (this) {
                if (closed || inUse > 0 || now - lastUsed < idleNanos) {
                    return false;
                }
                closed = true;
            }
            channel.shutdown();
            return true;
        }

        void closeNow() {
            synchronized (this) {
                closed = true;
            }
            channel.shutdownNow();
        }

        @Override
        public <Q, A> io.grpc.ClientCall<Q, A> interceptCall(io.grpc.MethodDescriptor<Q, A> method,
                                                           io.grpc.CallOptions options, io.grpc.Channel next) {
            return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<A> listener, io.grpc.Metadata headers) {
                    acquire(); // cannot fail: the forwarding call holds a use until this start returns
                    try {
                        super.start(new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                                listener) {
                            @Override
                            public void onClose(io.grpc.Status status, io.grpc.Metadata trailers) {
                                release();
                                super.onClose(status, trailers);
                            }
                        }, headers);
                    } catch (RuntimeException | Error e) {
                        release();
                        throw e;
                    }
                }
            };
        }
    }

    @Override
    public void send(SendRequest r, StreamObserver<SendReply> out) {
        if (movedToPool(r.getMailbox(), () -> send(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.SEND,
                stub -> stub.send(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m == null) {
            return;
        }
        try {
            List<String> ids = store(m, r);
            out.onNext(SendReply.newBuilder().addAllMessageIds(ids).build());
            out.onCompleted();
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e));
        }
    }

    private static List<String> store(Mailbox<byte[]> m, SendRequest r) {
        SendOptions options = dev.mailbox.api.spi.StoredAttributes.addTo(
                SendOptions.defaults().withDelay(Duration.ofMillis(r.getDelayMillis())), r.getAttributesMap());
        if (!r.getGroupId().isEmpty()) {
            options = options.withGroupId(r.getGroupId()); // refused, naming the rule, if malformed
        }
        // a made-up id would keep equal bodies apart where the caller's mailbox deduplicates by content; the
        // content does the retry's deduplication there instead
        boolean byContent = r.getRequestIdGenerated() && m.capabilities().contentBasedDeduplication();
        if (!r.getRequestId().isEmpty() && !byContent) {
            // the backend remembers it (with the messages where it can), not this node: a retry after a
            // lost reply, or after this node restarted, stores nothing again
            try {
                options = options.withDeduplicationId(r.getRequestId());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("request id: " + e.getMessage(), e);
            }
        }
        List<byte[]> bodies = r.getBodiesList().stream().map(ByteString::toByteArray).toList();
        // a batch of one stays a batch: its deduplication id is "id/0", as on the hosted mailbox itself
        return bodies.size() == 1 && !r.getBatch() ? List.of(m.send(bodies.get(0), options))
                : m.sendBatch(bodies, options);
    }

    @Override
    public void receive(ReceiveRequest r, StreamObserver<ReceiveReply> out) {
        if (movedTo(receives, r.getMailbox(), () -> receive(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.RECEIVE,
                stub -> stub.receive(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m == null) {
            return;
        }
        ReceiveOptions options;
        try { // bad input is refused as such, even on a node too busy to serve it
            if (r.getWaitMillis() > DataPlane.MAX_WAIT_MILLIS) {
                throw new IllegalArgumentException("wait must be at most " + DataPlane.MAX_WAIT_MILLIS
                        + " ms per call, was " + r.getWaitMillis());
            }
            options = ReceiveOptions.defaults().withMaxMessages(r.getMaxMessages())
                    .withVisibilityTimeout(Duration.ofMillis(r.getVisibilityTimeoutMillis()))
                    .withWaitTime(Duration.ofMillis(r.getWaitMillis()));
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e));
            return;
        }
        Mailbox<byte[]> target;
        try {
            target = fenced(m, r.getMailbox(), r.hasFence() ? r.getFence() : null);
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e));
            return;
        }
        if (r.getWaitMillis() == 0) {
            receiveOnThisThread(target, options, out, false);
            return;
        }
        // past the bound, refuse at once rather than let one client's long polls take the node's memory
        if (!waiting.tryAcquire()) {
            busy.increment();
            out.onError(DataPlane.busy("node " + selfAddress + " already holds " + maxWaiting + " waiting receives"
                    + " (its limit, --max-waiting-receives); retry shortly, or receive without waiting"));
            return;
        }
        dev.mailbox.api.spi.AsyncReceiver<byte[]> parkable = dev.mailbox.api.spi.AsyncReceiver.of(target);
        if (parkable != null) {
            receiveParked(parkable, options, out);
            return;
        }
        // this backend waits on a thread: one of a pool of their own, bounded, never one sends run on
        if (!blockingWaits.tryAcquire()) {
            waiting.release();
            busy.increment();
            out.onError(DataPlane.busy("node " + selfAddress + " already holds " + MAX_BLOCKING_WAITS + " waiting"
                    + " receives on a backend whose receives wait on a thread each; retry shortly, or receive"
                    + " without waiting"));
            return;
        }
        try {
            blockingPool.execute(Context.current().wrap(() -> {
                try {
                    receiveOnThisThread(target, options, out, true);
                } finally {
                    blockingWaits.release();
                    waiting.release();
                }
            }));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            blockingWaits.release();
            waiting.release();
            out.onError(io.grpc.Status.UNAVAILABLE.withDescription("node " + selfAddress + " is closing")
                    .asRuntimeException());
        }
    }

    /**
     * A waiting receive parked without a thread: the backend completes it when messages come or the wait
     * ends; a caller that goes away cancels it (and the backend gives back anything it took for it).
     */
    private void receiveParked(dev.mailbox.api.spi.AsyncReceiver<byte[]> parkable, ReceiveOptions options,
                               StreamObserver<ReceiveReply> out) {
        java.util.concurrent.CompletableFuture<List<Message<byte[]>>> future;
        try {
            future = parkable.receiveAsync(options);
        } catch (RuntimeException e) {
            waiting.release();
            out.onError(DataPlane.toStatus(e));
            return;
        }
        Context context = Context.current();
        Context.CancellationListener cancel = c -> future.cancel(false);
        context.addListener(cancel, Runnable::run);
        future.whenComplete((got, failure) -> {
            context.removeListener(cancel);
            waiting.release();
            if (future.isCancelled()) {
                return; // the caller gave up: nothing to answer, and the backend gave back what it took
            }
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                answerError(out, cause instanceof RuntimeException e ? e
                        : new dev.mailbox.api.MailboxException("receive failed: " + cause, cause));
                return;
            }
            answer(got, out, context); // on the backend's thread: the call's context is not the current one
        });
    }

    private static void answerError(StreamObserver<?> out, RuntimeException e) {
        try {
            out.onError(DataPlane.toStatus(e));
        } catch (RuntimeException ended) {
            // the call ended under us
        }
    }

    /**
     * A receive on the calling thread: one that does not wait, or, with {@code waits}, one whose backend holds
     * a thread while it waits.
     */
    private void receiveOnThisThread(Mailbox<byte[]> target, ReceiveOptions options, StreamObserver<ReceiveReply> out,
                                     boolean waits) {
        List<Message<byte[]>> got;
        // a waiting receive whose caller gives up (cancels, closes its mailbox) stops waiting: interrupting it
        // is how a mailbox's wait ends early; left waiting, it would take a message sent later for no one,
        // costing that message a delivery (and, under a redrive policy, maybe sending it to the dead letters)
        AbandonedWait abandoned = waits ? new AbandonedWait() : null;
        try {
            if (abandoned != null) {
                Context.current().addListener(abandoned, Runnable::run);
            }
            got = target.receive(options);
        } catch (RuntimeException e) {
            if (abandoned == null || !abandoned.interrupted()) {
                out.onError(DataPlane.toStatus(e));
            }
            return;
        } finally {
            if (abandoned != null) {
                abandoned.done();
            }
        }
        answer(got, out, Context.current());
    }

    /** Answers a receive; if its caller gave up meanwhile, gives the messages back at once instead. */
    private static void answer(List<Message<byte[]>> got, StreamObserver<ReceiveReply> out, Context call) {
        if (call.isCancelled()) {
            // the caller gave up (or closed its mailbox) while we waited: give the messages back now
            // rather than leave them invisible until their timeout
            for (Message<byte[]> msg : got) {
                try {
                    msg.nack();
                } catch (RuntimeException ignored) {
                    // it lapsed already
                }
            }
            return;
        }
        ReceiveReply.Builder b = ReceiveReply.newBuilder();
        for (Message<byte[]> msg : got) {
            Delivery.Builder d = Delivery.newBuilder().setMessageId(msg.id()).setBody(ByteString.copyFrom(msg.body()))
                    .setReceiptHandle(msg.receiptHandle()).setDeliveryCount(msg.deliveryCount())
                    .setEnqueuedAtMillis(msg.enqueuedAt().toEpochMilli()).putAllAttributes(dev.mailbox.api.spi.StoredAttributes.encode(
                            msg.typedAttributes(), msg.systemAttributes()));
            if (msg.groupId() != null) {
                d.setGroupId(msg.groupId());
            }
            if (msg.sequenceNumber() != null) {
                d.setSequenceNumber(msg.sequenceNumber());
            }
            b.addMessages(d);
        }
        try {
            out.onNext(b.build());
            out.onCompleted();
        } catch (RuntimeException ended) {
            // the call ended under us (cancelled between the check and the answer): its messages lapse back
        }
    }

    /** Interrupts the thread of a waiting receive when its call is cancelled, until {@link #done()}. */
    private static final class AbandonedWait implements Context.CancellationListener {
        private final Thread serving = Thread.currentThread();
        private boolean waiting = true;
        private boolean interrupted;

        @Override
        public synchronized void cancelled(Context context) {
            if (waiting) {
                interrupted = true;
                serving.interrupt();
            }
        }

        /** Ends the wait; clears the interrupt this made, so the pool thread goes back clean. */
        synchronized void done() {
            waiting = false;
            Context.current().removeListener(this);
            if (interrupted) {
                Thread.interrupted();
            }
        }

        synchronized boolean interrupted() {
            return interrupted;
        }
    }

    @Override
    public void handle(HandleRequest r, StreamObserver<HandleReply> out) {
        if (movedToPool(r.getMailbox(), () -> handle(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.RECEIVE,
                stub -> stub.handle(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m == null) {
            return;
        }
        try {
            Mailbox<byte[]> target = fenced(m, r.getMailbox(), r.hasFence() ? r.getFence() : null);
            Duration timeout = Duration.ofMillis(r.getVisibilityTimeoutMillis());
            switch (r.getAction()) {
                case ACKNOWLEDGE -> target.acknowledge(r.getReceiptHandle());
                case NACK -> target.nack(r.getReceiptHandle(), timeout);
                case EXTEND -> target.extendVisibility(r.getReceiptHandle(), timeout);
                default -> throw new IllegalArgumentException("action must be ACKNOWLEDGE, NACK or EXTEND, was "
                        + r.getAction());
            }
            out.onNext(HandleReply.getDefaultInstance());
            out.onCompleted();
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e));
        }
    }

    /**
     * The mailbox as the caller's lease sees it. A fence below the epoch of the mailbox's current route is
     * refused here at once, whatever the backend can check (on SQS only this node's object keeps a fence,
     * and it may not have seen the new holder yet); otherwise the backend's fenced view checks it with the
     * data.
     */
    private Mailbox<byte[]> fenced(Mailbox<byte[]> m, String mailbox,
                                   dev.mailbox.coordination.proto.data.@Nullable Fence fence) {
        if (fence == null) {
            return m;
        }
        if (fence.getEpoch() < 1) {
            throw new IllegalArgumentException("fence epoch must be 1 or more, was " + fence.getEpoch());
        }
        Optional<Route> route = routes.apply(mailbox);
        if (route.isPresent() && route.get().epoch() > fence.getEpoch()) {
            throw new FencedException(mailbox, fence.getEpoch(), route.get().epoch());
        }
        return m.fenced(fence.getEpoch());
    }

    @Override
    public void count(MailboxRequest r, StreamObserver<CountReply> out) {
        if (movedToPool(r.getMailbox(), () -> count(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.COUNT,
                stub -> stub.count(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m != null) {
            reply(() -> CountReply.newBuilder().setCount(m.approximateCount()).build(), out);
        }
    }

    @Override
    public void purge(MailboxRequest r, StreamObserver<CountReply> out) {
        if (movedToPool(r.getMailbox(), () -> purge(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.PURGE,
                stub -> stub.purge(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m != null) {
            reply(() -> CountReply.newBuilder().setCount(m.purge()).build(), out);
        }
    }

    @Override
    public void capabilities(MailboxRequest r, StreamObserver<CapabilitiesReply> out) {
        if (movedToPool(r.getMailbox(), () -> capabilities(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out, AccessPolicy.Permission.COUNT,
                stub -> stub.capabilities(r.toBuilder().setHops(r.getHops() + 1).build(), relay(out, r.getMailbox())));
        if (m != null) {
            reply(() -> {
                MailboxCapabilities c = m.capabilities();
                return CapabilitiesReply.newBuilder().setExactCount(c.exactCount()).setVisibilityOrder(c.visibilityOrder())
                        .setDetectsStaleAcknowledge(c.detectsStaleAcknowledge()).setCapacity(c.capacity())
                        .setAtomicDeadLetter(c.atomicDeadLetter()).setMaxMessageBytes(c.maxMessageBytes())
                        .setTimeGranularityMillis(Math.max(1, c.timeGranularity().toMillis()))
                        .setExtendedNames(c.extendedNames()).setAtomicFencing(c.atomicFencing())
                        .setDurableDeduplication(c.durableDeduplication())
                        .setLateAcknowledge(c.lateAcknowledge()).setFifo(c.fifo()).setFairness(c.fairness())
                        .setContentBasedDeduplication(c.contentBasedDeduplication()).setHoldsRuns(c.holdsRuns())
                        .setSharedDeliveryState(c.sharedDeliveryState()).setSystemAttributes(c.systemAttributes()).build();
            }, out);
        }
    }

    private static <R> void reply(java.util.function.Supplier<R> answer, StreamObserver<R> out) {
        R value;
        try {
            value = answer.get();
        } catch (RuntimeException e) {
            out.onError(DataPlane.toStatus(e));
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }

    @Override
    public void close() {
        peers.values().forEach(Peer::closeNow);
        peers.clear();
    }
}
