package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A mailbox in this JVM seen with another body type: what a mailbox opened by name (a MainLoop's reply-to) must
 * be when a declared in-memory mailbox has that name, since an in-memory mailbox is one object, not a place on
 * a server that a second object of another type can reach. Bodies go through their encoded form both ways.
 * Closing it closes nothing.
 *
 * @param <T> the body type of this view
 * @param <D> the declared mailbox's
 */
final class RecodingMailbox<T, D> implements Mailbox<T> {

    private final Mailbox<D> delegate;
    private final Codec<T> codec;
    private final Codec<D> delegateCodec;

    RecodingMailbox(Mailbox<D> delegate, Codec<T> codec, Codec<D> delegateCodec) {
        this.delegate = delegate;
        this.codec = codec;
        this.delegateCodec = delegateCodec;
    }

    private D toDelegate(T body) {
        try {
            return delegateCodec.decode(codec.encode(body));
        } catch (SerializationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new SerializationException("a " + body.getClass().getName() + " cannot be a body of mailbox '"
                    + name() + "': " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public String send(T body, SendOptions options) {
        return delegate.send(toDelegate(body), options);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        List<D> converted = new ArrayList<>(bodies.size());
        bodies.forEach(b -> converted.add(toDelegate(b)));
        return delegate.sendBatch(converted, options);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        List<Message<T>> out = new ArrayList<>();
        delegate.receive(options).forEach(m -> out.add(new Recoded<>(this, m)));
        return out;
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Map<Message<D>, Message<T>> back = new IdentityHashMap<>();
        List<Message<D>> own = new ArrayList<>(messages.size());
        for (Message<T> m : messages) {
            if (!(m instanceof Recoded<?, ?> r) || r.owner != this) {
                throw new IllegalArgumentException("message " + m.id() + " was not received from this mailbox");
            }
            @SuppressWarnings("unchecked")
            Message<D> d = (Message<D>) r.delegate;
            own.add(d);
            back.put(d, m);
        }
        List<Message<T>> stale = new ArrayList<>();
        delegate.acknowledgeBatch(own).forEach(d -> stale.add(back.get(d)));
        return stale;
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
        return new RecodingMailbox<>(delegate.fenced(epoch), codec, delegateCodec);
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
        // the declared mailbox is its owner's to close
    }

    @Override
    public String toString() {
        return delegate + " as another type";
    }

    /** A delivery of the declared mailbox, its body seen as the view's type. */
    private static final class Recoded<T, D> implements Message<T> {
        final RecodingMailbox<T, D> owner;
        final Message<D> delegate;

        Recoded(RecodingMailbox<T, D> owner, Message<D> delegate) {
            this.owner = owner;
            this.delegate = delegate;
        }

        @Override
        public String id() {
            return delegate.id();
        }

        @Override
        public T body() {
            byte[] bytes = owner.delegateCodec.encode(delegate.body());
            try {
                return owner.codec.decode(bytes);
            } catch (SerializationException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new SerializationException("body of message " + id() + " in mailbox '" + owner.name()
                        + "' cannot be read as this type: " + e.getMessage(), e, bytes);
            }
        }

        @Override
        public String receiptHandle() {
            return delegate.receiptHandle();
        }

        @Override
        public int deliveryCount() {
            return delegate.deliveryCount();
        }

        @Override
        public Instant enqueuedAt() {
            return delegate.enqueuedAt();
        }

        @Override
        public Map<String, String> attributes() {
            return delegate.attributes();
        }

        @Override
        public void acknowledge() {
            delegate.acknowledge();
        }

        @Override
        public void nack(Duration visibilityTimeout) {
            delegate.nack(visibilityTimeout);
        }

        @Override
        public void extendVisibility(Duration timeout) {
            delegate.extendVisibility(timeout);
        }
    }
}
