package dev.mailbox.opentelemetry;

import dev.mailbox.api.Message;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** A message received through a {@link TracingMailbox}: the same delivery, with its creation context and traced settles. */
final class TracedMessage<T> implements Message<T> {

    private final TracingMailbox<T> mailbox;
    private final Message<T> inner;
    private final Context creation;

    TracedMessage(TracingMailbox<T> mailbox, Message<T> inner, Context creation) {
        this.mailbox = mailbox;
        this.inner = inner;
        this.creation = creation;
    }

    Message<T> inner() {
        return inner;
    }

    /** @return the context the message's sender injected (its span context is invalid if it injected none) */
    Context creation() {
        return creation;
    }

    boolean hasCreationContext() {
        return Span.fromContext(creation).getSpanContext().isValid();
    }

    String backend() {
        return mailbox.backend();
    }

    @Override
    public String id() {
        return inner.id();
    }

    @Override
    public T body() {
        return inner.body();
    }

    @Override
    public String receiptHandle() {
        return inner.receiptHandle();
    }

    @Override
    public int deliveryCount() {
        return inner.deliveryCount();
    }

    @Override
    public Instant enqueuedAt() {
        return inner.enqueuedAt();
    }

    @Override
    public Map<String, String> attributes() {
        return inner.attributes();
    }

    @Override
    public Map<String, dev.mailbox.api.AttributeValue> typedAttributes() {
        return inner.typedAttributes();
    }

    @Override
    public Map<String, String> systemAttributes() {
        return inner.systemAttributes();
    }

    @Override
    public @org.jspecify.annotations.Nullable String groupId() {
        return inner.groupId();
    }

    @Override
    public @org.jspecify.annotations.Nullable String sequenceNumber() {
        return inner.sequenceNumber();
    }

    @Override
    public void acknowledge() {
        mailbox.settle("ack", SemConv.SETTLE, List.of(this), () -> {
            inner.acknowledge();
            return null;
        });
    }

    @Override
    public void nack(Duration visibilityTimeout) {
        mailbox.settle("nack", SemConv.SETTLE, List.of(this), () -> {
            inner.nack(visibilityTimeout);
            return null;
        });
    }

    @Override
    public void extendVisibility(Duration timeout) {
        mailbox.settle("extend", null, List.of(this), () -> {
            inner.extendVisibility(timeout);
            return null;
        });
    }

    @Override
    public String toString() {
        return inner.toString();
    }
}
