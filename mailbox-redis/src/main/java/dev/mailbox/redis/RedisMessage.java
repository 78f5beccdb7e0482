package dev.mailbox.redis;

import dev.mailbox.api.spi.Delivery;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** One delivery of a Redis message: its id and this delivery's token make the receipt handle. */
final class RedisMessage<T> extends Delivery<T> {
    private final RedisMailbox<T> mailbox;
    final String id;
    final String token;

    RedisMessage(RedisMailbox<T> mailbox, String id, String token, int deliveryCount, long enqueuedAtMillis,
                 Map<String, String> attributes, Object body) {
        super(mailbox.name(), id, id + ":" + token, deliveryCount, Instant.ofEpochMilli(enqueuedAtMillis),
                attributes, body);
        this.mailbox = mailbox;
        this.id = id;
        this.token = token;
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
}
