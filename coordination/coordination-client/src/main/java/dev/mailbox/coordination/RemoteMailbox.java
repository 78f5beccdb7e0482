package dev.mailbox.coordination;

import com.google.protobuf.ByteString;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Bodies;
import dev.mailbox.api.spi.FencedView;
import dev.mailbox.api.spi.Delivery;
import dev.mailbox.coordination.proto.data.CapabilitiesReply;
import dev.mailbox.coordination.proto.data.HandleAction;
import dev.mailbox.coordination.proto.data.Fence;
import dev.mailbox.coordination.proto.data.HandleRequest;
import dev.mailbox.coordination.proto.data.MailboxRequest;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.coordination.proto.data.SendRequest;
import dev.mailbox.coordination.wire.DataPlane;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Mailbox} hosted on some mailbox node, used through any node: the node it talks to serves
 * the call if it hosts the mailbox and forwards it to the owner otherwise (see {@code MailboxNode} in coordination-server).
 * Bodies are encoded and decoded here with this mailbox's codec; the hosting node stores bytes.
 *
 * <p>The contract is the hosted mailbox's: its capabilities, limits, ordering and dead-letter policy
 * apply, and its errors arrive as the same exceptions. While no runner holds the mailbox's lease the
 * node cannot route a call; such a call changed nothing, so it is retried for up to
 * {@link Builder#routeWait} and then fails with a retryable {@link MailboxUnavailableException}. Every
 * call ends within its time limit ({@link Builder#callTimeout}, plus a receive's wait), retries included.
 * When the node it talks to cannot be reached it moves on to the next one it was given (see
 * {@link Builder#nodes}). Each send carries a request id, and the hosting node stores a send once per
 * id, so a send retried after its reply was lost is not stored twice (on a FIFO mailbox with content-based
 * deduplication a send without a deduplication id is stored once per body instead, as it would be locally).
 *
 * <p>Message groups travel end to end: a send's {@link SendOptions#groupId() group id}, and a received
 * message's {@link Message#groupId() group id} and {@link Message#sequenceNumber() sequence number}, so a
 * FIFO or fair hosted mailbox is one through this object too, and says so in {@link #capabilities()}. A
 * FIFO mailbox's rules are its own (checked where it is hosted): a send without a group id, or with a delay,
 * is refused there with {@link IllegalArgumentException} and nothing is stored. How a node knows whether a
 * mailbox it opens itself is FIFO: {@link CoordinationLimits#isFifoMailbox}. An acknowledge, nack or extend
 * retried after a node was cut off mid-call, whose retry finds the handle stale, throws a non-retryable
 * {@link MailboxUnavailableException} (the first attempt may have made it) rather than
 * {@link ReceiptHandleExpiredException}. Other failures are not retried.
 *
 * <p>Thread-safe. {@link #close()} wakes waiting receives (they return empty) and closes the channel
 * if this mailbox opened it.
 *
 * @param <T> the body type
 */
public final class RemoteMailbox<T> implements Mailbox<T> {

    /** What a {@link #fenced} view calls: this mailbox's calls, with the view's epoch sent along. */
    private final FencedView.Operations<T> fencedCalls = new FencedView.Operations<>() {
        @Override
        public List<Message<T>> receive(ReceiveOptions options, long epoch) {
            return RemoteMailbox.this.receive(options, fence(epoch));
        }

        @Override
        public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
            Objects.requireNonNull(messages, "messages");
            Limits.requireBatchSize(messages.size(), "batch size");
            requireOwn(messages);
            return acknowledgeEach(messages, messages, m -> acknowledge(m.receiptHandle(), epoch));
        }

        @Override
        public void acknowledge(String receiptHandle, long epoch) {
            handle(receiptHandle, HandleAction.ACKNOWLEDGE, Duration.ZERO, fence(epoch));
        }

        @Override
        public void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
            Limits.requireVisibilityTimeout(visibilityTimeout, "visibility timeout");
            handle(receiptHandle, HandleAction.NACK, visibilityTimeout, fence(epoch));
        }

        @Override
        public void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
            Limits.requireVisibilityTimeout(timeout, "visibility timeout");
            handle(receiptHandle, HandleAction.EXTEND, timeout, fence(epoch));
        }
    };

    private static Fence fence(long epoch) {
        return Fence.newBuilder().setEpoch(epoch).build();
    }

    private static final long MAX_WAIT_PER_CALL = DataPlane.MAX_WAIT_MILLIS;

    private final String name;
    private final Codec<T> codec;
    private final List<ManagedChannel> channels;
    private final java.util.concurrent.atomic.AtomicInteger current = new java.util.concurrent.atomic.AtomicInteger();
    private final boolean ownsChannel;
    private final Duration callTimeout;
    private final Duration routeWait;
    private final Set<Context.CancellableContext> calls = ConcurrentHashMap.newKeySet();
    /** The header interceptor, then the builder's interceptors: the last one runs first. */
    private final io.grpc.ClientInterceptor[] interceptors;
    /** Request ids are this instance's random prefix and a counter: unique, and cheaper than a UUID per send. */
    private final String sendPrefix = UUID.randomUUID() + ":";
    private final java.util.concurrent.atomic.AtomicLong sends = new java.util.concurrent.atomic.AtomicLong();
    private volatile @Nullable MailboxCapabilities capabilities;
    private volatile boolean closed;

    private RemoteMailbox(Builder<T> b) {
        this.name = b.mailboxId;
        this.codec = b.codec;
        this.callTimeout = b.callTimeout;
        this.routeWait = b.routeWait;
        Metadata md = new Metadata();
        if (DataPlane.headerSafe(name)) {
            md.put(DataPlane.MAILBOX_HEADER, name);
        }
        if (b.onBehalfOf != null) {
            md.put(DataPlane.ON_BEHALF_OF, b.onBehalfOf);
        }
        io.grpc.ClientInterceptor header = io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(md);
        List<io.grpc.ClientInterceptor> all = new ArrayList<>();
        all.add(header);
        all.addAll(b.interceptors);
        this.interceptors = all.toArray(io.grpc.ClientInterceptor[]::new);
        if (b.channel != null) {
            this.channels = List.of(b.channel);
            this.ownsChannel = false;
        } else {
            this.channels = open(b.nodes, b.security);
            this.ownsChannel = true;
        }
    }

    /**
     * Opens a channel to each node, or none: a node whose channel cannot be made (an address gRPC cannot
     * resolve, TLS files that cannot be read) shuts down the channels opened before it, so a builder that
     * throws leaves nothing behind.
     */
    private static List<ManagedChannel> open(List<String> nodes, ClientSecurity security) {
        List<ManagedChannel> list = new ArrayList<>();
        try {
            for (String node : nodes) {
                list.add(dev.mailbox.coordination.internal.Tls.channel(node, security)
                        .maxInboundMessageSize(DataPlane.MAX_MESSAGE).build());
            }
            return List.copyOf(list);
        } catch (RuntimeException | Error e) {
            list.forEach(ManagedChannel::shutdownNow);
            throw e;
        }
    }

    /**
     * @param mailboxId the mailbox's id (as routes and hosting nodes know it)
     * @param codec     how bodies are encoded
     * @param <T>       the body type
     * @return a builder; give it a node or a channel
     */
    public static <T> Builder<T> builder(String mailboxId, Codec<T> codec) {
        return new Builder<>(mailboxId, codec);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String send(T body, SendOptions options) {
        return sendAll(List.of(body), options, false).get(0);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Limits.requireBatchSize(bodies.size(), "batch size");
        return sendAll(bodies, options, true);
    }

    private List<String> sendAll(List<? extends T> bodies, SendOptions options, boolean batch) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        // one id for every attempt of this send, so the owner stores it once even if a reply is lost
        // (the caller's own deduplication id, if it gave one, so that its retries from anywhere count as one)
        boolean generated = options.deduplicationId() == null;
        String requestId = generated ? sendPrefix + sends.incrementAndGet() : options.deduplicationId();
        SendRequest.Builder r = SendRequest.newBuilder().setMailbox(name).setDelayMillis(options.delay().toMillis())
                .putAllAttributes(dev.mailbox.api.spi.StoredAttributes.encode(options)).setRequestId(requestId).setRequestIdGenerated(generated)
                .setBatch(batch);
        if (options.groupId() != null) {
            r.setGroupId(options.groupId());
        }
        for (T body : bodies) {
            Objects.requireNonNull(body, "body");
            // the hosting mailbox checks its own limit; this only refuses what no mailbox could take
            r.addBodies(ByteString.copyFrom(Bodies.encode(codec, body, options, Limits.MAX_MESSAGE_BYTES,
                    name)));
        }
        SendRequest request = r.build();
        return call(left -> stub(left).send(request), callTimeout.toMillis(), bodies.size()).getMessageIdsList();
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return receive(options, null);
    }

    private List<Message<T>> receive(ReceiveOptions options, @Nullable Fence fence) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        long waitLeft = options.waitTime().toMillis();
        while (true) {
            long wait = Math.min(waitLeft, MAX_WAIT_PER_CALL);
            ReceiveRequest.Builder rb = ReceiveRequest.newBuilder().setMailbox(name)
                    .setMaxMessages(options.maxMessages())
                    .setVisibilityTimeoutMillis(options.visibilityTimeout().toMillis()).setWaitMillis(wait);
            if (fence != null) {
                rb.setFence(fence);
            }
            ReceiveRequest request = rb.build();
            ReceiveReply reply;
            try {
                long timeout = callTimeout.toMillis();
                // a retry after a wait for a route waits only for what is left, so the call still ends in time
                reply = call(left -> stub(left).receive(left - timeout >= wait ? request
                                : request.toBuilder().setWaitMillis(Math.max(0, left - timeout)).build()),
                        wait + timeout, 0);
            } catch (MailboxClosedException e) {
                if (closed) {
                    return List.of(); // closed while waiting: woken, with nothing
                }
                throw e;
            }
            if (reply.getMessagesCount() > 0 || waitLeft <= wait) {
                List<Message<T>> out = new ArrayList<>(reply.getMessagesCount());
                reply.getMessagesList().forEach(d -> out.add(new RemoteMessage(d, fence)));
                return out;
            }
            waitLeft -= wait;
            if (closed) {
                return List.of();
            }
        }
    }

    @Override
    public long purge() {
        ensureOpen();
        MailboxRequest r = MailboxRequest.newBuilder().setMailbox(name).build();
        return call(left -> stub(left).purge(r), callTimeout.toMillis(), 0).getCount();
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        MailboxRequest r = MailboxRequest.newBuilder().setMailbox(name).build();
        return call(left -> stub(left).count(r), callTimeout.toMillis(), 0).getCount();
    }

    /**
     * The hosting mailbox's capabilities, asked once and then remembered: all of them, FIFO, fairness and
     * content-based deduplication included, since group ids and sequence numbers travel end to end. A node of
     * data-plane revision 1 (before message groups) reports neither FIFO nor fairness, which is what a mailbox
     * reached through it then offers.
     *
     * @return its capabilities
     */
    @Override
    public MailboxCapabilities capabilities() {
        MailboxCapabilities c = capabilities;
        if (c == null) {
            ensureOpen();
            MailboxRequest r = MailboxRequest.newBuilder().setMailbox(name).build();
            CapabilitiesReply reply = call(left -> stub(left).capabilities(r), callTimeout.toMillis(), 0);
            c = MailboxCapabilities.builder().exactCount(reply.getExactCount()).visibilityOrder(reply.getVisibilityOrder())
                    .detectsStaleAcknowledge(reply.getDetectsStaleAcknowledge()).capacity(reply.getCapacity())
                    .atomicDeadLetter(reply.getAtomicDeadLetter()).maxMessageBytes(reply.getMaxMessageBytes())
                    .timeGranularity(Duration.ofMillis(Math.max(1, reply.getTimeGranularityMillis())))
                    .extendedNames(reply.getExtendedNames()).atomicFencing(reply.getAtomicFencing())
                    .durableDeduplication(reply.getDurableDeduplication())
                    .lateAcknowledge(reply.getLateAcknowledge()).fifo(reply.getFifo()).fairness(reply.getFairness())
                    .contentBasedDeduplication(reply.getContentBasedDeduplication()).holdsRuns(reply.getHoldsRuns())
                    // every object reaches the owner's one hosted object, so what that object keeps is shared
                    .sharedDeliveryState(reply.getSharedDeliveryState())
                    // the stored form carries them both ways, so they come back where the hosted object keeps them
                    .systemAttributes(reply.getSystemAttributes()).build();
            capabilities = c;
        }
        return c;
    }

    @Override
    public void close() {
        closed = true;
        for (Context.CancellableContext c : calls) {
            c.cancel(new MailboxClosedException(name));
        }
        if (ownsChannel) {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new MailboxClosedException(name);
        }
    }

    private MailboxServiceGrpc.MailboxServiceBlockingStub stub(long deadlineMillis) {
        return MailboxServiceGrpc.newBlockingStub(channels.get(Math.floorMod(current.get(), channels.size())))
                .withInterceptors(interceptors)
                .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
                .withMaxInboundMessageSize(DataPlane.MAX_MESSAGE)
                .withMaxOutboundMessageSize(DataPlane.MAX_MESSAGE);
    }

    /**
     * Runs one call in a context {@link #close()} can cancel; waits out a missing route. The call's time limit,
     * {@code limitMillis} from now, bounds everything it does: every attempt's deadline is what is left of it,
     * and waiting for a route stops at it as well as at {@link Builder#routeWait}.
     */
    private <R> R call(java.util.function.LongFunction<R> rpc, long limitMillis, int bodies) {
        return call(rpc, limitMillis, bodies, null);
    }

    /**
     * As {@link #call(java.util.function.LongFunction, long, int)}; sets {@code cutOff[0]} when an attempt failed
     * in a way that does not rule out that it took effect (the connection was lost mid-call, not refused) and the
     * call was retried.
     *
     * @param rpc one attempt, given the milliseconds it may take
     */
    private <R> R call(java.util.function.LongFunction<R> rpc, long limitMillis, int bodies,
                       boolean @Nullable [] cutOff) {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(limitMillis);
        long routeDeadline = start + Math.min(routeWait.toNanos(), TimeUnit.MILLISECONDS.toNanos(limitMillis));
        long pause = 20;
        int nodesTried = 0;
        while (true) {
            Context.CancellableContext context = Context.current().withCancellation();
            calls.add(context);
            try {
                if (closed) {
                    throw new MailboxClosedException(name);
                }
                // at least 1 ms: an attempt with no time left fails with DEADLINE_EXCEEDED, as the call should
                long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                return context.call(() -> rpc.apply(left));
            } catch (StatusRuntimeException e) {
                if (isUnreachable(e) && !closed && ++nodesTried < channels.size() && deadline - System.nanoTime() > 0) {
                    // that node is gone: the next one can forward just as well
                    if (cutOff != null && !refused(e)) {
                        cutOff[0] = true;
                    }
                    current.incrementAndGet();
                    continue;
                }
                String kind = DataPlane.kind(e);
                boolean wait = DataPlane.NO_ROUTE.equals(kind) || DataPlane.BUSY.equals(kind);
                if (!(wait && System.nanoTime() - routeDeadline < 0 && !closed)) {
                    throw failure(e, bodies);
                }
            } catch (MailboxException | IllegalArgumentException e) {
                throw e;
            } catch (Exception e) {
                throw new MailboxException("call to mailbox '" + name + "' failed: " + e, e);
            } finally {
                calls.remove(context);
                context.close();
            }
            try {
                // waiting for a runner to take the lease: backing off is the point, but not past the route wait
                long toRouteDeadline = TimeUnit.NANOSECONDS.toMillis(routeDeadline - System.nanoTime());
                Thread.sleep(Math.max(1, Math.min(pause, toRouteDeadline)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MailboxUnavailableException("interrupted while waiting for a route to mailbox '" + name
                        + "'", true, e);
            }
            pause = Math.min(500, pause * 2);
        }
    }

    /** The node could not be reached at all (no answer from our service, which always names its errors). */
    private static boolean isUnreachable(StatusRuntimeException e) {
        return e.getStatus().getCode() == Status.Code.UNAVAILABLE && DataPlane.kind(e) == null;
    }

    /** The connection was refused: the call never reached a node, so it cannot have taken effect. */
    private static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    private RuntimeException failure(StatusRuntimeException e, int bodies) {
        if (closed && DataPlane.kind(e) == null && e.getStatus().getCode() == Status.Code.CANCELLED) {
            return new MailboxClosedException(name);
        }
        return DataPlane.toException(e, name, bodies);
    }

    @Override
    public void acknowledge(String receiptHandle) {
        handle(receiptHandle, HandleAction.ACKNOWLEDGE, Duration.ZERO, null);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The node has no batch call, so each message is acknowledged in a call of its own, under the epoch
     * it was received under. Messages from other mailbox objects are refused before any call. Those received
     * through {@link #fenced fenced} views go first, lowest epoch first, so a batch holding a delivery of an
     * overtaken epoch is refused by its first call, with nothing acknowledged; only a fence that rises while
     * the batch is under way can leave it part done.
     */
    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        requireOwn(messages);
        List<Message<T>> order = new ArrayList<>(messages);
        order.sort(java.util.Comparator.comparingLong(m -> {
            long epoch = ((RemoteMessage) m).epoch();
            return epoch == 0 ? Long.MAX_VALUE : epoch;
        }));
        return acknowledgeEach(messages, order, Message::acknowledge);
    }

    /**
     * Acknowledges each of {@code messages}, one call each, in the order of {@code order} (the same messages);
     * returns those whose handle was stale, in the order given.
     */
    private List<Message<T>> acknowledgeEach(List<? extends Message<T>> messages, List<? extends Message<T>> order,
                                             java.util.function.Consumer<Message<T>> acknowledge) {
        Set<Message<T>> stale = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Message<T> m : order) {
            try {
                acknowledge.accept(m);
            } catch (ReceiptHandleExpiredException e) {
                stale.add(m);
            }
        }
        List<Message<T>> out = new ArrayList<>(stale.size());
        for (Message<T> m : messages) {
            if (stale.contains(m)) {
                out.add(m);
            }
        }
        return out;
    }

    /** Refuses, before anything is sent, a batch holding a message this object did not receive. */
    private void requireOwn(List<? extends Message<T>> messages) {
        for (Message<T> m : messages) {
            if (!(m instanceof RemoteMailbox<?>.RemoteMessage rm) || rm.owner() != this) {
                throw new IllegalArgumentException("message " + (m == null ? null : m.id()) + " was not received"
                        + " from this RemoteMailbox of '" + name + "'");
            }
        }
    }

    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        Limits.requireVisibilityTimeout(visibilityTimeout, "visibility timeout");
        handle(receiptHandle, HandleAction.NACK, visibilityTimeout, null);
    }

    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        Limits.requireVisibilityTimeout(timeout, "visibility timeout");
        handle(receiptHandle, HandleAction.EXTEND, timeout, null);
    }

    /**
     * A view that sends {@code epoch} with every receive and handle action: the hosting node refuses them
     * with {@link dev.mailbox.api.FencedException} once a holder of a later lease of the mailbox has used it,
     * or once the mailbox's route names a later lease (see {@link Mailbox#fenced}).
     */
    @Override
    public Mailbox<T> fenced(long epoch) {
        return new FencedView<>(this, fencedCalls, epoch);
    }

    private void handle(String receiptHandle, HandleAction action, Duration timeout, @Nullable Fence fence) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        ensureOpen();
        HandleRequest.Builder rb = HandleRequest.newBuilder().setMailbox(name).setReceiptHandle(receiptHandle)
                .setAction(action).setVisibilityTimeoutMillis(timeout.toMillis());
        if (fence != null) {
            rb.setFence(fence);
        }
        HandleRequest r = rb.build();
        boolean[] cutOff = new boolean[1];
        try {
            call(left -> stub(left).handle(r), callTimeout.toMillis(), 0, cutOff);
        } catch (ReceiptHandleExpiredException e) {
            if (cutOff[0]) {
                // the handle may be stale because the first attempt used it: whether it did cannot be told
                throw new MailboxUnavailableException("mailbox '" + name + "': " + action + " of receipt handle "
                        + receiptHandle + " may have been made: a node was cut off before it answered, and the retry"
                        + " through another node found the handle no longer current", false, e);
            }
            throw new ReceiptHandleExpiredException(receiptHandle, e.getMessage());
        }
    }

    private final class RemoteMessage extends Delivery<T> {
        private final @Nullable Fence fence;

        RemoteMessage(dev.mailbox.coordination.proto.data.Delivery d, @Nullable Fence fence) {
            super(name, d.getMessageId(), d.getReceiptHandle(), d.getDeliveryCount(),
                    Instant.ofEpochMilli(d.getEnqueuedAtMillis()), Map.copyOf(d.getAttributesMap()),
                    Bodies.decode(codec, d.getBody().toByteArray()), emptyToNull(d.getGroupId()),
                    emptyToNull(d.getSequenceNumber()));
            this.fence = fence;
        }

        RemoteMailbox<T> owner() {
            return RemoteMailbox.this;
        }

        long epoch() {
            return fence == null ? 0 : fence.getEpoch();
        }

        @Override
        public void acknowledge() {
            handle(receiptHandle(), HandleAction.ACKNOWLEDGE, Duration.ZERO, fence);
        }

        @Override
        public void nack(Duration visibilityTimeout) {
            Limits.requireVisibilityTimeout(visibilityTimeout, "visibility timeout");
            handle(receiptHandle(), HandleAction.NACK, visibilityTimeout, fence);
        }

        @Override
        public void extendVisibility(Duration timeout) {
            Limits.requireVisibilityTimeout(timeout, "visibility timeout");
            handle(receiptHandle(), HandleAction.EXTEND, timeout, fence);
        }
    }

    private static @Nullable String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }

    @Override
    public String toString() {
        return "RemoteMailbox[" + name + " via " + channels.get(Math.floorMod(current.get(), channels.size())).authority()
                + "]";
    }

    /**
     * Builds a {@link RemoteMailbox}.
     *
     * @param <T> the body type
     */
    public static final class Builder<T> {
        private final String mailboxId;
        private final Codec<T> codec;
        private final List<String> nodes = new ArrayList<>();
        private @Nullable ManagedChannel channel;
        private Duration callTimeout = Duration.ofSeconds(30);
        private Duration routeWait = Duration.ofSeconds(10);
        private ClientSecurity security = ClientSecurity.none();
        private @Nullable String onBehalfOf;
        private final List<io.grpc.ClientInterceptor> interceptors = new ArrayList<>();

        private Builder(String mailboxId, Codec<T> codec) {
            this.mailboxId = CoordinationLimits.requireMailboxId(mailboxId);
            this.codec = Objects.requireNonNull(codec, "codec");
        }

        /**
         * @param hostPort a mailbox node's address; the mailbox opens (and closes) its own channel
         * @return this builder
         */
        public Builder<T> node(String hostPort) {
            return nodes(List.of(hostPort));
        }

        /**
         * @param hostPorts mailbox nodes' addresses, any of which can serve every call (each forwards to
         *                  the owner): calls go to one, and move to the next when it cannot be reached. A
         *                  call cut off mid-flight may have taken effect; a send retried this way keeps
         *                  its request id, so the owner does not store it again (it remembers ids for
         *                  5 minutes, and forgets them when it restarts)
         * @return this builder
         */
        public Builder<T> nodes(List<String> hostPorts) {
            if (hostPorts.isEmpty()) {
                throw new IllegalArgumentException("give at least one node address");
            }
            for (String hostPort : hostPorts) {
                if (Objects.requireNonNull(hostPort, "hostPort").isBlank()) {
                    throw new IllegalArgumentException("node address must not be blank");
                }
            }
            this.nodes.clear();
            this.nodes.addAll(hostPorts);
            return this;
        }

        /**
         * @param channel a channel to a mailbox node, shared and not closed by the mailbox
         * @return this builder
         */
        public Builder<T> channel(ManagedChannel channel) {
            this.channel = Objects.requireNonNull(channel, "channel");
            return this;
        }

        /**
         * @param timeout how long one call may take, on top of a receive's wait; default 30 s. It bounds
         *                everything the call does: its attempts on other nodes and its waits for a route
         *                (see {@link #routeWait}) end with it
         * @return this builder
         */
        public Builder<T> callTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("callTimeout must be positive, was " + timeout);
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * @param wait how long a call waits for the mailbox to get a route (an owner) before it fails
         *             with a retryable {@link MailboxUnavailableException}; default 10 s, zero: fail at once.
         *             The call's own time limit ({@link #callTimeout}) bounds this too
         * @return this builder
         */
        public Builder<T> routeWait(Duration wait) {
            if (wait.isNegative()) {
                throw new IllegalArgumentException("routeWait must not be negative, was " + wait);
            }
            this.routeWait = wait;
            return this;
        }

        /**
         * @param security TLS and/or a token for the nodes (default: plaintext, no token); ignored with
         *                 {@link #channel}, which is used as it is
         * @return this builder
         */
        public Builder<T> security(ClientSecurity security) {
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * Makes every call on behalf of another principal, for a server that takes calls from its own clients
         * and passes them on (a node's SQS endpoint). A node checks such a call as that principal's, and forwards
         * it to the owner as that principal's, but believes the claim only when this mailbox's own principal
         * (its {@link #security token or certificate}) has the {@code node} role over the mailbox's namespace;
         * otherwise the call is checked as this mailbox's own principal. Without access rules on the node the
         * claim is ignored.
         *
         * @param principal the principal the calls are made for: printable ASCII, 1 to 256 characters
         * @return this builder
         * @throws IllegalArgumentException if the principal is empty, too long or not printable ASCII
         */
        public Builder<T> onBehalfOf(String principal) {
            Objects.requireNonNull(principal, "principal");
            if (!principal.matches("[\\x21-\\x7e]{1,256}")) {
                throw new IllegalArgumentException("onBehalfOf must be 1 to 256 printable ASCII characters with no"
                        + " space, was '" + principal.replaceAll("\\p{Cntrl}", "?") + "'");
            }
            this.onBehalfOf = principal;
            return this;
        }

        /**
         * Adds an interceptor to every call this mailbox makes (on a {@link #channel} given too), such as
         * {@code mailbox-opentelemetry}'s, which makes each call a span and carries the caller's trace to the
         * node. The one added last runs first.
         *
         * @param interceptor a gRPC client interceptor
         * @return this builder
         */
        public Builder<T> interceptor(io.grpc.ClientInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * @return the mailbox
         * @throws IllegalStateException if neither a node nor a channel was given
         */
        public RemoteMailbox<T> build() {
            if (nodes.isEmpty() && channel == null) {
                throw new IllegalStateException("give the RemoteMailbox a node address or a channel");
            }
            return new RemoteMailbox<>(this);
        }
    }
}
