package dev.mailbox.inmemory;

import dev.mailbox.api.Message;
import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.spi.Bodies;
import dev.mailbox.api.spi.StoredAttributes;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * One delivery of an in-memory message: a reference to the stored entry plus the delivery number, and
 * the epoch of the fenced view it was received through (0 if none), under which its acknowledge, nack
 * and extend are fenced.
 */
final class InMemoryMessage<T> implements Message<T> {
    private final InMemoryMailbox<T> mailbox;
    private final Entry entry;
    private final int delivery;
    private final Object body;
    private final long epoch;

    InMemoryMessage(InMemoryMailbox<T> mailbox, Entry entry, int delivery, Object body, long epoch) {
        this.mailbox = mailbox;
        this.entry = entry;
        this.delivery = delivery;
        this.body = body;
        this.epoch = epoch;
    }

    @Override
    public String id() {
        return mailbox.idOf(entry);
    }

    @Override
    public T body() {
        return Bodies.bodyOrThrow(body, id(), mailbox.name());
    }

    @Override
    public String receiptHandle() {
        return mailbox.receiptHandleOf(entry, delivery);
    }

    @Override
    public int deliveryCount() {
        return delivery;
    }

    @Override
    public Instant enqueuedAt() {
        return Instant.ofEpochMilli(entry.enqueuedAtMillis);
    }

    @Override
    public Map<String, String> attributes() {
        return StoredAttributes.plain(entry.attributes);
    }

    @Override
    public Map<String, AttributeValue> typedAttributes() {
        return StoredAttributes.typed(entry.attributes);
    }

    @Override
    public Map<String, String> systemAttributes() {
        return StoredAttributes.system(entry.attributes);
    }

    @Override
    public @Nullable String groupId() {
        Group g = entry.group;
        return g == null ? null : g.id;
    }

    @Override
    public @Nullable String sequenceNumber() {
        return mailbox.sequenceNumberOf(entry);
    }

    /** The epoch of the fenced view it was received through; 0 if none. */
    long epoch() {
        return epoch;
    }

    @Override
    public void acknowledge() {
        mailbox.acknowledge(entry, delivery, epoch);
    }

    @Override
    public void nack(Duration visibilityTimeout) {
        mailbox.nack(entry, delivery, visibilityTimeout, epoch);
    }

    @Override
    public void extendVisibility(Duration timeout) {
        mailbox.extendVisibility(entry, delivery, timeout, epoch);
    }

    @Override
    public String toString() {
        return "Message[id=" + id() + ", mailbox=" + mailbox.name() + ", delivery=" + delivery + "]";
    }
}
