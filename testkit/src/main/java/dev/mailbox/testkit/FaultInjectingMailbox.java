package dev.mailbox.testkit;

import dev.mailbox.api.Limits;
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
import java.util.function.Consumer;
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
 *   <li>{@link #expire(Message)}: a delivery's visibility timeout ends at once: the message becomes
 *       visible again and the handle can no longer nack or extend (nor acknowledge, unless the real mailbox
 *       allows {@link dev.mailbox.api.MailboxCapabilities#lateAcknowledge() late acknowledgement});</li>
 *   <li>{@link #duplicateNextDelivery()}: the next message received is delivered a second time too,
 *       as at-least-once delivery allows (on a FIFO mailbox this breaks its group's order on purpose, as a
 *       consumer must expect after a failover);</li>
 *   <li>{@link #inject(Object)} and {@link #injectUndecodable(String)}: a synthetic message is
 *       returned first by the next receive.</li>
 * </ul>
 * Thread-safe. Messages returned by this mailbox are wrappers (with the real message's group id and
 * sequence number); use them, not the delegate's. Their
 * receipt handles are the wrapper's too, and {@link #acknowledge(String)}, {@link #nack(String, Duration)}
 * and {@link #extendVisibility(String, Duration)} take them (or a bare handle of the delegate), with
 * the same faults as the message's own methods.
 *
 * <p>A {@link #fenced(long) fenced} view is another fault injector, in front of the delegate's view,
 * that shares every fault and injected message with this one: faults set on either apply to calls
 * through both.
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
        /**
         * {@link Message#acknowledge()} and {@link Mailbox#acknowledge(String)}; an
         * {@code acknowledgeBatch} acknowledges its messages one by one, each a call of this.
         */
        ACKNOWLEDGE,
        /** {@link Message#nack(Duration)} and {@link Mailbox#nack(String, Duration)}. */
        NACK,
        /** {@link Message#extendVisibility(Duration)} and {@link Mailbox#extendVisibility(String, Duration)}. */
        EXTEND,
        /** {@code purge}. */
        PURGE,
        /** {@code approximateCount}. */
        COUNT
    }

    /**
     * Everything a test has set up, shared by a mailbox and its fenced views. It is also their lock:
     * the fields without a concurrent type are guarded by it.
     */
    private static final class Faults<T> {
        final Map<Operation, Integer> failBefore = new EnumMap<>(Operation.class);
        final Map<Operation, Integer> failAfter = new EnumMap<>(Operation.class);
        final ArrayDeque<Message<T>> injected = new ArrayDeque<>();
        /** Injected messages by their own handle, so the handle calls can find them. */
        final Map<String, InjectedMessage<T>> injectedByHandle = new ConcurrentHashMap<>();
        final Set<String> expiredHandles = ConcurrentHashMap.newKeySet();
        /** Handles {@link #expire} lapsed on a real mailbox with late acknowledgement: acknowledge still goes through. */
        final Set<String> lapsedHandles = ConcurrentHashMap.newKeySet();
        final List<Message<T>> duplicates = new ArrayList<>();
        boolean duplicateNext;
    }

    /** What the wrapper appends to the delegate's handle: "~" and a UUID, one per delivery. */
    private static final int HANDLE_SUFFIX_LENGTH = 1 + 36;

    private final Faults<T> faults;

    private FaultInjectingMailbox(Mailbox<T> delegate, Faults<T> faults) {
        super(delegate);
        this.faults = faults;
    }

    /**
     * @param delegate the real mailbox
     * @param <T>      the body type
     * @return a fault-injecting wrapper around it
     */
    public static <T> FaultInjectingMailbox<T> wrap(Mailbox<T> delegate) {
        return new FaultInjectingMailbox<>(delegate, new Faults<>());
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
    public FaultInjectingMailbox<T> failNext(Operation operation, int count) {
        synchronized (faults) {
            faults.failBefore.merge(Objects.requireNonNull(operation, "operation"), positive(count), Integer::sum);
        }
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
    public FaultInjectingMailbox<T> failNextAfterForwarding(Operation operation, int count) {
        synchronized (faults) {
            faults.failAfter.merge(Objects.requireNonNull(operation, "operation"), positive(count), Integer::sum);
        }
        return this;
    }

    /**
     * Ends a delivery's visibility timeout at once, as if it had lapsed: the message becomes visible again,
     * and this delivery's nack and extend throw {@link ReceiptHandleExpiredException}. Its acknowledge
     * follows the real mailbox's rule: where it declares
     * {@link dev.mailbox.api.MailboxCapabilities#lateAcknowledge()} the handle still deletes the message until
     * it is delivered again (the real mailbox decides; a receive will deliver it again at once), elsewhere it
     * throws too. To test a handle that is stale for every call, expire it and receive the message again.
     *
     * @param message a message received from this mailbox
     */
    public void expire(Message<T> message) {
        if (!(message instanceof Delivery<T> d)) {
            throw new IllegalArgumentException("expire() takes messages received from this mailbox");
        }
        if (!(d.real instanceof InjectedMessage<T>) && delegate.capabilities().lateAcknowledge()) {
            d.real.extendVisibility(Duration.ZERO); // a lapse, not a nack: the real handle still acknowledges
            faults.lapsedHandles.add(d.receiptHandle());
            return;
        }
        if (!(d.real instanceof InjectedMessage<T>)) {
            d.real.nack(Duration.ZERO);
        }
        faults.expiredHandles.add(d.receiptHandle());
    }

    /**
     * The next message received (from the real mailbox) is returned by the next receive as well, as
     * a second delivery of the same message.
     *
     * @return this mailbox
     */
    public FaultInjectingMailbox<T> duplicateNextDelivery() {
        synchronized (faults) {
            faults.duplicateNext = true;
        }
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
        return queue(new InjectedMessage<>(Objects.requireNonNull(body, "body"), null, null));
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
        return queue(new InjectedMessage<>(null, Objects.requireNonNull(reason, "reason"),
                storedBytes == null ? null : storedBytes.clone()));
    }

    private InjectedMessage<T> queue(InjectedMessage<T> m) {
        faults.injectedByHandle.put(m.receiptHandle(), m);
        synchronized (faults) {
            faults.injected.add(m);
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
        synchronized (faults) {
            while (out.size() < options.maxMessages() && !faults.injected.isEmpty()) {
                out.add(new Delivery<>(this, faults.injected.poll()));
            }
            while (out.size() < options.maxMessages() && !faults.duplicates.isEmpty()) {
                out.add(new Delivery<>(this, faults.duplicates.remove(0)));
            }
        }
        if (out.size() < options.maxMessages()) {
            ReceiveOptions rest = options.withMaxMessages(options.maxMessages() - out.size());
            if (!out.isEmpty()) {
                rest = rest.withWaitTime(Duration.ZERO);
            }
            for (Message<T> m : delegate.receive(rest)) {
                out.add(new Delivery<>(this, m));
                synchronized (faults) {
                    if (faults.duplicateNext) {
                        faults.duplicateNext = false;
                        faults.duplicates.add(m);
                    }
                }
            }
        }
        after(Operation.RECEIVE);
        return Collections.unmodifiableList(out);
    }

    /**
     * Acknowledges the messages one by one through their own {@link Message#acknowledge()}, so that
     * each meets the faults set for {@link Operation#ACKNOWLEDGE}; the stale ones are returned.
     */
    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        List<Message<T>> stale = new ArrayList<>();
        for (Message<T> m : messages) {
            try {
                m.acknowledge();
            } catch (ReceiptHandleExpiredException e) {
                stale.add(m);
            }
        }
        return stale;
    }

    @Override
    public void acknowledge(String receiptHandle) {
        byHandle(Operation.ACKNOWLEDGE, receiptHandle, Message::acknowledge, delegate::acknowledge);
    }

    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        Objects.requireNonNull(visibilityTimeout, "visibilityTimeout");
        byHandle(Operation.NACK, receiptHandle, m -> m.nack(visibilityTimeout),
                h -> delegate.nack(h, visibilityTimeout));
    }

    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        byHandle(Operation.EXTEND, receiptHandle, m -> m.extendVisibility(timeout),
                h -> delegate.extendVisibility(h, timeout));
    }

    /**
     * A fault injector in front of {@code delegate().fenced(epoch)} that shares this one's faults and
     * injected messages.
     *
     * @param epoch the caller's fencing epoch, 1 or more
     * @return the view; closing it closes nothing
     * @throws IllegalArgumentException if {@code epoch} is less than 1
     */
    @Override
    public FaultInjectingMailbox<T> fenced(long epoch) {
        return new FaultInjectingMailbox<>(delegate.fenced(epoch), faults);
    }

    @Override
    public long purge() {
        return around(Operation.PURGE, delegate::purge);
    }

    @Override
    public long approximateCount() {
        return around(Operation.COUNT, delegate::approximateCount);
    }

    /**
     * A handle call: a handle this wrapper expired is stale; otherwise the wrapper's suffix comes off
     * and the call goes to the injected message with that handle, or else to the delegate.
     */
    private void byHandle(Operation op, String receiptHandle, Consumer<InjectedMessage<T>> onInjected,
                          Consumer<String> onDelegate) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        around(op, () -> {
            if (faults.expiredHandles.contains(receiptHandle)
                    || (op != Operation.ACKNOWLEDGE && faults.lapsedHandles.contains(receiptHandle))) {
                throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle
                        + " was expired by the fault injector");
            }
            String real = unwrapHandle(receiptHandle);
            InjectedMessage<T> fake = faults.injectedByHandle.get(real);
            if (fake != null) {
                onInjected.accept(fake);
            } else {
                onDelegate.accept(real);
            }
            return null;
        });
    }

    /** @return the delegate's handle inside one of ours, or the string itself if it is not one of ours */
    private static String unwrapHandle(String handle) {
        int tilde = handle.length() - HANDLE_SUFFIX_LENGTH;
        if (tilde >= 0 && handle.charAt(tilde) == '~') {
            try {
                UUID.fromString(handle.substring(tilde + 1));
                return handle.substring(0, tilde);
            } catch (IllegalArgumentException notOurs) {
                // fall through: a delegate's handle that happens to contain '~'
            }
        }
        return handle;
    }

    /** Runs a forwarded call between the injected failures for its operation. */
    private <R> R around(Operation op, Supplier<R> call) {
        before(op);
        R result = call.get();
        after(op);
        return result;
    }

    private void before(Operation op) {
        if (take(faults.failBefore, op)) {
            throw new MailboxUnavailableException("injected failure: " + op + " on mailbox '" + name()
                    + "' did not reach the backend", true, null);
        }
    }

    private void after(Operation op) {
        if (take(faults.failAfter, op)) {
            throw new MailboxUnavailableException("injected failure: " + op + " on mailbox '" + name()
                    + "' took effect but its reply was lost", true, null);
        }
    }

    private boolean take(Map<Operation, Integer> counts, Operation op) {
        synchronized (faults) {
            Integer left = counts.get(op);
            if (left == null) {
                return false;
            }
            if (left == 1) {
                counts.remove(op);
            } else {
                counts.put(op, left - 1);
            }
            return true;
        }
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
        public Map<String, dev.mailbox.api.AttributeValue> typedAttributes() {
            return real.typedAttributes();
        }

        @Override
        public Map<String, String> systemAttributes() {
            return real.systemAttributes();
        }

        @Override
        public @Nullable String groupId() {
            return real.groupId();
        }

        @Override
        public @Nullable String sequenceNumber() {
            return real.sequenceNumber();
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
                if (owner.faults.expiredHandles.contains(handle)
                        || (op != Operation.ACKNOWLEDGE && owner.faults.lapsedHandles.contains(handle))) {
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
