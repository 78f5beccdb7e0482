package dev.mailbox.testkit;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.SendOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A mailbox that records every successful send so a test can assert on it, for example the results a
 * worker replied with. On its own it stores nothing else (receives return nothing, like
 * {@link NullMailbox}); made with {@link #wrapping(Mailbox)} it forwards every call to a real mailbox
 * and records the sends that mailbox accepted. Thread-safe.
 *
 * <p>Each record keeps the send's group id ({@link SendOptions#withGroupId}), so a test can check what a
 * worker sent to which group; in front of a FIFO mailbox ({@code wrapping(NullMailbox.fifo(...))} or a real
 * one) the sends are checked as that mailbox checks them, and a refused send is not recorded.
 *
 * <p>A send that the mailbox deduplicated ({@link SendOptions#withDeduplicationId}: it returned the id
 * of a message already recorded) is not recorded again, since nothing new was stored. A
 * {@link #fenced(long) fenced} view records into the same list as the mailbox it came from.
 *
 * <pre>{@code
 * CollectingMailbox<Result> replies = new CollectingMailbox<>("replies");
 * worker.handle(request, replies);
 * assertThat(replies.bodies()).containsExactly(expected);
 * // or, for code that replies from another thread:
 * assertThat(replies.awaitSent(1, Duration.ofSeconds(5))).containsExactly(expected);
 * }</pre>
 *
 * @param <T> the body type
 */
public final class CollectingMailbox<T> extends ForwardingMailbox<T> {

    /**
     * One recorded send.
     *
     * @param id         the id the send returned
     * @param body       the body
     * @param delay      the send's delay
     * @param attributes the send's attributes
     * @param groupId    the send's message group id, or null
     * @param <T>        the body type
     */
    public record Sent<T>(String id, T body, Duration delay, Map<String, String> attributes, @Nullable String groupId) {

        /**
         * A recorded send without a group id.
         *
         * @param id         the id the send returned
         * @param body       the body
         * @param delay      the send's delay
         * @param attributes the send's attributes
         */
        public Sent(String id, T body, Duration delay, Map<String, String> attributes) {
            this(id, body, delay, attributes, null);
        }
    }

    /** The record, shared with every fenced view made from this mailbox. */
    private static final class Log<T> {
        final ReentrantLock lock = new ReentrantLock();
        final Condition added = lock.newCondition();
        final List<Sent<T>> sent = new ArrayList<>();
        /** The ids in {@link #sent}, to tell a deduplicated send from a new one. */
        final Set<String> ids = new HashSet<>();
    }

    private final Log<T> log;
    private final ReentrantLock lock;
    private final Condition added;
    private final List<Sent<T>> sent;

    /**
     * A collecting mailbox that keeps nothing but the record.
     *
     * @param name the mailbox's name
     */
    public CollectingMailbox(String name) {
        this(new NullMailbox<>(name));
    }

    private CollectingMailbox(Mailbox<T> delegate) {
        this(delegate, new Log<>());
    }

    private CollectingMailbox(Mailbox<T> delegate, Log<T> log) {
        super(delegate);
        this.log = log;
        this.lock = log.lock;
        this.added = log.added;
        this.sent = log.sent;
    }

    /**
     * A collecting mailbox in front of a real one: every call is forwarded, and accepted sends are
     * recorded too.
     *
     * @param delegate the real mailbox
     * @param <T>      the body type
     * @return the collecting mailbox
     */
    public static <T> CollectingMailbox<T> wrapping(Mailbox<T> delegate) {
        return new CollectingMailbox<>(delegate);
    }

    /** @return every recorded send, in order */
    public List<Sent<T>> sent() {
        lock.lock();
        try {
            return List.copyOf(sent);
        } finally {
            lock.unlock();
        }
    }

    /** @return the bodies of every recorded send, in order */
    public List<T> bodies() {
        return sent().stream().map(Sent::body).toList();
    }

    /** @return how many sends were recorded */
    public int sentCount() {
        lock.lock();
        try {
            return sent.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return the body of the most recent send
     * @throws AssertionError if nothing was sent
     */
    public T lastBody() {
        lock.lock();
        try {
            if (sent.isEmpty()) {
                throw new AssertionError("nothing was sent to mailbox '" + name() + "'");
            }
            return sent.get(sent.size() - 1).body();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until at least {@code count} sends have been recorded.
     *
     * @param count   how many sends to wait for
     * @param timeout how long to wait at most
     * @return the bodies of all recorded sends
     * @throws AssertionError if fewer were recorded in time, listing what was
     */
    public List<T> awaitSent(int count, Duration timeout) {
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            while (sent.size() < count) {
                if (remaining <= 0) {
                    throw new AssertionError("expected " + count + " sends to mailbox '" + name()
                            + "' within " + timeout + " but got " + sent.size() + ": "
                            + sent.stream().map(Sent::body).toList());
                }
                remaining = added.awaitNanos(remaining);
            }
            return sent.stream().map(Sent::body).toList();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for sends", e);
        } finally {
            lock.unlock();
        }
    }

    /** Forgets every recorded send. */
    public void clear() {
        lock.lock();
        try {
            sent.clear();
            log.ids.clear();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String send(T body, SendOptions options) {
        String id = delegate.send(body, options);
        record(List.of(new Sent<>(id, body, options.delay(), options.attributes(), options.groupId())));
        return id;
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Limits.requireBatchSize(bodies.size(), "batch size");
        List<String> ids = delegate.sendBatch(bodies, options);
        List<Sent<T>> records = new ArrayList<>(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            records.add(new Sent<>(ids.get(i), bodies.get(i), options.delay(), options.attributes(), options.groupId()));
        }
        record(records);
        return ids;
    }

    /**
     * A view of the delegate's {@link Mailbox#fenced fenced} view that records into this mailbox's
     * list.
     *
     * @param epoch the caller's fencing epoch, 1 or more
     * @return the view; closing it closes nothing
     * @throws IllegalArgumentException if {@code epoch} is less than 1
     */
    @Override
    public CollectingMailbox<T> fenced(long epoch) {
        return new CollectingMailbox<>(delegate.fenced(epoch), log);
    }

    private void record(List<Sent<T>> records) {
        lock.lock();
        try {
            for (Sent<T> s : records) {
                if (log.ids.add(s.id())) {
                    sent.add(s);
                }
            }
            added.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "CollectingMailbox[" + name() + ", sent=" + sentCount() + "]";
    }
}
