package dev.mailbox.api.spi;

import dev.mailbox.api.Message;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The immutable part of a {@link Message} as remote backends deliver it: everything but the three
 * state-changing calls, which each backend implements.
 *
 * @param <T> the body type
 */
public abstract class Delivery<T> implements Message<T> {

    private final String mailbox;
    private final String id;
    private final String receiptHandle;
    private final int deliveryCount;
    private final Instant enqueuedAt;
    private final Map<String, String> stored;
    private final Map<String, String> attributes;
    private final Object body;
    private final @Nullable String groupId;
    private final @Nullable String sequenceNumber;

    /**
     * @param mailbox       the mailbox's name, for messages
     * @param id            the message's id
     * @param receiptHandle this delivery's handle
     * @param deliveryCount this delivery's number, from 1
     * @param enqueuedAt    when the message was sent
     * @param attributes    the message's attributes in the {@link StoredAttributes stored form} (plain string
     *                      attributes as they are), unmodifiable
     * @param body          the decoded body, or a {@link Bodies.Undecodable}
     */
    protected Delivery(String mailbox, String id, String receiptHandle, int deliveryCount, Instant enqueuedAt,
                       Map<String, String> attributes, Object body) {
        this(mailbox, id, receiptHandle, deliveryCount, enqueuedAt, attributes, body, null, null);
    }

    /**
     * @param mailbox        the mailbox's name, for messages
     * @param id             the message's id
     * @param receiptHandle  this delivery's handle
     * @param deliveryCount  this delivery's number, from 1
     * @param enqueuedAt     when the message was sent
     * @param attributes     the message's attributes in the {@link StoredAttributes stored form}, unmodifiable
     * @param body           the decoded body, or a {@link Bodies.Undecodable}
     * @param groupId        the message's group id, or null (see {@link Message#groupId()})
     * @param sequenceNumber its sequence number on a FIFO mailbox, or null (see {@link Message#sequenceNumber()})
     */
    protected Delivery(String mailbox, String id, String receiptHandle, int deliveryCount, Instant enqueuedAt,
                       Map<String, String> attributes, Object body, @Nullable String groupId,
                       @Nullable String sequenceNumber) {
        this.groupId = groupId;
        this.sequenceNumber = sequenceNumber;
        this.mailbox = Objects.requireNonNull(mailbox, "mailbox");
        this.id = Objects.requireNonNull(id, "id");
        this.receiptHandle = Objects.requireNonNull(receiptHandle, "receiptHandle");
        this.deliveryCount = deliveryCount;
        this.enqueuedAt = Objects.requireNonNull(enqueuedAt, "enqueuedAt");
        this.stored = Objects.requireNonNull(attributes, "attributes");
        this.attributes = StoredAttributes.plain(stored);
        this.body = Objects.requireNonNull(body, "body");
    }

    @Override
    public final String id() {
        return id;
    }

    @Override
    public final T body() {
        return Bodies.bodyOrThrow(body, id, mailbox);
    }

    @Override
    public final String receiptHandle() {
        return receiptHandle;
    }

    @Override
    public final int deliveryCount() {
        return deliveryCount;
    }

    @Override
    public final Instant enqueuedAt() {
        return enqueuedAt;
    }

    @Override
    public final Map<String, String> attributes() {
        return attributes;
    }

    @Override
    public final Map<String, dev.mailbox.api.AttributeValue> typedAttributes() {
        return StoredAttributes.typed(stored);
    }

    @Override
    public final Map<String, String> systemAttributes() {
        return StoredAttributes.system(stored);
    }

    /** @return the attributes in the stored form, as given (for a backend that forwards the message) */
    protected final Map<String, String> storedAttributes() {
        return stored;
    }

    @Override
    public final @Nullable String groupId() {
        return groupId;
    }

    @Override
    public final @Nullable String sequenceNumber() {
        return sequenceNumber;
    }

    @Override
    public String toString() {
        return "Message[id=" + id + ", mailbox=" + mailbox + ", delivery=" + deliveryCount + "]";
    }
}
