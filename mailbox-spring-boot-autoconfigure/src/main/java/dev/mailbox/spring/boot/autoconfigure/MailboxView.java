package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A mailbox handed to code that closes what it gets, whose {@link #close()} does what its owner says instead:
 * nothing for a shared mailbox, or close it and forget it for one the factory keeps track of.
 */
final class MailboxView<T> implements Mailbox<T> {

    private final Mailbox<T> delegate;
    private final Consumer<MailboxView<T>> onClose;
    private final AtomicBoolean closed = new AtomicBoolean();

    MailboxView(Mailbox<T> delegate, Consumer<MailboxView<T>> onClose) {
        this.delegate = delegate;
        this.onClose = onClose;
    }

    /**
     * @param delegate a shared mailbox
     * @param <T>      its body type
     * @return a view whose close does nothing
     */
    static <T> MailboxView<T> unclosable(Mailbox<T> delegate) {
        return new MailboxView<>(delegate, v -> { });
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
    public List<Message<T>> acknowledgeAndReceive(List<? extends Message<T>> acknowledge, ReceiveOptions options,
                                                  Consumer<? super Message<T>> stale) {
        return delegate.acknowledgeAndReceive(acknowledge, options, stale);
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

    @Override
    public Mailbox<T> fenced(long epoch) {
        return delegate.fenced(epoch);
    }

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
        if (closed.compareAndSet(false, true)) {
            onClose.accept(this);
        }
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
