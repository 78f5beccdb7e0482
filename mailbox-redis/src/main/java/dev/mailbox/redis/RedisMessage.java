package dev.mailbox.redis;

import dev.mailbox.api.Message;
import dev.mailbox.api.spi.Bodies;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** One delivery of a Redis message: its id and this delivery's token make the receipt handle. */
final class RedisMessage<T> implements Message<T> {
    private final RedisMailbox<T> mailbox;
    final String id;
    final String token;
    private final int deliveryCount;
    private final long enqueuedAtMillis;
    private final Map<String, String> attributes;
    private final Object body; // T, or a Bodies.Undecodable

    RedisMessage(RedisMailbox<T> mailbox, String id, String token, int deliveryCount, long enqueuedAtMillis,
                 Map<String, String> attributes, Object body) {
        this.mailbox = mailbox;
        this.id = id;
        this.token = token;
        this.deliveryCount = deliveryCount;
        this.enqueuedAtMillis = enqueuedAtMillis;
        this.attributes = attributes;
        this.body = body;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public T body() {
        return Bodies.bodyOrThrow(body, id, mailbox.name());
    }

    @Override
    public String receiptHandle() {
        return id + ":" + token;
    }

    @Override
    public int deliveryCount() {
        return deliveryCount;
    }

    @Override
    public Instant enqueuedAt() {
        return Instant.ofEpochMilli(enqueuedAtMillis);
    }

    @Override
    public Map<String, String> attributes() {
        return attributes;
    }

    @Override
    public void acknowledge() {
        mailbox.acknowledge(this);
    }

    @Override
    public void nack(Duration visibilityTimeout) {
        mailbox.changeVisibility(this, visibilityTimeout, true);
    }

    @Override
    public void extendVisibility(Duration timeout) {
        mailbox.changeVisibility(this, timeout, false);
    }

    boolean belongsTo(RedisMailbox<?> m) {
        return mailbox == m;
    }

    @Override
    public String toString() {
        return "Message[id=" + id + ", mailbox=" + mailbox.name() + ", delivery=" + deliveryCount + "]";
    }
}
