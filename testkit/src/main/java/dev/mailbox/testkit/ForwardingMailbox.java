package dev.mailbox.testkit;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A mailbox that forwards every call to another; the test doubles (the kit's and a test's own) override
 * what they change. {@link #fenced(long)} is left to each subclass: forwarding it would hand out the
 * delegate's view and lose the double's behaviour, so a subclass wraps the delegate's view in another of
 * itself instead. {@link Mailbox#acknowledgeAndReceive} is not forwarded: its default goes through this
 * double's own {@code acknowledgeBatch} and {@code receive}.
 *
 * @param <T> the message body type
 */
public abstract class ForwardingMailbox<T> implements Mailbox<T> {

    /** Where every call goes. */
    protected final Mailbox<T> delegate;

    /** @param delegate where every call goes */
    protected ForwardingMailbox(Mailbox<T> delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public String send(T body, SendOptions options) {
        return delegate.send(body, options);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        return delegate.sendBatch(bodies, options);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return delegate.receive(options);
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        return delegate.acknowledgeBatch(messages);
    }

    @Override
    public void acknowledge(String receiptHandle) {
        delegate.acknowledge(receiptHandle);
    }

    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        delegate.nack(receiptHandle, visibilityTimeout);
    }

    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        delegate.extendVisibility(receiptHandle, timeout);
    }

    /**
     * @param epoch the caller's fencing epoch, 1 or more
     * @return a double of the same kind, sharing this one's state, in front of {@code delegate.fenced(epoch)}
     */
    @Override
    public abstract Mailbox<T> fenced(long epoch);

    @Override
    public long purge() {
        return delegate.purge();
    }

    @Override
    public long approximateCount() {
        return delegate.approximateCount();
    }

    @Override
    public MailboxCapabilities capabilities() {
        return delegate.capabilities();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
