package dev.mailbox.testkit;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.TimeSource;
import dev.mailbox.api.spi.FencedView;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A mailbox that drops every message: sends succeed (and return fresh ids), receives return nothing,
 * counts are zero. A receive with a wait time waits for it, as on an empty mailbox, unless the mailbox
 * is closed. Arguments are validated like any mailbox's. Thread-safe.
 *
 * <p>It behaves as a mailbox whose messages are deleted the moment they are sent:
 * <ul>
 *   <li>a send with a {@link SendOptions#withDeduplicationId deduplication id} seen in the last
 *       {@link Limits#DEDUPLICATION_WINDOW} (by the time source given, the system clock by default)
 *       returns the id the first such send returned, as every mailbox must;</li>
 *   <li>{@link #acknowledge(String)}, {@link #nack(String, Duration)} and
 *       {@link #extendVisibility(String, Duration)} validate their arguments and then throw
 *       {@link ReceiptHandleExpiredException}: no delivery of this mailbox is ever current;</li>
 *   <li>{@link #fenced(long)} views keep a real fence, so code that must stop when its lease is taken
 *       over can be tested against it: a receive or handle call under an overtaken epoch throws
 *       {@link FencedException}.</li>
 *   <li>Made with {@link #fifo(String, FifoOptions)}, it is a FIFO mailbox: a send without a group id or
 *       with a delay is refused as every FIFO mailbox refuses it, and deduplication ids are remembered in
 *       the options' scope. It has no codec, so it cannot deduplicate by content.</li>
 * </ul>
 *
 * @param <T> the body type
 */
public final class NullMailbox<T> implements Mailbox<T> {

    /** What a {@link #fenced} view calls: the fence first, then this mailbox's own behaviour. */
    private final FencedView.Operations<T> fencedCalls = new FencedView.Operations<>() {
        @Override
        public List<Message<T>> receive(ReceiveOptions options, long epoch) {
            Objects.requireNonNull(options, "options");
            ensureOpen();
            checkFence(epoch);
            return NullMailbox.this.receive(options);
        }

        @Override
        public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
            ensureOpen();
            checkFence(epoch);
            return NullMailbox.this.acknowledgeBatch(messages);
        }

        @Override
        public void acknowledge(String receiptHandle, long epoch) {
            handleCall(receiptHandle, epoch);
        }

        @Override
        public void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
            Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout");
            handleCall(receiptHandle, epoch);
        }

        @Override
        public void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
            Limits.requireVisibilityTimeout(timeout, "timeout");
            handleCall(receiptHandle, epoch);
        }
    };

    // this object is the whole queue, so the fence and the deduplication ids live with its "messages"
    private static final MailboxCapabilities CAPABILITIES = MailboxCapabilities.builder()
            .exactCount(true).visibilityOrder(true).detectsStaleAcknowledge(true).lateAcknowledge(true)
            .atomicFencing(true).durableDeduplication(true).build();
    private static final MailboxCapabilities FIFO_CAPABILITIES = MailboxCapabilities.builder()
            .exactCount(true).fifo(true).detectsStaleAcknowledge(true).lateAcknowledge(true)
            .atomicFencing(true).durableDeduplication(true).build();

    private final String name;
    private final TimeSource clock;
    private final @Nullable FifoOptions fifo;
    private final CountDownLatch closed = new CountDownLatch(1);
    /** The highest epoch used through a view; only moves up. */
    private final AtomicLong fence = new AtomicLong();
    // guarded by this: deduplication ids within the window, and the same records in expiry order
    private final Map<String, Dedup> dedupById = new HashMap<>();
    private final ArrayDeque<Dedup> dedupByExpiry = new ArrayDeque<>();

    private record Dedup(String key, String messageId, long expiresAtNanos) {
    }

    /**
     * A null mailbox on the system clock.
     *
     * @param name the mailbox's name
     */
    public NullMailbox(String name) {
        this(name, TimeSource.system());
    }

    /**
     * A null mailbox whose deduplication window runs on {@code clock}, for tests that move a
     * {@link ManualClock} past it.
     *
     * @param name  the mailbox's name
     * @param clock where time comes from
     */
    public NullMailbox(String name, TimeSource clock) {
        this(name, clock, null);
    }

    private NullMailbox(String name, TimeSource clock, @Nullable FifoOptions fifo) {
        this.name = Objects.requireNonNull(name, "name");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (fifo != null && fifo.contentBasedDeduplication()) {
            throw new IllegalArgumentException("NullMailbox '" + name + "' has no codec, so it cannot deduplicate by"
                    + " content: use explicit deduplication ids");
        }
        this.fifo = fifo;
    }

    /**
     * A null FIFO mailbox on the system clock: sends are checked and deduplicated as on any FIFO mailbox.
     *
     * @param name    the mailbox's name
     * @param options its deduplication scope; content-based deduplication is refused (no codec)
     * @param <T>     the body type
     * @return the mailbox
     * @throws IllegalArgumentException if the options ask for content-based deduplication
     */
    public static <T> NullMailbox<T> fifo(String name, FifoOptions options) {
        return new NullMailbox<>(name, TimeSource.system(), Objects.requireNonNull(options, "options"));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String send(T body, SendOptions options) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(options, "options");
        if (fifo != null) {
            Limits.requireFifoSend(name, options);
        }
        ensureOpen();
        String dedupId = options.deduplicationId();
        return dedupId == null ? UUID.randomUUID().toString() : deduplicated(scoped(options, dedupId));
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Limits.requireBatchSize(bodies.size(), "batch size");
        Objects.requireNonNull(options, "options");
        if (fifo != null) {
            Limits.requireFifoSend(name, options);
        }
        for (T body : bodies) {
            Objects.requireNonNull(body, "bodies contains null");
        }
        ensureOpen();
        String dedupId = options.deduplicationId();
        List<String> ids = new ArrayList<>(bodies.size());
        for (int i = 0; i < bodies.size(); i++) {
            ids.add(dedupId == null ? UUID.randomUUID().toString() : deduplicated(scoped(options, dedupId + "/" + i)));
        }
        return ids;
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        long wait = options.waitTime().toNanos();
        if (wait > 0) {
            try {
                closed.await(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MailboxUnavailableException("receive on mailbox '" + name + "' was interrupted",
                        false, e);
            }
        }
        return List.of();
    }

    /**
     * @param receiptHandle any handle
     * @throws ReceiptHandleExpiredException always, once the arguments are valid: nothing is in flight
     */
    @Override
    public void acknowledge(String receiptHandle) {
        handleCall(receiptHandle, 0);
    }

    /**
     * @param receiptHandle     any handle
     * @param visibilityTimeout 0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}
     * @throws ReceiptHandleExpiredException always, once the arguments are valid: nothing is in flight
     */
    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout");
        handleCall(receiptHandle, 0);
    }

    /**
     * @param receiptHandle any handle
     * @param timeout       0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}
     * @throws ReceiptHandleExpiredException always, once the arguments are valid: nothing is in flight
     */
    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        Limits.requireVisibilityTimeout(timeout, "timeout");
        handleCall(receiptHandle, 0);
    }

    /**
     * A view that checks and raises this mailbox's fence on receive and on the handle calls; see
     * {@link Mailbox#fenced(long)}.
     *
     * @param epoch the caller's fencing epoch, 1 or more
     * @return the view; closing it closes nothing
     * @throws IllegalArgumentException if {@code epoch} is less than 1
     */
    @Override
    public Mailbox<T> fenced(long epoch) {
        return new FencedView<>(this, fencedCalls, epoch);
    }

    @Override
    public long purge() {
        ensureOpen();
        return 0;
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        return 0;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return fifo != null ? FIFO_CAPABILITIES : CAPABILITIES;
    }

    /** A FIFO mailbox whose scope is the group remembers an id per group; a space never occurs in either id. */
    private String scoped(SendOptions options, String key) {
        return fifo != null && fifo.deduplicationScope() == FifoOptions.DeduplicationScope.GROUP
                ? options.groupId() + " " + key : key;
    }

    @Override
    public void close() {
        closed.countDown();
    }

    private void ensureOpen() {
        if (closed.getCount() == 0) {
            throw new MailboxClosedException(name);
        }
    }

    private void handleCall(String receiptHandle, long epoch) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        ensureOpen();
        checkFence(epoch);
        throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle
                + " is stale: NullMailbox '" + name + "' keeps no messages, so no delivery is in flight");
    }

    /** Refuses an overtaken epoch, or raises the fence to it, in one atomic step. */
    private void checkFence(long epoch) {
        if (epoch == 0) {
            return; // a call on the mailbox itself is never fenced
        }
        long seen = fence.getAndAccumulate(epoch, Math::max);
        if (epoch < seen) {
            throw new FencedException(name, epoch, seen);
        }
    }

    private synchronized String deduplicated(String key) {
        long now = clock.nanoTime();
        Dedup oldest;
        while ((oldest = dedupByExpiry.peekFirst()) != null && oldest.expiresAtNanos() - now <= 0) {
            dedupByExpiry.pollFirst();
            dedupById.remove(oldest.key(), oldest);
        }
        Dedup seen = dedupById.get(key);
        if (seen != null) {
            return seen.messageId();
        }
        Dedup d = new Dedup(key, UUID.randomUUID().toString(), now + Limits.DEDUPLICATION_WINDOW.toNanos());
        dedupById.put(key, d);
        dedupByExpiry.addLast(d);
        return d.messageId();
    }

    @Override
    public String toString() {
        return "NullMailbox[" + name + "]";
    }

}
