package dev.mailbox.inmemory;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
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
import dev.mailbox.api.spi.StoredAttributes;
import dev.mailbox.api.spi.Inspection;
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
 * timeouts, receipt handles, long polling, order, exact counts, an optional capacity, dead letters, FIFO
 * mailboxes with message groups, fairness between tenants and late acknowledgements. Safe for any number
 * of threads.
 *
 * <p>It runs no thread of its own. Time-based changes (a delay or visibility timeout ending) are
 * applied when the mailbox is next touched, and a blocked receive sleeps exactly until the next such
 * change or a send/nack wakes it, so it never polls. {@link #receiveAsync} waits the same way without a
 * thread: a parked receive is woken by the same changes, and timed on one daemon thread that every
 * in-memory mailbox of the JVM shares, which also runs the parked receives' later passes (each a few
 * microseconds under the mailbox's lock). A handle whose visibility has lapsed is refused
 * at once by nack and extend, even before the message is delivered again; it still acknowledges the
 * message until the message is delivered again ({@link MailboxCapabilities#lateAcknowledge()}), and a
 * handle superseded by a later delivery is refused at once.
 *
 * <p><b>Standard or FIFO.</b> A mailbox built without {@link Builder#fifo(FifoOptions)} is standard: it
 * delivers in the order messages became visible, except that it is fair between tenants (group ids,
 * {@link MailboxCapabilities#fairness()}): a noisy tenant's visible messages are set aside while it stays
 * noisy, and taken when no other tenant's message is visible. Messages without a group id cost nothing
 * extra, and so do tenants while none is noisy. A mailbox built with it is FIFO, with every rule of
 * {@link Mailbox}'s "FIFO mailboxes": each group keeps its undelivered messages in send order, and a queue of
 * the groups that can be delivered from (nothing of theirs in flight, head visible) lets a receive find the
 * next group in O(1); groups are served in turn, so none waits behind a long one.
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
 * <p><b>Inspection.</b> As an {@link Inspection} it counts queued, in-flight and delayed messages exactly and
 * shows messages without receiving them (for the web console), under its lock and without changing anything.
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
 * InMemoryMailbox<Event> events = InMemoryMailbox.builder("events", JsonCodec.of(Event.class))
 *         .fifo(FifoOptions.defaults().withContentBasedDeduplication(true))
 *         .build();
 * }</pre>
 *
 * @param <T> the body type
 */
public final class InMemoryMailbox<T> implements Mailbox<T>, AsyncReceiver<T>, Inspection {

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
    /** The FIFO settings, or null for a standard mailbox. */
    private final @Nullable FifoOptions fifo;
    private final MailboxCapabilities capabilities;
    /** Distinguishes ids and handles of different mailboxes, even of the same name. */
    private final String tag;
    private final byte[] idPrefix;
    private final Runnable wakeAll = this::wakeAll;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // everything below is guarded by lock
    /**
     * Standard mailboxes: visible entries in the order they became visible. An entry deleted while visible
     * (a late acknowledgement) is left here as DELETED and skipped when met.
     */
    private final ArrayDeque<Entry> ready = new ArrayDeque<>();
    private final TimedHeap timed = new TimedHeap();
    /** Groups (FIFO) or tenants (standard) that hold messages, by id. */
    private final HashMap<String, Group> groups = new HashMap<>();
    /** FIFO: groups that can be delivered from, in the order they became so. Stale ones are skipped. */
    private final ArrayDeque<Group> available = new ArrayDeque<>();
    /** Standard: tenants with messages set aside while they were noisy. */
    private final ArrayList<Group> parkedTenants = new ArrayList<>();
    /** Deliveries in flight, for the noisy-tenant rule. */
    private long inFlightCount;
    private long size;
    private long nextSeq;
    private int waiters;
    /** Receives waiting without a thread, oldest first; one woken is removed by whoever wakes it. */
    private final LinkedHashSet<Parked> parked = new LinkedHashSet<>();
    private boolean closed;
    /** The highest epoch used through a {@link #fenced} view; 0 until one is used. Only moves up. */
    private long fence;
    /**
     * Entries whose most recent delivery's handle may still act, by seq, so that a bare receipt handle
     * finds its entry: in flight, or lapsed and not yet delivered again (a late acknowledgement). An entry
     * leaves it when acknowledged, nacked, purged or dead-lettered, and a new delivery replaces it, so it
     * never outgrows the messages held.
     */
    private final HashMap<Long, Entry> byHandle = new HashMap<>();
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
        this.fifo = b.fifo;
        this.capabilities = MailboxCapabilities.builder()
                .exactCount(true).fifo(fifo != null).visibilityOrder(fifo == null).fairness(fifo == null)
                .lateAcknowledge(true).systemAttributes(true).detectsStaleAcknowledge(true).capacity(true)
                .contentBasedDeduplication(fifo != null && fifo.contentBasedDeduplication())
                .atomicDeadLetter(true).timeGranularity(Duration.ofNanos(1))
                .maxMessageBytes(maxMessageBytes).extendedNames(true)
                // this object is the queue: the fence and the ids are kept with the messages
                .atomicFencing(true).durableDeduplication(true).sharedDeliveryState(true).holdsRuns(fifo != null)
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
        if (fifo != null) {
            Limits.requireFifoSend(name, options);
        }
        Object payload = encode(body, options);
        Map<String, String> stored = StoredAttributes.encode(options);
        long delay = options.delay().toNanos();
        String dedupKey = deduplicationKey(options, options.deduplicationId(), payload);
        String groupId = options.groupId();
        long seq;
        lock.lock();
        try {
            ensureOpen();
            if (dedupKey != null) {
                long now = clock.nanoTime();
                forgetExpiredDeduplicationIds(now);
                Dedup first = dedupById.get(dedupKey);
                if (first != null) {
                    return first.messageId(); // checked before the capacity: a duplicate needs no room
                }
                ensureRoom(1);
                promoteDue(now);
                String id = idOf(append(payload, stored, groupId, delay, now));
                remember(dedupKey, id, now);
                return id;
            }
            ensureRoom(1);
            long now = readClockIfNeeded(delay);
            promoteDue(now);
            seq = append(payload, stored, groupId, delay, now);
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
        if (fifo != null) {
            Limits.requireFifoSend(name, options);
        }
        Object[] payloads = new Object[bodies.size()];
        for (int i = 0; i < payloads.length; i++) {
            T body = Objects.requireNonNull(bodies.get(i), () -> "bodies contains null");
            payloads[i] = encode(body, options);
        }
        Map<String, String> stored = StoredAttributes.encode(options);
        long delay = options.delay().toNanos();
        String dedupId = options.deduplicationId();
        String[] keys = null;
        if (dedupId != null || (fifo != null && fifo.contentBasedDeduplication())) {
            keys = new String[payloads.length];
            for (int i = 0; i < payloads.length; i++) {
                keys[i] = deduplicationKey(options, dedupId == null ? null : dedupId + "/" + i, payloads[i]);
            }
        }
        String groupId = options.groupId();
        long first;
        lock.lock();
        try {
            ensureOpen();
            if (keys != null) {
                return sendBatchDeduplicated(payloads, stored, groupId, delay, keys);
            }
            ensureRoom(payloads.length);
            long now = readClockIfNeeded(delay);
            promoteDue(now);
            first = nextSeq;
            for (Object payload : payloads) {
                append(payload, stored, groupId, delay, now);
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

    /**
     * Message {@code i} goes under {@code keys[i]}: stored unless that key was seen (earlier, or earlier in
     * this batch, which content-based deduplication can give two equal bodies), all or nothing.
     */
    private List<String> sendBatchDeduplicated(Object[] payloads, Map<String, String> attributes,
                                               @Nullable String groupId, long delay, String[] keys) {
        long now = clock.nanoTime();
        forgetExpiredDeduplicationIds(now);
        String[] ids = new String[payloads.length];
        java.util.HashSet<String> fresh = new java.util.HashSet<>();
        for (int i = 0; i < payloads.length; i++) {
            Dedup seen = dedupById.get(keys[i]);
            if (seen != null) {
                ids[i] = seen.messageId();
            } else {
                fresh.add(keys[i]);
            }
        }
        ensureRoom(fresh.size());
        promoteDue(now);
        for (int i = 0; i < payloads.length; i++) {
            if (ids[i] == null) {
                Dedup earlier = dedupById.get(keys[i]);
                if (earlier != null) {
                    ids[i] = earlier.messageId(); // an equal body earlier in this batch
                    continue;
                }
                ids[i] = idOf(append(payloads[i], attributes, groupId, delay, now));
                remember(keys[i], ids[i], now);
            }
        }
        return List.of(ids);
    }

    /**
     * The key a send is deduplicated under, or null when it is not: the send's id or, on a FIFO mailbox
     * with content-based deduplication, the hash of its encoded body; within the group on a FIFO mailbox
     * whose scope is the group. A space joins the two, since neither id may hold one.
     */
    private @Nullable String deduplicationKey(SendOptions options, @Nullable String id, Object payload) {
        if (fifo == null) {
            return id;
        }
        String key = id != null ? id
                : fifo.contentBasedDeduplication() ? FifoOptions.contentDeduplicationId((byte[]) payload) : null;
        if (key != null && fifo.deduplicationScope() == FifoOptions.DeduplicationScope.GROUP) {
            key = options.groupId() + " " + key;
        }
        return key;
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
            if (hasVisible()) {
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
                if (hasVisible()) {
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
            if (hasVisible()) {
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
            for (Group g : groups.values()) {
                for (Entry e : g.queue) {
                    e.state = Entry.DELETED;
                }
            }
            for (Group g : parkedTenants) {
                g.queue.clear(); // set-aside entries were deleted with ready's; a tenant may have left the map
            }
            timed.clear(e -> e.state = Entry.DELETED);
            byHandle.clear();
            groups.clear();
            available.clear();
            parkedTenants.clear();
            inFlightCount = 0;
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

    // ---- inspection: reads only, under the lock ----

    /** How many entries of each kind {@link #inspect} looks at for the oldest message's age. */
    private static final int OLDEST_SCAN = 100_000;

    /**
     * {@inheritDoc}
     *
     * <p>The counts are exact. On a FIFO mailbox a message waiting behind an earlier one of its group that is in
     * flight counts as queued (a receive takes it once its group is free), and one nacked with a timeout as delayed.
     * The oldest message's age is exact up to {@value #OLDEST_SCAN} queued and as many delayed or in-flight
     * messages; beyond, it is that of the oldest among those looked at.
     */
    @Override
    public Inspection.Stats inspect() {
        lock.lock();
        try {
            ensureOpen();
            long now = clock.nanoTime();
            // what is due but not yet promoted is queued for the next receive; nothing is promoted here
            long[] due = new long[2]; // in flight, waiting
            timed.forEachDue(now, e -> due[e.state == Entry.IN_FLIGHT ? 0 : 1]++);
            // timed holds every in-flight entry and every waiting one (delayed, or nacked with a timeout); the rest
            // of what is held is queued, wherever it is kept (ready, a group's queue, a noisy tenant's set-aside)
            long inFlightNow = inFlightCount - due[0];
            long delayed = timed.size() - inFlightCount - due[1];
            long queued = size - inFlightNow - delayed;
            long[] oldest = {Long.MAX_VALUE};
            forEachQueued(OLDEST_SCAN, e -> oldest[0] = Math.min(oldest[0], e.enqueuedAtMillis));
            for (int i = 0; i < Math.min(timed.size(), OLDEST_SCAN); i++) {
                oldest[0] = Math.min(oldest[0], timed.at(i).enqueuedAtMillis);
            }
            Duration age = oldest[0] == Long.MAX_VALUE ? null
                    : Duration.ofMillis(Math.max(0, clock.currentTimeMillis() - oldest[0]));
            return new Inspection.Stats(queued, inFlightNow, delayed, age, true,
                    deadLetters == null ? null : deadLetters.name(),
                    redrivePolicy == null ? 0 : redrivePolicy.maxReceiveCount());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<Inspection.Peeked> peek(int max) {
        Inspection.requirePeekSize(max);
        lock.lock();
        try {
            ensureOpen();
            long now = clock.nanoTime();
            List<Inspection.Peeked> out = new ArrayList<>(max);
            forEachQueued(max, e -> out.add(peeked(e, Inspection.State.QUEUED)));
            // then the timed ones, soonest first: the k earliest of a heap, walked from its root, in O(k log k)
            java.util.PriorityQueue<Integer> next = new java.util.PriorityQueue<>(
                    (a, b) -> Long.compare(timed.at(a).dueNanos - now, timed.at(b).dueNanos - now));
            if (!timed.isEmpty()) {
                next.add(0);
            }
            while (out.size() < max && !next.isEmpty()) {
                int i = next.poll();
                for (int child = 2 * i + 1; child <= 2 * i + 2 && child < timed.size(); child++) {
                    next.add(child);
                }
                Entry e = timed.at(i);
                Inspection.State state = e.dueNanos - now <= 0 ? Inspection.State.QUEUED
                        : e.state == Entry.IN_FLIGHT ? Inspection.State.IN_FLIGHT : Inspection.State.DELAYED;
                out.add(peeked(e, state));
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Visits up to {@code max} queued entries (visible and not timed), in about the order receives would take
     * them: on a standard mailbox ready's, then noisy tenants' set-aside ones; on a FIFO mailbox the groups that
     * can deliver now, in turn, then the groups waiting for a message in flight. Entries deleted while visible (a
     * late acknowledgement) and a FIFO group's entries nacked with a timeout (timed) are skipped.
     */
    private void forEachQueued(int max, java.util.function.Consumer<Entry> each) {
        int[] n = {0};
        java.util.function.Predicate<Entry> visit = e -> {
            if (e.state != Entry.READY) {
                return true;
            }
            each.accept(e);
            return ++n[0] < max;
        };
        if (fifo == null) {
            for (Entry e : ready) {
                if (!visit.test(e)) {
                    return;
                }
            }
            for (Group g : parkedTenants) {
                for (Entry e : g.queue) {
                    if (!visit.test(e)) {
                        return;
                    }
                }
            }
            return;
        }
        java.util.Set<Group> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Iterable<Group> in : List.<Iterable<Group>>of(available, groups.values())) {
            for (Group g : in) {
                if (!seen.add(g)) {
                    continue;
                }
                for (Entry e : g.queue) {
                    if (!visit.test(e)) {
                        return;
                    }
                }
            }
        }
    }

    private Inspection.Peeked peeked(Entry e, Inspection.State state) {
        byte[] body = e.payload instanceof byte[] b ? b.clone()
                : String.valueOf(e.payload).getBytes(StandardCharsets.UTF_8);
        return new Inspection.Peeked(idOf(e), body, e.attributes, java.time.Instant.ofEpochMilli(e.enqueuedAtMillis),
                e.deliveryCount, state);
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
            acknowledgeLocked(handleEntry(h, receiptHandle), h.delivery(), now);
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
            nackLocked(handleEntry(h, receiptHandle), h.delivery(), timeout, now);
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
            extendLocked(handleEntry(h, receiptHandle), h.delivery(), nanos, now);
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
                    acknowledgeLocked(handleEntry(handles[i], handle), handles[i].delivery(), now);
                } catch (ReceiptHandleExpiredException e) {
                    stale.add(messages.get(i));
                }
            }
        } finally {
            lock.unlock();
        }
        return stale;
    }

    /**
     * Deletes the entry if {@code delivery} is its most recent delivery and was not nacked: in flight, or
     * lapsed and not delivered again (a late acknowledgement, as SQS allows).
     */
    private void acknowledgeLocked(Entry e, int delivery, long now) {
        requireAcknowledgeable(e, delivery);
        if (e.state == Entry.IN_FLIGHT) { // its timeout may have passed unnoticed: late, but still in flight
            timed.remove(e);
            leaveFlight(e);
        } else if (fifo != null) {
            Group g = Objects.requireNonNull(e.group);
            g.queue.remove(e); // a lapsed entry is back near its group's front, so this scan is short
        } // a lapsed entry of a standard mailbox stays in ready (or set aside) as DELETED, skipped when met
        byHandle.remove(e.seq);
        delete(e);
        if (fifo != null) {
            markAvailableIfReady(Objects.requireNonNull(e.group));
        }
    }

    private void nackLocked(Entry e, int delivery, long timeout, long now) {
        requireCurrent(e, delivery, now);
        timed.remove(e);
        byHandle.remove(e.seq);
        leaveFlight(e);
        e.released = true;
        promoteDue(now); // messages that became visible earlier stay ahead of this one
        if (fifo != null) {
            Group g = Objects.requireNonNull(e.group);
            returnToGroup(g, e);
            if (timeout == 0) {
                e.state = Entry.READY;
            } else {
                e.state = Entry.WAITING; // the group waits for it once it reaches the head
                e.dueNanos = now + timeout;
                schedule(e);
            }
            markAvailableIfReady(g); // a nacked earlier message of the run may be its head now
        } else if (timeout == 0) {
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

    /** @return the entry's sequence number on a FIFO mailbox: its seq in 20 digits, so text order is numeric order */
    @Nullable String sequenceNumberOf(Entry e) {
        if (fifo == null) {
            return null;
        }
        String digits = Long.toString(e.seq);
        return "0".repeat(20 - digits.length()) + digits;
    }

    String receiptHandleOf(Entry e, int delivery) {
        return tag + ":" + Long.toHexString(e.seq) + ":" + delivery;
    }

    // ---- internals, all called with the lock held unless said otherwise ----

    private long append(Object payload, Map<String, String> attributes, @Nullable String groupId, long delayNanos,
                        long now) {
        Group g = groupId == null ? null : groups.computeIfAbsent(groupId, Group::new);
        Entry e = new Entry(nextSeq++, payload, attributes, clock.currentTimeMillis(), g);
        add(e, delayNanos, now);
        return e.seq;
    }

    /** Stores a new entry: counted, in its group, and visible now or after {@code delayNanos}. */
    private void add(Entry e, long delayNanos, long now) {
        size++;
        Group g = e.group;
        if (g != null) {
            g.held++;
        }
        if (fifo != null) {
            Objects.requireNonNull(g).queue.addLast(e); // FIFO sends have no delay
            e.state = Entry.READY;
            markAvailableIfReady(g);
        } else if (delayNanos > 0) {
            e.state = Entry.WAITING;
            e.dueNanos = now + delayNanos;
            schedule(e);
        } else {
            makeReady(e);
        }
    }

    /** Standard mailboxes: the entry joins the visible ones. */
    private void makeReady(Entry e) {
        e.state = Entry.READY;
        ready.addLast(e);
        signalOne();
    }

    /**
     * FIFO: queues the group for delivery if it can be delivered from (nothing in flight, a visible head) and
     * is not queued already, waking a receiver.
     */
    private void markAvailableIfReady(Group g) {
        if (g.available || g.inFlight > 0) {
            return;
        }
        Entry head = g.queue.peekFirst();
        if (head != null && head.state == Entry.READY) {
            g.available = true;
            available.addLast(g);
            signalOne();
        }
    }

    /**
     * FIFO: puts a nacked or lapsed entry back among its group's queued ones, in send order. Only a run of
     * one receive is ever in flight in a group, so at most that many entries are ahead of it.
     */
    private static void returnToGroup(Group g, Entry e) {
        ArrayDeque<Entry> q = g.queue;
        Entry head = q.peekFirst();
        if (head == null || head.seq > e.seq) {
            q.addFirst(e);
            return;
        }
        ArrayList<Entry> ahead = new ArrayList<>(4);
        while (!q.isEmpty() && q.peekFirst().seq < e.seq) {
            ahead.add(q.pollFirst());
        }
        q.addFirst(e);
        for (int i = ahead.size() - 1; i >= 0; i--) {
            q.addFirst(ahead.get(i));
        }
    }

    /** The entry leaves flight (acknowledged, nacked, lapsed or purged). */
    private void leaveFlight(Entry e) {
        inFlightCount--;
        if (e.group != null) {
            e.group.inFlight--;
        }
    }

    /** The entry is gone for good: acknowledged or dead-lettered. */
    private void delete(Entry e) {
        e.state = Entry.DELETED;
        size--;
        Group g = e.group;
        if (g != null && --g.held == 0) {
            groups.remove(g.id, g); // stale references in available/parkedTenants are dropped when met
        }
    }

    /** @return whether a receive might find something visible now (a hint for passing on a wake-up) */
    private boolean hasVisible() {
        return fifo != null ? !available.isEmpty() : !ready.isEmpty() || !parkedTenants.isEmpty();
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
            boolean lapsed = e.state == Entry.IN_FLIGHT;
            if (lapsed) {
                leaveFlight(e); // it stays in byHandle: its handle still acknowledges until it is delivered again
            }
            e.state = Entry.READY;
            if (fifo != null) {
                Group g = Objects.requireNonNull(e.group);
                if (lapsed) {
                    returnToGroup(g, e); // a nacked entry waits in its group already
                }
                markAvailableIfReady(g);
            } else {
                ready.addLast(e);
            }
        }
    }

    private int takeReady(Entry[] taken, int[] deliveries, long visibility, long now) {
        return fifo != null ? takeFromGroups(taken, deliveries, visibility, now)
                : takeFair(taken, deliveries, visibility, now);
    }

    /**
     * Standard: the visible entries in order, except that a noisy tenant's are set aside (each at most once
     * while it stays noisy) for the others', and taken when nothing else is visible.
     */
    private int takeFair(Entry[] taken, int[] deliveries, long visibility, long now) {
        int n = 0;
        while (n < taken.length) {
            Entry e = parkedTenants.isEmpty() ? nextVisible() : null;
            if (e == null && !parkedTenants.isEmpty()) {
                e = nextVisibleWithTenantsAside(); // also when nextVisible has just set aside all it met
            }
            if (e == null) {
                break;
            }
            if (redrivePolicy != null && e.deliveryCount >= redrivePolicy.maxReceiveCount()) {
                try {
                    deadLetter(e);
                } catch (RuntimeException ex) {
                    ready.addFirst(e); // keep it here rather than lose it
                    if (n == 0) {
                        throw ex;
                    }
                    // the messages taken already are in flight: return them; the next receive meets this one
                    // first and says why
                    return n;
                }
                continue;
            }
            deliver(e, visibility, now);
            taken[n] = e;
            deliveries[n] = e.deliveryCount;
            n++;
        }
        return n;
    }

    /** The next visible entry of a quiet tenant from ready, setting noisy tenants' aside; null if none. */
    private @Nullable Entry nextVisible() {
        Entry e;
        while ((e = ready.pollFirst()) != null) {
            if (e.state != Entry.READY) {
                continue; // deleted while visible (a late acknowledgement)
            }
            Group g = e.group;
            if (g != null && Limits.isNoisyTenant(g.inFlight, inFlightCount)) {
                g.queue.addLast(e);
                if (!g.parked) {
                    g.parked = true;
                    parkedTenants.add(g);
                }
                continue;
            }
            return e;
        }
        return null;
    }

    /**
     * Some tenants have entries set aside: the earliest (by seq) of ready's next quiet entry and the set-aside
     * heads of tenants that are quiet again; when there is none, the head of the noisy tenant with the fewest
     * in flight, so fairness never leaves a receive emptier. There are few such tenants (each noisy one holds
     * more than a tenth of what is in flight).
     */
    private @Nullable Entry nextVisibleWithTenantsAside() {
        Entry fromReady = nextVisible(); // sets aside what it skips, so it is taken before it is compared
        Group bestQuiet = null;
        Group leastNoisy = null;
        for (int i = parkedTenants.size() - 1; i >= 0; i--) {
            Group g = parkedTenants.get(i);
            Entry head;
            while ((head = g.queue.peekFirst()) != null && head.state != Entry.READY) {
                g.queue.pollFirst();
            }
            if (head == null) {
                g.parked = false;
                parkedTenants.set(i, parkedTenants.get(parkedTenants.size() - 1));
                parkedTenants.remove(parkedTenants.size() - 1);
                continue;
            }
            if (!Limits.isNoisyTenant(g.inFlight, inFlightCount)) {
                if (bestQuiet == null || head.seq < bestQuiet.queue.peekFirst().seq) {
                    bestQuiet = g;
                }
            } else if (leastNoisy == null || g.inFlight < leastNoisy.inFlight
                    || (g.inFlight == leastNoisy.inFlight && head.seq < leastNoisy.queue.peekFirst().seq)) {
                leastNoisy = g;
            }
        }
        if (fromReady != null && (bestQuiet == null || fromReady.seq < bestQuiet.queue.peekFirst().seq)) {
            return fromReady;
        }
        if (fromReady != null) {
            ready.addFirst(fromReady); // not taken after all: it keeps its place
        }
        Group from = bestQuiet != null ? bestQuiet : leastNoisy;
        return from == null ? null : from.queue.pollFirst();
    }

    /**
     * FIFO: from each deliverable group in turn, its queued entries from the head while they are visible, so
     * one receive may take a run of one group; a group is deliverable only with nothing in flight, so no later
     * message of a group is ever delivered while an earlier one is out.
     */
    private int takeFromGroups(Entry[] taken, int[] deliveries, long visibility, long now) {
        int n = 0;
        Group g;
        while (n < taken.length && (g = available.pollFirst()) != null) {
            g.available = false; // queued only with nothing in flight (markAvailableIfReady), so deliverable
            while (n < taken.length) {
                Entry head = g.queue.peekFirst();
                if (head == null || head.state != Entry.READY) {
                    break;
                }
                if (redrivePolicy != null && head.deliveryCount >= redrivePolicy.maxReceiveCount()) {
                    try {
                        deadLetter(head); // the head moves on, which unblocks the group
                    } catch (RuntimeException ex) {
                        markAvailableIfReady(g);
                        if (n == 0) {
                            throw ex;
                        }
                        return n; // as on a standard mailbox: the next receive meets it first and says why
                    }
                    g.queue.pollFirst();
                    continue;
                }
                g.queue.pollFirst();
                deliver(head, visibility, now);
                taken[n] = head;
                deliveries[n] = head.deliveryCount;
                n++;
            }
            // g leaves the queue with a delivery in flight or without a visible head: the inner loop only ends
            // at one of the two, and whatever ends them queues g again (markAvailableIfReady)
        }
        return n;
    }

    private void deliver(Entry e, long visibility, long now) {
        e.deliveryCount++;
        e.state = Entry.IN_FLIGHT;
        e.released = false;
        e.dueNanos = now + visibility;
        schedule(e);
        byHandle.put(e.seq, e);
        inFlightCount++;
        if (e.group != null) {
            e.group.inFlight++;
        }
    }

    /**
     * Moves an entry to the dead-letter mailbox while holding both locks, so no thread ever sees it in
     * both or in neither. Locks are always taken source first; dead-letter chains are fixed when a
     * mailbox is built, so they cannot form a cycle and this cannot deadlock.
     */
    private void deadLetter(Entry e) {
        InMemoryMailbox<?> target = Objects.requireNonNull(deadLetters);
        target.acceptDeadLetter(e, idOf(e)); // if it throws, nothing has changed here
        byHandle.remove(e.seq);
        delete(e);
    }

    private void acceptDeadLetter(Entry from, String originalId) {
        lock.lock();
        try {
            ensureOpen();
            long now = clock.nanoTime();
            promoteDue(now);
            // a dead letter is never refused for capacity: refusing would lose it
            Group source = from.group;
            Group g = source == null ? null : groups.computeIfAbsent(source.id, Group::new);
            add(new Entry.DeadLettered(nextSeq++, from, originalId, g), 0, now);
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

    /** Nack and extend: the delivery must be in flight and its visibility not ended. */
    private void requireCurrent(Entry e, int delivery, long now) {
        String why;
        if (e.state == Entry.DELETED) {
            why = "the message was deleted (acknowledged, purged or dead-lettered)";
        } else if (e.deliveryCount != delivery) {
            why = "the message was delivered again";
        } else if (e.state != Entry.IN_FLIGHT) {
            why = e.released ? "the message was nacked" : "its visibility timeout ended";
        } else if (e.dueNanos - now <= 0) {
            why = "its visibility timeout ended";
        } else {
            return;
        }
        throw stale(e, delivery, why);
    }

    /** Acknowledge: the delivery must be the most recent one and not nacked; it may have lapsed. */
    private void requireAcknowledgeable(Entry e, int delivery) {
        String why;
        if (e.state == Entry.DELETED) {
            why = "the message was deleted (acknowledged, purged or dead-lettered)";
        } else if (e.deliveryCount != delivery) {
            why = "the message was delivered again";
        } else if (e.released) {
            why = "the message was nacked";
        } else if (e.state == Entry.IN_FLIGHT || e.state == Entry.READY) {
            return; // in flight, or lapsed and not delivered again: the most recent handle still deletes it
        } else {
            why = "the message is not in flight"; // unreachable: only a nack makes a delivered entry WAITING
        }
        throw stale(e, delivery, why);
    }

    private ReceiptHandleExpiredException stale(Entry e, int delivery, String why) {
        String handle = receiptHandleOf(e, delivery);
        return new ReceiptHandleExpiredException(handle, "receipt handle " + handle + " of message "
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

    /**
     * The entry whose most recent delivery's handle may still act; {@link #requireCurrent} or
     * {@link #requireAcknowledgeable} then checks it is this delivery.
     */
    private Entry handleEntry(Handle h, String receiptHandle) {
        Entry e = byHandle.get(h.seq());
        if (e == null) {
            throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle
                    + " in mailbox '" + name + "' is stale: its message was acknowledged, nacked, purged or"
                    + " dead-lettered");
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

    private Object encode(T body, SendOptions options) {
        return codec == null ? body : Bodies.encode(codec, body, options, maxMessageBytes, name);
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

    /**
     * @return how many deliveries can be found by handle (in flight, or lapsed and not delivered again); for
     *         tests that nothing is left behind
     */
    int deliveriesByHandle() {
        lock.lock();
        try {
            return byHandle.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return how many groups (FIFO) or tenants (standard) are held; for tests that none is left behind */
    int groupsHeld() {
        lock.lock();
        try {
            return groups.size();
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
        private @Nullable FifoOptions fifo;

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
         *              1 MiB ({@link Limits#DEFAULT_MAX_MESSAGE_BYTES}); only checked with a codec
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param policy when to move messages to a dead-letter mailbox, which must be another open
         *               {@code InMemoryMailbox} that has a codec exactly when this one does, and that is
         *               FIFO exactly when this one is (checked by {@link #build()}); dead letters ignore its
         *               capacity
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

        /**
         * Makes the mailbox a FIFO mailbox (see {@link Mailbox}'s "FIFO mailboxes"); without this it is a
         * standard one.
         *
         * @param options its deduplication settings; content-based deduplication needs a codec
         * @return this builder
         * @throws IllegalArgumentException if content-based deduplication is asked of a mailbox without a codec
         */
        public Builder<T> fifo(FifoOptions options) {
            Objects.requireNonNull(options, "options");
            if (options.contentBasedDeduplication() && codec == null) {
                throw new IllegalArgumentException("FIFO mailbox '" + name + "' cannot deduplicate by content: it"
                        + " has no codec, so its bodies have no bytes to hash (build it with a codec)");
            }
            this.fifo = options;
            return this;
        }

        /**
         * @return the mailbox
         * @throws IllegalArgumentException if the dead-letter mailbox is FIFO and this one is not, or the other
         *                                  way round (as on SQS, a FIFO mailbox's dead letters keep their order
         *                                  in a FIFO mailbox, and a standard one's have no group to go to)
         */
        public InMemoryMailbox<T> build() {
            if (redrivePolicy != null) {
                InMemoryMailbox<?> dlq = (InMemoryMailbox<?>) redrivePolicy.deadLetterMailbox();
                if ((dlq.fifo != null) != (fifo != null)) {
                    throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name + "' must be "
                            + (fifo != null ? "a FIFO mailbox, because mailbox '" + name + "' is one"
                            : "a standard mailbox, because mailbox '" + name + "' is one"));
                }
            }
            return new InMemoryMailbox<>(this);
        }
    }
}
