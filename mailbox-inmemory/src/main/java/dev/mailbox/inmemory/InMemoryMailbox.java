package dev.mailbox.inmemory;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.TimeSource;
import dev.mailbox.api.spi.AsyncReceiver;
import dev.mailbox.api.spi.FencedView;
import dev.mailbox.api.spi.Bodies;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Mailbox} held in this process's memory, with the whole contract: delays, visibility
 * timeouts, receipt handles, long polling, FIFO order, exact counts, an optional capacity and dead
 * letters. Safe for any number of threads.
 *
 * <p>It runs no thread of its own. Time-based changes (a delay or visibility timeout ending) are
 * applied when the mailbox is next touched, and a blocked receive sleeps exactly until the next such
 * change or a send/nack wakes it, so it never polls. {@link #receiveAsync} waits the same way without a
 * thread: a parked receive is woken by the same changes, and timed on one daemon thread that every
 * in-memory mailbox of the JVM shares, which also runs the parked receives' later passes (each a few
 * microseconds under the mailbox's lock). A handle whose visibility has lapsed is refused
 * at once, even before the message is delivered again.
 *
 * <p><b>Receipt handles</b> can be used on their own: {@link #acknowledge(String)}, {@link #nack(String,
 * Duration)} and {@link #extendVisibility(String, Duration)} act on the delivery a handle names, exactly
 * as the message's own methods do. A handle is only good on the mailbox object that issued it: this
 * object is the queue, so there is no other.
 *
 * <p><b>Fencing.</b> {@link #fenced(long)} gives the holder of the mailbox's lease at an epoch a view
 * through which receive, acknowledge, nack and extend check the mailbox's fence under the same lock as
 * the operation itself, so once a view with a higher epoch has been used no call under a lower one
 * gets through, not even a receive that was already waiting. Messages received through a view carry
 * its epoch, so their own acknowledge, nack and extend are fenced too.
 *
 * <p><b>Deduplication.</b> A send with a {@link SendOptions#withDeduplicationId deduplication id} seen
 * in the last {@link Limits#DEDUPLICATION_WINDOW} (by this mailbox's time source) stores nothing and
 * returns the first send's message id; a refused send (a full mailbox) is not remembered. The window
 * counts from the first send and is not extended by duplicates. Expired ids are dropped, oldest first,
 * by each send that carries an id, so the mailbox never holds more than one window's worth of them.
 *
 * <p><b>With a codec</b> ({@link #builder(String, Codec)}) bodies are encoded on send and decoded on
 * receive, exactly as a remote backend would: receivers get copies, encoding errors and the size limit
 * apply at send, and an undecodable body surfaces through {@link Message#body()}. This is what to use
 * to test code that will run on Redis or SQS.
 *
 * <p><b>Without a codec</b> ({@link #InMemoryMailbox(String)}, {@link #builder(String)}) bodies are
 * kept by reference: nothing is copied (a receiver sees the sender's object, so send immutable
 * values), and the size limit, which needs bytes, is not checked.
 *
 * <pre>{@code
 * InMemoryMailbox<Order> orders = InMemoryMailbox.builder("orders", JsonCodec.of(Order.class))
 *         .redrivePolicy(RedrivePolicy.of(5, deadLetters))
 *         .build();
 * }</pre>
 *
 * @param <T> the body type
 */
public final class InMemoryMailbox<T> implements Mailbox<T>, AsyncReceiver<T> {

    /**
     * Times parked receives and runs their passes, for every in-memory mailbox: a pass only takes what is
     * ready under the mailbox's lock, so one thread keeps up with many mailboxes.
     */
    private static final ScheduledThreadPoolExecutor WAITS = newWaits();

    private static ScheduledThreadPoolExecutor newWaits() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "mailbox-inmemory-waits");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /** What a {@link #fenced} view calls: this mailbox's own methods, with the view's epoch. */
    private final FencedView.Operations<T> fencedCalls = new FencedView.Operations<>() {
        @Override
        public List<Message<T>> receive(ReceiveOptions options, long epoch) {
            return InMemoryMailbox.this.receive(options, epoch);
        }

        @Override
        public boolean receivesAsync() {
            return true;
        }

        @Override
        public CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options, long epoch) {
            return InMemoryMailbox.this.receiveAsync(options, epoch);
        }

        @Override
        public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
            return InMemoryMailbox.this.acknowledgeBatch(messages, epoch, epoch);
        }

        @Override
        public void acknowledge(String receiptHandle, long epoch) {
            InMemoryMailbox.this.acknowledge(receiptHandle, epoch);
        }

        @Override
        public void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
            InMemoryMailbox.this.nack(receiptHandle, visibilityTimeout, epoch);
        }

        @Override
        public void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
            InMemoryMailbox.this.extendVisibility(receiptHandle, timeout, epoch);
        }
    };

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);
    private static final long DEDUPLICATION_WINDOW_NANOS = Limits.DEDUPLICATION_WINDOW.toNanos();

    private final String name;
    private final @Nullable Codec<T> codec;
    private final TimeSource clock;
    private final long capacity;
    private final int maxMessageBytes;
    private final @Nullable RedrivePolicy redrivePolicy;
    private final @Nullable InMemoryMailbox<?> deadLetters;
    private final MailboxCapabilities capabilities;
    /** Distinguishes ids and handles of different mailboxes, even of the same name. */
    private final String tag;
    private final byte[] idPrefix;
    private final Runnable wakeAll = this::wakeAll;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // everything below is guarded by lock
    private final ArrayDeque<Entry> ready = new ArrayDeque<>();
    private final TimedHeap timed = new TimedHeap();
    private long size;
    private long nextSeq;
    private int waiters;
    /** Receives waiting without a thread, oldest first; one woken is removed by whoever wakes it. */
    private final LinkedHashSet<Parked> parked = new LinkedHashSet<>();
    private boolean closed;
    /** The highest epoch used through a {@link #fenced} view; 0 until one is used. Only moves up. */
    private long fence;
    /**
     * In-flight entries by seq, so that a bare receipt handle finds its entry. Holds only what is in
     * flight (an entry leaves it when acknowledged, nacked, purged or when its visibility ends), so it
     * never outgrows the messages held.
     */
    private final HashMap<Long, Entry> inFlight = new HashMap<>();
    /** Deduplication ids seen within the window, and the same records in the order they expire. */
    private final HashMap<String, Dedup> dedupById = new HashMap<>();
    private final ArrayDeque<Dedup> dedupByExpiry = new ArrayDeque<>();

    /**
     * A mailbox without a codec (bodies kept by reference), unbounded, on the system clock.
     *
     * @param name the mailbox's name (see {@link Limits#mailboxNameProblem}; extended names are allowed)
     */
    public InMemoryMailbox(String name) {
        this(new Builder<>(name, null));
    }

    private InMemoryMailbox(Builder<T> b) {
        this.name = b.name;
        this.codec = b.codec;
        this.clock = b.clock;
        this.capacity = b.capacity;
        this.maxMessageBytes = b.maxMessageBytes;
        this.redrivePolicy = b.redrivePolicy;
        this.deadLetters = b.redrivePolicy == null
                ? null : (InMemoryMailbox<?>) b.redrivePolicy.deadLetterMailbox();
        this.capabilities = MailboxCapabilities.builder()
                .exactCount(true).fifo(true).detectsStaleAcknowledge(true).capacity(true)
                .atomicDeadLetter(true).timeGranularity(Duration.ofNanos(1))
                .maxMessageBytes(maxMessageBytes).extendedNames(true)
                // this object is the queue: the fence and the ids are kept with the messages
                .atomicFencing(true).durableDeduplication(true)
                .build();
        this.tag = String.format("%08x", ThreadLocalRandom.current().nextInt());
        this.idPrefix = (tag + "-").getBytes(StandardCharsets.ISO_8859_1);
        clock.addListener(wakeAll);
    }

    /**
     * A builder for a mailbox without a codec: bodies are kept by reference.
     *
     * @param name the mailbox's name (see {@link Limits#mailboxNameProblem}; extended names are allowed)
     * @param <T>  the body type
     * @return the builder
     */
    public static <T> Builder<T> builder(String name) {
        return new Builder<>(name, null);
    }

    /**
     * A builder for a mailbox that encodes bodies with {@code codec}, like a remote backend.
     *
     * @param name  the mailbox's name (see {@link Limits#mailboxNameProblem}; extended names are allowed)
     * @param codec the codec
     * @param <T>   the body type
     * @return the builder
     */
    public static <T> Builder<T> builder(String name, Codec<T> codec) {
        return new Builder<>(name, Objects.requireNonNull(codec, "codec"));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public String send(T body, SendOptions options) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(options, "options");
        Object payload = encode(body, options.attributes());
        long delay = options.delay().toNanos();
        String dedupId = options.deduplicationId();
        long seq;
        lock.lock();
        try {
            ensureOpen();
            if (dedupId != null) {
                long now = clock.nanoTime();
                forgetExpiredDeduplicationIds(now);
                Dedup first = dedupById.get(dedupId);
                if (first != null) {
                    return first.messageId(); // checked before the capacity: a duplicate needs no room
                }
                ensureRoom(1);
                promoteDue(now);
                String id = idOf(append(payload, options.attributes(), delay, now));
                remember(dedupId, id, now);
                return id;
            }
            ensureRoom(1);
            long now = readClockIfNeeded(delay);
            promoteDue(now);
            seq = append(payload, options.attributes(), delay, now);
        } finally {
            lock.unlock();
        }
        return idOf(seq);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(bodies, "bodies");
        Objects.requireNonNull(options, "options");
        Limits.requireBatchSize(bodies.size(), "batch size");
        Object[] payloads = new Object[bodies.size()];
        for (int i = 0; i < payloads.length; i++) {
            T body = Objects.requireNonNull(bodies.get(i), () -> "bodies contains null");
            payloads[i] = encode(body, options.attributes());
        }
        long delay = options.delay().toNanos();
        String dedupId = options.deduplicationId();
        long first;
        lock.lock();
        try {
            ensureOpen();
            if (dedupId != null) {
                return sendBatchDeduplicated(payloads, options.attributes(), delay, dedupId);
            }
            ensureRoom(payloads.length);
            long now = readClockIfNeeded(delay);
            promoteDue(now);
            first = nextSeq;
            for (Object payload : payloads) {
                append(payload, options.attributes(), delay, now);
            }
        } finally {
            lock.unlock();
        }
        List<String> ids = new ArrayList<>(payloads.length);
        for (int i = 0; i < payloads.length; i++) {
            ids.add(idOf(first + i));
        }
        return ids;
    }

    /** Message {@code i} goes under {@code id/i}: stored unless that key was seen, all or nothing. */
    private List<String> sendBatchDeduplicated(Object[] payloads, Map<String, String> attributes, long delay,
                                               String dedupId) {
        long now = clock.nanoTime();
        forgetExpiredDeduplicationIds(now);
        String[] ids = new String[payloads.length];
        int fresh = 0;
        for (int i = 0; i < payloads.length; i++) {
            Dedup seen = dedupById.get(dedupId + "/" + i);
            if (seen != null) {
                ids[i] = seen.messageId();
            } else {
                fresh++;
            }
        }
        ensureRoom(fresh);
        promoteDue(now);
        for (int i = 0; i < payloads.length; i++) {
            if (ids[i] == null) {
                ids[i] = idOf(append(payloads[i], attributes, delay, now));
                remember(dedupId + "/" + i, ids[i], now);
            }
        }
        return List.of(ids);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return receive(options, 0);
    }

    /** @param epoch the fenced view's epoch, 0 for a call on the mailbox itself */
    private List<Message<T>> receive(ReceiveOptions options, long epoch) {
        Objects.requireNonNull(options, "options");
        int max = options.maxMessages();
        long visibility = options.visibilityTimeout().toNanos();
        long wait = options.waitTime().toNanos();
        Entry[] taken = new Entry[max];
        int[] deliveries = new int[max];
        int n = 0;
        lock.lock();
        try {
            ensureOpen();
            long now = clock.nanoTime();
            long deadline = now + wait;
            while (true) {
                // checked on every pass, not just once: a receive that waits must not take a message
                // after a later epoch has raised the fence
                checkFence(epoch);
                promoteDue(now);
                n = takeReady(taken, deliveries, visibility, now);
                if (n > 0 || deadline - now <= 0 || closed) {
                    break;
                }
                long sleep = deadline - now;
                if (!timed.isEmpty()) {
                    sleep = Math.min(sleep, timed.peek().dueNanos - now);
                }
                awaitChange(sleep);
                now = clock.nanoTime();
            }
            if (!ready.isEmpty()) {
                signalOne(); // pass the wake-up on to the next waiter
            }
        } finally {
            lock.unlock();
        }
        if (n == 0) {
            return List.of();
        }
        List<Message<T>> messages = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            messages.add(new InMemoryMessage<>(this, taken[i], deliveries[i], decode(taken[i]), epoch));
        }
        return messages;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The first pass runs on the calling thread; later ones (after a send, a nack, a lapse or a delay
     * ending wakes it) on the in-memory mailboxes' shared thread, which is where the future then completes.
     *
     * @throws MailboxClosedException if the mailbox is closed
     */
    @Override
    public CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options) {
        return receiveAsync(options, 0);
    }

    private CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options, long epoch) {
        Objects.requireNonNull(options, "options");
        Parked p;
        lock.lock();
        try {
            ensureOpen();
            p = new Parked(options, epoch, clock.nanoTime() + options.waitTime().toNanos());
        } finally {
            lock.unlock();
        }
        p.future.whenComplete((got, failure) -> {
            if (p.future.isCancelled()) {
                unpark(p);
            }
        });
        pass(p);
        return p.future;
    }

    /**
     * One pass of a parked receive: takes what is ready, or parks it again until the wait ends, the next
     * deadline comes or a change wakes it. Only whoever took it out of {@link #parked} (or started it) runs it.
     */
    private void pass(Parked p) {
        int max = p.options.maxMessages();
        Entry[] taken = new Entry[max];
        int[] deliveries = new int[max];
        int n = 0;
        boolean done = false;
        RuntimeException failure = null;
        lock.lock();
        try {
            if (p.future.isDone()) {
                if (!ready.isEmpty()) {
                    signalOne(); // it was woken for a message it will not take: someone else takes it
                }
                return;
            }
            if (closed) {
                done = true;
            } else {
                long now = clock.nanoTime();
                checkFence(p.epoch);
                promoteDue(now);
                n = takeReady(taken, deliveries, p.options.visibilityTimeout().toNanos(), now);
                if (n > 0 || p.deadline - now <= 0) {
                    done = true;
                } else {
                    long sleep = p.deadline - now;
                    if (!timed.isEmpty()) {
                        sleep = Math.min(sleep, timed.peek().dueNanos - now);
                    }
                    parked.add(p);
                    p.wakeAt = now + sleep;
                    p.timer = WAITS.schedule(() -> timedOut(p), Math.max(1, sleep), TimeUnit.NANOSECONDS);
                }
            }
            if (!ready.isEmpty()) {
                signalOne();
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            p.future.completeExceptionally(failure);
            return;
        }
        if (!done) {
            return;
        }
        List<Message<T>> messages = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            messages.add(new InMemoryMessage<>(this, taken[i], deliveries[i], decode(taken[i]), p.epoch));
        }
        if (!p.future.complete(messages)) {
            // cancelled while this pass took them: give them back now rather than leave them invisible
            for (Message<T> m : messages) {
                try {
                    m.nack();
                } catch (RuntimeException ignored) {
                    // it lapsed or went already
                }
            }
        }
    }

    private void timedOut(Parked p) {
        lock.lock();
        try {
            if (!parked.remove(p)) {
                return; // woken meanwhile: that wake-up runs its pass
            }
        } finally {
            lock.unlock();
        }
        pass(p);
    }

    private void unpark(Parked p) {
        lock.lock();
        try {
            if (parked.remove(p) && p.timer != null) {
                p.timer.cancel(false);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes up to {@code n} parked receives, oldest first; called with the lock held. */
    private void wakeParked(int n) {
        var it = parked.iterator();
        for (int i = 0; i < n && it.hasNext(); i++) {
            Parked p = it.next();
            it.remove();
            wake(p);
        }
    }

    /** Wakes one waiter of each kind: what became visible may be theirs. Called with the lock held. */
    private void signalOne() {
        if (waiters > 0) {
            changed.signal();
        }
        if (!parked.isEmpty()) {
            wakeParked(1);
        }
    }

    /**
     * A deadline earlier than any before appeared: wakes the waiters that would sleep past it (every blocked
     * thread, and the parked receives timed later than it). Called with the lock held.
     */
    private void signalDue(long due) {
        if (waiters > 0) {
            changed.signalAll();
        }
        if (!parked.isEmpty()) {
            var it = parked.iterator();
            while (it.hasNext()) {
                Parked p = it.next();
                if (p.wakeAt - due > 0) {
                    it.remove();
                    wake(p);
                }
            }
        }
    }

    private void wake(Parked p) {
        if (p.timer != null) {
            p.timer.cancel(false);
        }
        WAITS.execute(() -> pass(p));
    }

    /** Wakes every waiter: what they sleep until (the next deadline, the fence) changed. Lock held. */
    private void signalAll() {
        if (waiters > 0) {
            changed.signalAll();
        }
        if (!parked.isEmpty()) {
            wakeParked(Integer.MAX_VALUE);
        }
    }

    /** A receive waiting without a thread. */
    private final class Parked {
        final ReceiveOptions options;
        final long epoch;
        final long deadline;
        final CompletableFuture<List<Message<T>>> future = new CompletableFuture<>();
        @Nullable ScheduledFuture<?> timer; // guarded by lock
        long wakeAt; // guarded by lock: when (by the mailbox's clock) its timer wakes it

        Parked(ReceiveOptions options, long epoch, long deadline) {
            this.options = options;
            this.epoch = epoch;
            this.deadline = deadline;
        }
    }

    /**
     * Acknowledges the delivery this handle names, as {@link Message#acknowledge()} would.
     *
     * @param receiptHandle a handle this mailbox issued
     * @throws ReceiptHandleExpiredException if the delivery is not current (see {@link Message})
     * @throws IllegalArgumentException      if the string is not a handle this mailbox issued
     */
    @Override
    public void acknowledge(String receiptHandle) {
        acknowledge(receiptHandle, 0);
    }

    /**
     * Nacks the delivery this handle names, as {@link Message#nack(Duration)} would.
     *
     * @param receiptHandle     a handle this mailbox issued
     * @param visibilityTimeout 0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}
     * @throws ReceiptHandleExpiredException if the delivery is not current (see {@link Message})
     * @throws IllegalArgumentException      if the string is not a handle this mailbox issued, or the
     *                                       timeout is out of range
     */
    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        nack(receiptHandle, visibilityTimeout, 0);
    }

    /**
     * Extends the delivery this handle names, as {@link Message#extendVisibility(Duration)} would.
     *
     * @param receiptHandle a handle this mailbox issued
     * @param timeout       0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}, counted from now
     * @throws ReceiptHandleExpiredException if the delivery is not current (see {@link Message})
     * @throws IllegalArgumentException      if the string is not a handle this mailbox issued, or the
     *                                       timeout is out of range
     */
    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        extendVisibility(receiptHandle, timeout, 0);
    }

    /**
     * A view for the holder of this mailbox's lease at {@code epoch}; see {@link Mailbox#fenced}. The
     * fence is a field of this mailbox, read and raised under the same lock as the operation it
     * guards. The view's own {@code fenced(e)} is this mailbox's {@code fenced(e)}; closing the view
     * does nothing.
     *
     * @param epoch the lease holder's fencing epoch, 1 or more
     * @return the view
     * @throws IllegalArgumentException if {@code epoch} is less than 1
     */
    @Override
    public Mailbox<T> fenced(long epoch) {
        return new FencedView<>(this, fencedCalls, epoch);
    }

    @Override
    public long purge() {
        lock.lock();
        try {
            ensureOpen();
            long removed = size;
            for (Entry e : ready) {
                e.state = Entry.DELETED;
            }
            ready.clear();
            timed.clear(e -> e.state = Entry.DELETED);
            inFlight.clear();
            size = 0;
            return removed;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long approximateCount() {
        lock.lock();
        try {
            ensureOpen();
            return size;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            signalAll();
        } finally {
            lock.unlock();
        }
        clock.removeListener(wakeAll);
    }

    @Override
    public String toString() {
        return "InMemoryMailbox[" + name + "]";
    }

    // ---- operations on one delivery: by InMemoryMessage, or by handle ----

    void acknowledge(Entry e, int delivery, long epoch) {
        lock.lock();
        try {
            ensureOpen();
            checkFence(epoch);
            acknowledgeLocked(e, delivery, clock.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    void nack(Entry e, int delivery, Duration visibilityTimeout, long epoch) {
        long timeout = Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout").toNanos();
        lock.lock();
        try {
            ensureOpen();
            checkFence(epoch);
            nackLocked(e, delivery, timeout, clock.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    void extendVisibility(Entry e, int delivery, Duration timeout, long epoch) {
        long nanos = Limits.requireVisibilityTimeout(timeout, "timeout").toNanos();
        lock.lock();
        try {
            ensureOpen();
            checkFence(epoch);
            extendLocked(e, delivery, nanos, clock.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    private void acknowledge(String receiptHandle, long epoch) {
        Handle h = parseHandle(receiptHandle);
        lock.lock();
        try {
            ensureOpen();
            requireIssued(h, receiptHandle);
            checkFence(epoch);
            long now = clock.nanoTime();
            acknowledgeLocked(inFlightEntry(h, receiptHandle), h.delivery(), now);
        } finally {
            lock.unlock();
        }
    }

    private void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
        Handle h = parseHandle(receiptHandle);
        long timeout = Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout").toNanos();
        lock.lock();
        try {
            ensureOpen();
            requireIssued(h, receiptHandle);
            checkFence(epoch);
            long now = clock.nanoTime();
            nackLocked(inFlightEntry(h, receiptHandle), h.delivery(), timeout, now);
        } finally {
            lock.unlock();
        }
    }

    private void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
        Handle h = parseHandle(receiptHandle);
        long nanos = Limits.requireVisibilityTimeout(timeout, "timeout").toNanos();
        lock.lock();
        try {
            ensureOpen();
            requireIssued(h, receiptHandle);
            checkFence(epoch);
            long now = clock.nanoTime();
            extendLocked(inFlightEntry(h, receiptHandle), h.delivery(), nanos, now);
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>One step, as on the other backends: a message this mailbox did not deliver refuses the whole
     * batch with {@link IllegalArgumentException}, and messages received through {@link #fenced fenced}
     * views are acknowledged under their epochs: if any of them is below the fence, the whole batch is
     * refused with {@link FencedException} and nothing is acknowledged.
     */
    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        long lowest = 0;
        long highest = 0;
        for (Message<T> m : messages) {
            long epoch = m instanceof InMemoryMessage<T> im ? im.epoch() : 0;
            if (epoch > 0) {
                lowest = lowest == 0 ? epoch : Math.min(lowest, epoch);
                highest = Math.max(highest, epoch);
            }
        }
        return acknowledgeBatch(messages, lowest, highest);
    }

    /**
     * A batch acknowledge under epochs {@code lowest..highest} (a fenced view's epoch for both; 0 and 0 for
     * messages none of which came through a view): every handle is checked before anything changes (one
     * that this mailbox did not issue refuses the whole batch), then the fence once and every delivery
     * under one lock, so the batch is never half done because the fence rose in the middle.
     */
    private List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long lowest, long highest) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        Handle[] handles = new Handle[messages.size()];
        for (int i = 0; i < handles.length; i++) {
            handles[i] = parseHandle(messages.get(i).receiptHandle());
        }
        List<Message<T>> stale = new ArrayList<>();
        lock.lock();
        try {
            ensureOpen();
            for (int i = 0; i < handles.length; i++) {
                requireIssued(handles[i], messages.get(i).receiptHandle());
            }
            if (lowest != 0 && lowest < fence) {
                throw new FencedException(name, lowest, fence);
            }
            checkFence(highest);
            long now = clock.nanoTime();
            for (int i = 0; i < handles.length; i++) {
                try {
                    String handle = messages.get(i).receiptHandle();
                    acknowledgeLocked(inFlightEntry(handles[i], handle), handles[i].delivery(), now);
                } catch (ReceiptHandleExpiredException e) {
                    stale.add(messages.get(i));
                }
            }
        } finally {
            lock.unlock();
        }
        return stale;
    }

    private void acknowledgeLocked(Entry e, int delivery, long now) {
        requireCurrent(e, delivery, now);
        timed.remove(e);
        inFlight.remove(e.seq);
        e.state = Entry.DELETED;
        size--;
    }

    private void nackLocked(Entry e, int delivery, long timeout, long now) {
        requireCurrent(e, delivery, now);
        timed.remove(e);
        inFlight.remove(e.seq);
        promoteDue(now); // messages that became visible earlier stay ahead of this one
        if (timeout == 0) {
            makeReady(e);
        } else {
            e.state = Entry.WAITING;
            e.dueNanos = now + timeout;
            schedule(e);
        }
    }

    private void extendLocked(Entry e, int delivery, long nanos, long now) {
        requireCurrent(e, delivery, now);
        e.dueNanos = now + nanos;
        if (timed.changed(e)) {
            signalDue(e.dueNanos);
        }
    }

    String idOf(Entry e) {
        String original = e.originalId();
        return original != null ? original : idOf(e.seq);
    }

    String receiptHandleOf(Entry e, int delivery) {
        return tag + ":" + Long.toHexString(e.seq) + ":" + delivery;
    }

    // ---- internals, all called with the lock held unless said otherwise ----

    private long append(Object payload, Map<String, String> attributes, long delayNanos, long now) {
        Entry e = new Entry(nextSeq++, payload, attributes, clock.currentTimeMillis());
        size++;
        if (delayNanos > 0) {
            e.state = Entry.WAITING;
            e.dueNanos = now + delayNanos;
            schedule(e);
        } else {
            makeReady(e);
        }
        return e.seq;
    }

    private void makeReady(Entry e) {
        e.state = Entry.READY;
        ready.addLast(e);
        signalOne();
    }

    /** Adds a timed entry; waiters sleep until the earliest one, so they must re-read it if it moved. */
    private void schedule(Entry e) {
        if (timed.add(e)) {
            signalDue(e.dueNanos);
        }
    }

    /**
     * Reading the clock costs as much as the rest of a send, and a send only needs it to promote
     * timed entries or to schedule a delay; {@link #promoteDue} ignores the value when nothing is timed.
     */
    private long readClockIfNeeded(long delayNanos) {
        return delayNanos > 0 || !timed.isEmpty() ? clock.nanoTime() : 0L;
    }

    /** Makes visible every entry whose delay or visibility timeout has ended, in due order. */
    private void promoteDue(long now) {
        while (!timed.isEmpty() && timed.peek().dueNanos - now <= 0) {
            Entry e = timed.poll();
            if (e.state == Entry.IN_FLIGHT) {
                inFlight.remove(e.seq);
            }
            e.state = Entry.READY;
            ready.addLast(e);
        }
    }

    private int takeReady(Entry[] taken, int[] deliveries, long visibility, long now) {
        int n = 0;
        while (n < taken.length && !ready.isEmpty()) {
            Entry e = ready.pollFirst();
            if (redrivePolicy != null && e.deliveryCount >= redrivePolicy.maxReceiveCount()) {
                try {
                    deadLetter(e);
                } catch (RuntimeException ex) {
                    if (n == 0) {
                        throw ex;
                    }
                    // the messages taken already are in flight: return them; the next receive meets this one
                    // first and says why
                    return n;
                }
                continue;
            }
            e.deliveryCount++;
            e.state = Entry.IN_FLIGHT;
            e.dueNanos = now + visibility;
            schedule(e);
            inFlight.put(e.seq, e);
            taken[n] = e;
            deliveries[n] = e.deliveryCount;
            n++;
        }
        return n;
    }

    /**
     * Moves an entry to the dead-letter mailbox while holding both locks, so no thread ever sees it in
     * both or in neither. Locks are always taken source first; dead-letter chains are fixed when a
     * mailbox is built, so they cannot form a cycle and this cannot deadlock.
     */
    private void deadLetter(Entry e) {
        InMemoryMailbox<?> target = Objects.requireNonNull(deadLetters);
        try {
            target.acceptDeadLetter(e, idOf(e));
        } catch (RuntimeException ex) {
            ready.addFirst(e); // keep it here rather than lose it
            throw ex;
        }
        e.state = Entry.DELETED;
        size--;
    }

    private void acceptDeadLetter(Entry from, String originalId) {
        lock.lock();
        try {
            ensureOpen();
            long now = clock.nanoTime();
            promoteDue(now);
            // a dead letter is never refused for capacity: refusing would lose it
            Entry e = new Entry.DeadLettered(nextSeq++, from, originalId);
            size++;
            makeReady(e);
        } finally {
            lock.unlock();
        }
    }

    private void awaitChange(long nanos) {
        waiters++;
        try {
            changed.awaitNanos(nanos);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new MailboxUnavailableException(
                    "receive on mailbox '" + name + "' was interrupted", false, ie);
        } finally {
            waiters--;
        }
    }

    private void wakeAll() {
        lock.lock();
        try {
            signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void requireCurrent(Entry e, int delivery, long now) {
        String why;
        if (e.state == Entry.DELETED) {
            why = "the message was deleted (acknowledged, purged or dead-lettered)";
        } else if (e.deliveryCount != delivery) {
            why = "the message was delivered again";
        } else if (e.state != Entry.IN_FLIGHT) {
            why = "the message was nacked or its visibility timeout ended";
        } else if (e.dueNanos - now <= 0) {
            why = "its visibility timeout ended";
        } else {
            return;
        }
        String handle = receiptHandleOf(e, delivery);
        throw new ReceiptHandleExpiredException(handle, "receipt handle " + handle + " of message "
                + idOf(e) + " in mailbox '" + name + "' is stale: " + why);
    }

    /**
     * Refuses a call under an overtaken epoch, changing nothing, or raises the fence to the call's
     * epoch. Called with the lock held, before the call changes anything, so the check and the change
     * are one step.
     *
     * @param epoch the view's epoch, or 0 for a call on the mailbox itself, which is never fenced
     */
    private void checkFence(long epoch) {
        if (epoch == 0 || epoch == fence) {
            return;
        }
        if (epoch < fence) {
            throw new FencedException(name, epoch, fence);
        }
        fence = epoch;
        signalAll(); // receives waiting under a lower epoch must give up now, not on the next send
    }

    /** The entry of an in-flight delivery; {@link #requireCurrent} then checks it is this delivery. */
    private Entry inFlightEntry(Handle h, String receiptHandle) {
        Entry e = inFlight.get(h.seq());
        if (e == null) {
            throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle
                    + " in mailbox '" + name + "' is stale: its message is no longer in flight (it was"
                    + " acknowledged, nacked, purged or dead-lettered, or its visibility timeout ended)");
        }
        return e;
    }

    /** A handle that parses but names a message never sent here was not issued by this mailbox. */
    private void requireIssued(Handle h, String receiptHandle) {
        if (h.seq() >= nextSeq) {
            throw new IllegalArgumentException("'" + receiptHandle + "' is not a receipt handle of mailbox '"
                    + name + "': no such message was ever sent to it");
        }
    }

    private void forgetExpiredDeduplicationIds(long now) {
        Dedup oldest;
        while ((oldest = dedupByExpiry.peekFirst()) != null && oldest.expiresAtNanos() - now <= 0) {
            dedupByExpiry.pollFirst();
            dedupById.remove(oldest.key(), oldest);
        }
    }

    /** The window is the same for every id, so the order of sends is the order of expiry. */
    private void remember(String key, String messageId, long now) {
        Dedup d = new Dedup(key, messageId, now + DEDUPLICATION_WINDOW_NANOS);
        dedupById.put(key, d);
        dedupByExpiry.addLast(d);
    }

    private void ensureOpen() {
        if (closed) {
            throw new MailboxClosedException(name);
        }
    }

    private void ensureRoom(int n) {
        if (capacity > 0 && size + n > capacity) {
            throw new MailboxFullException(name, capacity, n);
        }
    }

    // ---- outside the lock ----

    /** Hot on every send, so built in one array rather than by concatenation. */
    private String idOf(long seq) {
        int digits = Math.max(1, (67 - Long.numberOfLeadingZeros(seq)) >>> 2);
        byte[] id = Arrays.copyOf(idPrefix, idPrefix.length + digits);
        for (int i = id.length - 1; i >= idPrefix.length; i--, seq >>>= 4) {
            id[i] = HEX[(int) (seq & 15)];
        }
        return new String(id, StandardCharsets.ISO_8859_1);
    }

    private Object encode(T body, Map<String, String> attributes) {
        return codec == null ? body : Bodies.encode(codec, body, attributes, maxMessageBytes, name);
    }

    /** @return the body, or a {@link Bodies.Undecodable} describing why it could not be decoded */
    private Object decode(Entry e) {
        return codec == null ? e.payload : Bodies.decode(codec, (byte[]) e.payload);
    }

    /**
     * Reads a handle made by {@link #receiptHandleOf}: {@code tag:seq-in-hex:delivery}. Only the exact
     * text this mailbox would issue is accepted, so a handle of another mailbox (another tag) or of
     * another backend is refused rather than taken for one of ours.
     */
    private Handle parseHandle(String receiptHandle) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        int first = receiptHandle.indexOf(':');
        int last = receiptHandle.lastIndexOf(':');
        if (first == tag.length() && receiptHandle.startsWith(tag) && last > first + 1
                && last < receiptHandle.length() - 1) {
            try {
                long seq = Long.parseLong(receiptHandle, first + 1, last, 16);
                int delivery = Integer.parseInt(receiptHandle, last + 1, receiptHandle.length(), 10);
                if (seq >= 0 && delivery >= 1 && receiptHandle.equals(tag + ":" + Long.toHexString(seq) + ":" + delivery)) {
                    return new Handle(seq, delivery);
                }
            } catch (NumberFormatException notOurs) {
                // refused below
            }
        }
        throw new IllegalArgumentException("'" + receiptHandle + "' is not a receipt handle of mailbox '" + name
                + "' (a handle of an in-memory mailbox is only good on the mailbox that issued it)");
    }

    /** @return how many deduplication ids are remembered; for tests of the expiry */
    int rememberedDeduplicationIds() {
        lock.lock();
        try {
            return dedupById.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return how many deliveries can be found by handle; for tests that nothing is left behind */
    int deliveriesInFlight() {
        lock.lock();
        try {
            return inFlight.size();
        } finally {
            lock.unlock();
        }
    }

    private record Handle(long seq, int delivery) {
    }

    private record Dedup(String key, String messageId, long expiresAtNanos) {
    }

    /**
     * Builds an {@link InMemoryMailbox}. Every setter checks its argument at once. Not thread-safe.
     *
     * @param <T> the body type
     */
    public static final class Builder<T> {
        private final String name;
        private final @Nullable Codec<T> codec;
        private TimeSource clock = TimeSource.system();
        private long capacity;
        private int maxMessageBytes = Limits.DEFAULT_MAX_MESSAGE_BYTES;
        private @Nullable RedrivePolicy redrivePolicy;

        private Builder(String name, @Nullable Codec<T> codec) {
            this.name = Limits.requireMailboxName(name, true);
            this.codec = codec;
        }

        /**
         * @param clock where time comes from; the testkit's {@code ManualClock} lets tests move it
         * @return this builder
         */
        public Builder<T> timeSource(TimeSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @param capacity the most messages (queued, delayed and in flight) the mailbox holds; a send
         *                 beyond it throws {@link MailboxFullException}; 0 (the default) for no limit
         * @return this builder
         */
        public Builder<T> capacity(long capacity) {
            this.capacity = Limits.requireCapacity(capacity);
            return this;
        }

        /**
         * @param bytes the largest message (encoded body plus attributes), 1 byte to 1 MiB; default
         *              256 KiB; only checked with a codec
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param policy when to move messages to a dead-letter mailbox, which must be another open
         *               {@code InMemoryMailbox} that has a codec exactly when this one does; dead
         *               letters ignore its capacity
         * @return this builder
         */
        public Builder<T> redrivePolicy(RedrivePolicy policy) {
            Objects.requireNonNull(policy, "policy");
            if (!(policy.deadLetterMailbox() instanceof InMemoryMailbox<?> dlq)) {
                throw new IllegalArgumentException("the dead-letter mailbox of an InMemoryMailbox must be an"
                        + " InMemoryMailbox, was " + policy.deadLetterMailbox().getClass().getName());
            }
            if ((dlq.codec == null) != (codec == null)) {
                throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name + "' must "
                        + (codec == null ? "not have a codec" : "have a codec")
                        + " because mailbox '" + name + "' " + (codec == null ? "has none" : "has one"));
            }
            this.redrivePolicy = policy;
            return this;
        }

        /** @return the mailbox */
        public InMemoryMailbox<T> build() {
            return new InMemoryMailbox<>(this);
        }
    }
}
