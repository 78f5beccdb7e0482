package dev.mailbox.coordination.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.ByteString;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
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
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The data plane of one mailbox node: serves the mailboxes the node hosts, and forwards a call for
 * any other mailbox, once, to the address its routing table names.
 *
 * <p>Receipt handles are the hosted mailbox's own; the node keeps the delivered {@link Message}
 * objects by handle until they are acknowledged or nacked or well past their visibility timeout, so
 * that a later call with the handle acts on the same delivery. A handle the node no longer holds is
 * stale, as it would be at the backend.
 */
public final class MailboxServiceImpl extends MailboxServiceGrpc.MailboxServiceImplBase implements AutoCloseable {

    /** The mailbox a call is for, sent as a header too so the node can pick the call's executor early. */
    public static final io.grpc.Metadata.Key<String> MAILBOX_HEADER = io.grpc.Metadata.Key.of("mailbox-id",
            io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    /**
     * @param mailbox a mailbox id
     * @return whether it can travel as a header value (printable ASCII); other ids go without one
     */
    public static boolean headerSafe(String mailbox) {
        for (int i = 0; i < mailbox.length(); i++) {
            char c = mailbox.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

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

    /** Longest wait of one receive call; longer waits are looped by the caller. */
    public static final long MAX_WAIT_MILLIS = 20_000;
    /** How long, and for how many sends, a request id is remembered. */
    public static final Duration SEND_MEMORY = Duration.ofMinutes(5);
    private static final long SEND_MEMORY_SIZE = 100_000;
    /** Longest request id a send may carry. */
    public static final int MAX_REQUEST_ID = 128;
    /** How long a handle is kept past its visibility deadline before it is forgotten. */
    private static final long HANDLE_SLACK_NANOS = TimeUnit.MINUTES.toNanos(5);

    private final String selfAddress;
    private final java.util.concurrent.Executor pool;
    private final Map<String, Mailbox<byte[]>> hosted;
    private final Function<String, Optional<Route>> routes;
    private final ConcurrentHashMap<String, ManagedChannel> peers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Held> handles = new ConcurrentHashMap<>();
    /** Sends by request id (mailbox + id): a repeat gets the first reply, or waits for it. */
    private final Cache<String, CompletableFuture<List<String>>> sends = Caffeine.newBuilder()
            .expireAfterWrite(SEND_MEMORY).maximumSize(SEND_MEMORY_SIZE)
            .executor(Runnable::run) // upkeep inline: handing it to the common pool cost ~9 % of direct cycles
            .build();
    private final Counter local;
    private final Counter forwarded;
    private final Counter unroutable;

    private static final class Held {
        final Message<byte[]> message;
        volatile long forgetAt;

        Held(Message<byte[]> message, long forgetAt) {
            this.message = message;
            this.forgetAt = forgetAt;
        }
    }

    /**
     * @param selfAddress the address routes name for this node
     * @param hosted      the hosted mailboxes, by id (a live view)
     * @param routes      the routing table
     * @param registry    where the counters go
     */
    public MailboxServiceImpl(String selfAddress, Map<String, Mailbox<byte[]>> hosted,
                              Function<String, Optional<Route>> routes, MeterRegistry registry,
                              java.util.concurrent.Executor pool) {
        this.pool = pool;
        this.selfAddress = selfAddress;
        this.hosted = hosted;
        this.routes = routes;
        this.local = Counter.builder("mailbox.node.calls").tag("path", "local").register(registry);
        this.forwarded = Counter.builder("mailbox.node.calls").tag("path", "forwarded").register(registry);
        this.unroutable = Counter.builder("mailbox.node.calls").tag("path", "unroutable").register(registry);
    }

    /**
     * Picks each call's executor: a call for a mailbox this node does not host only starts a
     * non-blocking forward, so it runs on the transport thread, saving a thread hop per forwarded
     * call; everything else (which may block in a long poll) runs on the pool.
     *
     * @return the supplier for the server builder
     */
    public io.grpc.ServerCallExecutorSupplier executors() {
        return new io.grpc.ServerCallExecutorSupplier() {
            @Override
            public <Q, A> java.util.concurrent.@Nullable Executor getExecutor(io.grpc.ServerCall<Q, A> call,
                                                                           io.grpc.Metadata headers) {
                String mailbox = headers.get(MAILBOX_HEADER);
                return mailbox != null && !hosted.containsKey(mailbox) ? INLINE_EXECUTOR : null;
            }
        };
    }

    /**
     * A call picked to run inline that finds its mailbox hosted after all (it was hosted in between)
     * moves to the pool, where blocking is allowed.
     */
    private boolean movedToPool(String mailbox, Runnable handler) {
        if (INLINE.get() == Boolean.TRUE && hosted.containsKey(mailbox)) {
            pool.execute(Context.current().wrap(handler));
            return true;
        }
        return false;
    }

    /** What to do with a call: serve it here, forward it, or refuse it. */
    private @Nullable Mailbox<byte[]> local(String mailbox, int hops, StreamObserver<?> out,
                                           java.util.function.Consumer<MailboxServiceGrpc.MailboxServiceStub> forward) {
        if (mailbox.isBlank()) {
            out.onError(DataErrors.error("invalid", Status.INVALID_ARGUMENT, "mailbox must not be blank", false, ""));
            return null;
        }
        Mailbox<byte[]> m = hosted.get(mailbox);
        if (m != null) {
            local.increment();
            return m;
        }
        Optional<Route> route = routes.apply(mailbox);
        if (route.isEmpty() || route.get().address().equals(selfAddress) || hops > 0) {
            unroutable.increment();
            String why = route.isEmpty() ? "no runner holds its lease" : "the route points back at this node";
            out.onError(DataErrors.error(DataErrors.NO_ROUTE, Status.UNAVAILABLE, "mailbox '" + mailbox
                    + "' is not hosted on node " + selfAddress + " and " + why + "; retry once it has an owner",
                    true, ""));
            return null;
        }
        forwarded.increment();
        MailboxServiceGrpc.MailboxServiceStub stub = MailboxServiceGrpc.newStub(peer(route.get().address()));
        if (headerSafe(mailbox)) {
            io.grpc.Metadata header = new io.grpc.Metadata();
            header.put(MAILBOX_HEADER, mailbox);
            stub = stub.withInterceptors(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(header));
        }
        io.grpc.Deadline deadline = Context.current().getDeadline();
        if (deadline != null) {
            stub = stub.withDeadline(deadline);
        }
        forward.accept(stub.withMaxInboundMessageSize(MAX_MESSAGE).withMaxOutboundMessageSize(MAX_MESSAGE));
        return null;
    }

    /** Largest gRPC message either way: ten bodies of up to 1 MiB plus headers. */
    public static final int MAX_MESSAGE = 16 * 1024 * 1024;

    private ManagedChannel peer(String address) {
        // replies are relayed straight to the caller's observer, which never blocks: no executor hop
        return peers.computeIfAbsent(address, a -> NettyChannelBuilder.forTarget(a).usePlaintext().directExecutor()
                .maxInboundMessageSize(MAX_MESSAGE).build());
    }

    @Override
    public void send(SendRequest r, StreamObserver<SendReply> out) {
        if (movedToPool(r.getMailbox(), () -> send(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.send(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m == null) {
            return;
        }
        try {
            List<String> ids = r.getRequestId().isEmpty() ? store(m, r) : storeOnce(m, r);
            out.onNext(SendReply.newBuilder().addAllMessageIds(ids).build());
            out.onCompleted();
        } catch (RuntimeException e) {
            out.onError(DataErrors.toStatus(e));
        }
    }

    private static List<String> store(Mailbox<byte[]> m, SendRequest r) {
        SendOptions options = SendOptions.defaults().withDelay(Duration.ofMillis(r.getDelayMillis()))
                .withAttributes(r.getAttributesMap());
        List<byte[]> bodies = r.getBodiesList().stream().map(ByteString::toByteArray).toList();
        return bodies.size() == 1 ? List.of(m.send(bodies.get(0), options)) : m.sendBatch(bodies, options);
    }

    /**
     * Stores a send the first time its request id is seen. A failed send is forgotten, so it can be
     * retried; a repeat that arrives while the first is running waits for its outcome.
     */
    private List<String> storeOnce(Mailbox<byte[]> m, SendRequest r) {
        if (r.getRequestId().length() > MAX_REQUEST_ID) {
            throw new IllegalArgumentException("request id must be at most " + MAX_REQUEST_ID + " characters, was "
                    + r.getRequestId().length());
        }
        String key = r.getMailbox() + '\n' + r.getRequestId();
        CompletableFuture<List<String>> mine = new CompletableFuture<>();
        CompletableFuture<List<String>> first = sends.asMap().putIfAbsent(key, mine);
        if (first != null) {
            try {
                return first.join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException re ? re : e;
            }
        }
        try {
            List<String> ids = store(m, r);
            mine.complete(ids);
            return ids;
        } catch (RuntimeException e) {
            sends.asMap().remove(key, mine);
            mine.completeExceptionally(e);
            throw e;
        }
    }

    @Override
    public void receive(ReceiveRequest r, StreamObserver<ReceiveReply> out) {
        if (movedToPool(r.getMailbox(), () -> receive(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.receive(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m == null) {
            return;
        }
        List<Message<byte[]>> got;
        try {
            if (r.getWaitMillis() > MAX_WAIT_MILLIS) {
                throw new IllegalArgumentException("wait must be at most " + MAX_WAIT_MILLIS + " ms per call, was "
                        + r.getWaitMillis());
            }
            ReceiveOptions options = ReceiveOptions.defaults().withMaxMessages(r.getMaxMessages())
                    .withVisibilityTimeout(Duration.ofMillis(r.getVisibilityTimeoutMillis()))
                    .withWaitTime(Duration.ofMillis(r.getWaitMillis()));
            got = m.receive(options);
        } catch (RuntimeException e) {
            out.onError(DataErrors.toStatus(e));
            return;
        }
        if (Context.current().isCancelled()) {
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
        long forgetAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(r.getVisibilityTimeoutMillis())
                + HANDLE_SLACK_NANOS;
        ReceiveReply.Builder b = ReceiveReply.newBuilder();
        for (Message<byte[]> msg : got) {
            handles.put(key(r.getMailbox(), msg.receiptHandle()), new Held(msg, forgetAt));
            b.addMessages(Delivery.newBuilder().setMessageId(msg.id()).setBody(ByteString.copyFrom(msg.body()))
                    .setReceiptHandle(msg.receiptHandle()).setDeliveryCount(msg.deliveryCount())
                    .setEnqueuedAtMillis(msg.enqueuedAt().toEpochMilli()).putAllAttributes(msg.attributes()));
        }
        forgetLapsed();
        out.onNext(b.build());
        out.onCompleted();
    }

    @Override
    public void handle(HandleRequest r, StreamObserver<HandleReply> out) {
        if (movedToPool(r.getMailbox(), () -> handle(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.handle(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m == null) {
            return;
        }
        String key = key(r.getMailbox(), r.getReceiptHandle());
        Held held = handles.get(key);
        try {
            if (held == null) {
                throw new ReceiptHandleExpiredException(r.getReceiptHandle(), "receipt handle " + r.getReceiptHandle()
                        + " of mailbox '" + r.getMailbox() + "' is stale: acknowledged, nacked, purged, or long past"
                        + " its visibility timeout");
            }
            Duration timeout = Duration.ofMillis(r.getVisibilityTimeoutMillis());
            switch (r.getAction()) {
                case ACKNOWLEDGE -> {
                    held.message.acknowledge();
                    handles.remove(key, held);
                }
                case NACK -> {
                    held.message.nack(timeout);
                    handles.remove(key, held);
                }
                case EXTEND -> {
                    held.message.extendVisibility(timeout);
                    held.forgetAt = System.nanoTime() + timeout.toNanos() + HANDLE_SLACK_NANOS;
                }
                default -> throw new IllegalArgumentException("action must be ACKNOWLEDGE, NACK or EXTEND, was "
                        + r.getAction());
            }
            out.onNext(HandleReply.getDefaultInstance());
            out.onCompleted();
        } catch (RuntimeException e) {
            out.onError(DataErrors.toStatus(e));
        }
    }

    @Override
    public void count(MailboxRequest r, StreamObserver<CountReply> out) {
        if (movedToPool(r.getMailbox(), () -> count(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.count(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m != null) {
            reply(() -> CountReply.newBuilder().setCount(m.approximateCount()).build(), out);
        }
    }

    @Override
    public void purge(MailboxRequest r, StreamObserver<CountReply> out) {
        if (movedToPool(r.getMailbox(), () -> purge(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.purge(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m != null) {
            reply(() -> {
                long n = m.purge();
                handles.keySet().removeIf(k -> k.startsWith(r.getMailbox() + "\n"));
                return CountReply.newBuilder().setCount(n).build();
            }, out);
        }
    }

    @Override
    public void capabilities(MailboxRequest r, StreamObserver<CapabilitiesReply> out) {
        if (movedToPool(r.getMailbox(), () -> capabilities(r, out))) {
            return;
        }
        Mailbox<byte[]> m = local(r.getMailbox(), r.getHops(), out,
                stub -> stub.capabilities(r.toBuilder().setHops(r.getHops() + 1).build(), out));
        if (m != null) {
            reply(() -> {
                MailboxCapabilities c = m.capabilities();
                return CapabilitiesReply.newBuilder().setExactCount(c.exactCount()).setFifo(c.fifo())
                        .setDetectsStaleAcknowledge(c.detectsStaleAcknowledge()).setCapacity(c.capacity())
                        .setAtomicDeadLetter(c.atomicDeadLetter()).setMaxMessageBytes(c.maxMessageBytes())
                        .setTimeGranularityMillis(Math.max(1, c.timeGranularity().toMillis())).build();
            }, out);
        }
    }

    private static <R> void reply(java.util.function.Supplier<R> answer, StreamObserver<R> out) {
        R value;
        try {
            value = answer.get();
        } catch (RuntimeException e) {
            out.onError(DataErrors.toStatus(e));
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }

    /**
     * Forgets the handles of a mailbox that is no longer hosted here.
     *
     * @param mailbox the mailbox
     */
    public void forget(String mailbox) {
        handles.keySet().removeIf(k -> k.startsWith(mailbox + "\n"));
    }

    private void forgetLapsed() {
        if (handles.size() < 1_024) {
            return;
        }
        long now = System.nanoTime();
        handles.values().removeIf(h -> now - h.forgetAt > 0);
    }

    private static String key(String mailbox, String handle) {
        return mailbox + "\n" + handle;
    }

    /** @return handles held for deliveries that are not yet acknowledged or nacked */
    public int heldHandles() {
        return handles.size();
    }

    @Override
    public void close() {
        peers.values().forEach(ManagedChannel::shutdownNow);
        peers.clear();
        handles.clear();
    }
}
