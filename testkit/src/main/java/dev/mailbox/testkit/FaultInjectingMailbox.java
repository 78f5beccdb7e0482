package dev.mailbox.testkit;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Wraps a real mailbox and injects the faults that production sees, so a test can check how code
 * copes with them:
 * <ul>
 *   <li>{@link #failNext(Operation, int)}: the next calls fail as unavailable (retryable) before they
 *       reach the mailbox, so nothing happens;</li>
 *   <li>{@link #failNextAfterForwarding(Operation, int)}: the next calls take effect but the caller
 *       still sees a failure, as when a reply is lost (a retried send then duplicates);</li>
 *   <li>{@link #expire(Message)}: a delivery's handle goes stale as if its visibility timeout had
 *       ended, and the message becomes visible again;</li>
 *   <li>{@link #duplicateNextDelivery()}: the next message received is delivered a second time too,
 *       as at-least-once delivery allows;</li>
 *   <li>{@link #inject(Object)} and {@link #injectUndecodable(String)}: a synthetic message is
 *       returned first by the next receive.</li>
 * </ul>
 * Thread-safe. Messages returned by this mailbox are wrappers; use them, not the delegate's.
 *
 * @param <T> the body type
 */
public final class FaultInjectingMailbox<T> extends ForwardingMailbox<T> {

    /** The operations faults can target. */
    public enum Operation {
        /** {@code send} and {@code sendBatch}. */
        SEND,
        /** {@code receive}. */
        RECEIVE,
        /** {@link Message#acknowledge()}. */
        ACKNOWLEDGE,
        /** {@link Message#nack(Duration)}. */
        NACK,
        /** {@link Message#extendVisibility(Duration)}. */
        EXTEND,
        /** {@code purge}. */
        PURGE,
        /** {@code approximateCount}. */
        COUNT
    }

    private final Map<Operation, Integer> failBefore = new EnumMap<>(Operation.class);
    private final Map<Operation, Integer> failAfter = new EnumMap<>(Operation.class);
    private final ArrayDeque<Message<T>> injected = new ArrayDeque<>();
    private final Set<String> expiredHandles = ConcurrentHashMap.newKeySet();
    private final List<Message<T>> duplicates = new ArrayList<>();
    private boolean duplicateNext;

    private FaultInjectingMailbox(Mailbox<T> delegate) {
        super(delegate);
    }

    /**
     * @param delegate the real mailbox
     * @param <T>      the body type
     * @return a fault-injecting wrapper around it
     */
    public static <T> FaultInjectingMailbox<T> wrap(Mailbox<T> delegate) {
        return new FaultInjectingMailbox<>(delegate);
    }

    /** @return the wrapped mailbox */
    public Mailbox<T> delegate() {
        return delegate;
    }

    /**
     * The next {@code count} calls of {@code operation} throw a retryable
     * {@link MailboxUnavailableException} without reaching the mailbox.
     *
     * @param operation which calls
     * @param count     how many, 1 or more
     * @return this mailbox
     */
    public synchronized FaultInjectingMailbox<T> failNext(Operation operation, int count) {
        failBefore.merge(Objects.requireNonNull(operation, "operation"), positive(count), Integer::sum);
        return this;
    }

    /**
     * The next {@code count} calls of {@code operation} reach the mailbox and take effect, then throw a
     * retryable {@link MailboxUnavailableException} as if the reply had been lost.
     *
     * @param operation which calls
     * @param count     how many, 1 or more
     * @return this mailbox
     */
    public synchronized FaultInjectingMailbox<T> failNextAfterForwarding(Operation operation, int count) {
        failAfter.merge(Objects.requireNonNull(operation, "operation"), positive(count), Integer::sum);
        return this;
    }

    /**
     * Makes a delivery's handle stale as if its visibility timeout had ended: the message becomes
     * visible again at once, and this delivery's acknowledge, nack and extend throw
     * {@link ReceiptHandleExpiredException}.
     *
     * @param message a message received from this mailbox
     */
    public void expire(Message<T> message) {
        if (!(message instanceof Delivery<T> d)) {
            throw new IllegalArgumentException("expire() takes messages received from this mailbox");
        }
        if (!(d.real instanceof InjectedMessage<T>)) {
            d.real.nack(Duration.ZERO);
        }
        expiredHandles.add(d.receiptHandle());
    }

    /**
     * The next message received (from the real mailbox) is returned by the next receive as well, as
     * a second delivery of the same message.
     *
     * @return this mailbox
     */
    public synchronized FaultInjectingMailbox<T> duplicateNextDelivery() {
        duplicateNext = true;
        return this;
    }

    /**
     * Queues a synthetic message that the next receive returns first. It is not stored in the real
     * mailbox; acknowledging or nacking it only records that it happened.
     *
     * @param body its body
     * @return the synthetic message
     */
    public InjectedMessage<T> inject(T body) {
        InjectedMessage<T> m = new InjectedMessage<>(Objects.requireNonNull(body, "body"), null, null);
        synchronized (this) {
            injected.add(m);
        }
        return m;
    }

    /**
     * Queues a synthetic message whose {@link Message#body()} throws {@link SerializationException},
     * like a stored body the codec cannot read.
     *
     * @param reason the decoding error's message
     * @return the synthetic message
     */
    public InjectedMessage<T> injectUndecodable(String reason) {
        return injectUndecodable(reason, null);
    }

    /**
     * Like {@link #injectUndecodable(String)}, with the stored bytes that the exception carries
     * (see {@link SerializationException#undecodableBody()}).
     *
     * @param reason      the decoding error's message
     * @param storedBytes the bytes the codec could not read, or null
     * @return the synthetic message
     */
    public InjectedMessage<T> injectUndecodable(String reason, byte @Nullable [] storedBytes) {
        InjectedMessage<T> m = new InjectedMessage<>(null, Objects.requireNonNull(reason, "reason"),
                storedBytes == null ? null : storedBytes.clone());
        synchronized (this) {
            injected.add(m);
        }
        return m;
    }

    @Override
    public String send(T body, SendOptions options) {
        return around(Operation.SEND, () -> delegate.send(body, options));
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        return around(Operation.SEND, () -> delegate.sendBatch(bodies, options));
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        Objects.requireNonNull(options, "options");
        before(Operation.RECEIVE);
        List<Message<T>> out = new ArrayList<>();
        synchronized (this) {
            while (out.size() < options.maxMessages() && !injected.isEmpty()) {
                out.add(new Delivery<>(this, injected.poll()));
            }
            while (out.size() < options.maxMessages() && !duplicates.isEmpty()) {
                out.add(new Delivery<>(this, duplicates.remove(0)));
            }
        }
        if (out.size() < options.maxMessages()) {
            ReceiveOptions rest = options.withMaxMessages(options.maxMessages() - out.size());
            if (!out.isEmpty()) {
                rest = rest.withWaitTime(Duration.ZERO);
            }
            for (Message<T> m : delegate.receive(rest)) {
                out.add(new Delivery<>(this, m));
                synchronized (this) {
                    if (duplicateNext) {
                        duplicateNext = false;
                        duplicates.add(m);
                    }
                }
            }
        }
        after(Operation.RECEIVE);
        return Collections.unmodifiableList(out);
    }

    @Override
    public long purge() {
        return around(Operation.PURGE, delegate::purge);
    }

    @Override
    public long approximateCount() {
        return around(Operation.COUNT, delegate::approximateCount);
    }

    /** Runs a forwarded call between the injected failures for its operation. */
    private <R> R around(Operation op, Supplier<R> call) {
        before(op);
        R result = call.get();
        after(op);
        return result;
    }

    private void before(Operation op) {
        if (take(failBefore, op)) {
            throw new MailboxUnavailableException("injected failure: " + op + " on mailbox '" + name()
                    + "' did not reach the backend", true, null);
        }
    }

    private void after(Operation op) {
        if (take(failAfter, op)) {
            throw new MailboxUnavailableException("injected failure: " + op + " on mailbox '" + name()
                    + "' took effect but its reply was lost", true, null);
        }
    }

    private synchronized boolean take(Map<Operation, Integer> faults, Operation op) {
        Integer left = faults.get(op);
        if (left == null) {
            return false;
        }
        if (left == 1) {
            faults.remove(op);
        } else {
            faults.put(op, left - 1);
        }
        return true;
    }

    private static int positive(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be 1 or more, was " + count);
        }
        return count;
    }

    /** A delivery through the wrapper: checks injected faults, then forwards. */
    private static final class Delivery<T> implements Message<T> {
        private final FaultInjectingMailbox<T> owner;
        private final Message<T> real;
        private final String handle;

        Delivery(FaultInjectingMailbox<T> owner, Message<T> real) {
            this.owner = owner;
            this.real = real;
            // a duplicate is a separate delivery, so it gets its own handle
            this.handle = real.receiptHandle() + "~" + UUID.randomUUID();
        }

        @Override
        public String id() {
            return real.id();
        }

        @Override
        public T body() {
            return real.body();
        }

        @Override
        public String receiptHandle() {
            return handle;
        }

        @Override
        public int deliveryCount() {
            return real.deliveryCount();
        }

        @Override
        public Instant enqueuedAt() {
            return real.enqueuedAt();
        }

        @Override
        public Map<String, String> attributes() {
            return real.attributes();
        }

        @Override
        public void acknowledge() {
            forward(Operation.ACKNOWLEDGE, real::acknowledge);
        }

        @Override
        public void nack(Duration visibilityTimeout) {
            forward(Operation.NACK, () -> real.nack(visibilityTimeout));
        }

        @Override
        public void extendVisibility(Duration timeout) {
            forward(Operation.EXTEND, () -> real.extendVisibility(timeout));
        }

        private void forward(Operation op, Runnable call) {
            owner.around(op, () -> {
                if (owner.expiredHandles.contains(handle)) {
                    throw new ReceiptHandleExpiredException(handle, "receipt handle " + handle
                            + " was expired by the fault injector");
                }
                call.run();
                return null;
            });
        }
    }

    /**
     * A synthetic message made by {@link #inject(Object)} or {@link #injectUndecodable(String)}. It
     * records what was done to it.
     *
     * @param <T> the body type
     */
    public static final class InjectedMessage<T> implements Message<T> {
        private final String id = "injected-" + UUID.randomUUID();
        private final @Nullable T body;
        private final @Nullable String decodeError;
        private final byte @Nullable [] storedBytes;
        private final Instant enqueuedAt = Instant.now();
        private volatile boolean acknowledged;
        private final AtomicInteger nacks = new AtomicInteger();

        private InjectedMessage(@Nullable T body, @Nullable String decodeError, byte @Nullable [] storedBytes) {
            this.body = body;
            this.decodeError = decodeError;
            this.storedBytes = storedBytes;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public T body() {
            if (decodeError != null) {
                throw new SerializationException("injected undecodable message " + id + ": " + decodeError,
                        null, storedBytes);
            }
            return Objects.requireNonNull(body);
        }

        @Override
        public String receiptHandle() {
            return id + ":1";
        }

        @Override
        public int deliveryCount() {
            return 1;
        }

        @Override
        public Instant enqueuedAt() {
            return enqueuedAt;
        }

        @Override
        public Map<String, String> attributes() {
            return Map.of();
        }

        @Override
        public void acknowledge() {
            if (acknowledged) {
                throw new ReceiptHandleExpiredException(receiptHandle(), "injected message " + id
                        + " was already acknowledged");
            }
            acknowledged = true;
        }

        @Override
        public void nack(Duration visibilityTimeout) {
            nacks.incrementAndGet();
        }

        @Override
        public void extendVisibility(Duration timeout) {
        }

        /** @return whether the message was acknowledged */
        public boolean acknowledged() {
            return acknowledged;
        }

        /** @return how many times the message was nacked */
        public int nacks() {
            return nacks.get();
        }
    }
}
