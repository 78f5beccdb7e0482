package dev.mailbox.samples.fifo;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqs.SqsMailbox;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Customer events in a FIFO mailbox: each customer's events in the order they were sent, one customer's at a time
 * in flight, a customer's duplicates within five minutes dropped by a hash of the body. The same mailbox on each backend.
 */
public final class CustomerEvents {

    /** Deduplicated by body within each customer's group: two customers may send the same event. */
    private static final FifoOptions FIFO = FifoOptions.defaults()
            .withContentBasedDeduplication(true)
            .withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP);

    private CustomerEvents() {
    }

    /** @return the mailbox in memory, for tests */
    public static Mailbox<String> inMemory() {
        return InMemoryMailbox.builder("customer-events", Codec.utf8())
                .fifo(FIFO)
                .build();
    }

    /** @return the mailbox on SQS: the FIFO queue customer-events.fifo, created if missing */
    public static Mailbox<String> onSqs(SqsClient sqs) {
        return SqsMailbox.builder("customer-events", Codec.utf8())
                .client(sqs)
                .createIfMissing(true)
                .fifo(FIFO)
                .build();
    }

    /** @return the mailbox on Redis (standalone or Cluster) */
    public static Mailbox<String> onRedis(UnifiedJedis redis) {
        return RedisMailbox.builder("customer-events", Codec.utf8())
                .client(redis)
                .fifo(FIFO)
                .build();
    }

    /** Sends an event in its customer's group: the group id is what keeps the order. */
    public static void publish(Mailbox<String> events, String customer, String event) {
        events.send(event, SendOptions.defaults().withGroupId(customer));
    }
}
