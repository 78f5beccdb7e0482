package dev.mailbox.testkit;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;

import java.util.List;
import java.util.Objects;

/** A mailbox that forwards every call to another; the test doubles override what they change. */
abstract class ForwardingMailbox<T> implements Mailbox<T> {

    final Mailbox<T> delegate;

    ForwardingMailbox(Mailbox<T> delegate) {
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
