package dev.mailbox.samples.redis;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.samples.Order;
import java.time.Duration;
import java.util.function.Consumer;
import redis.clients.jedis.JedisPooled;

/**
 * A service that takes orders through Redis: {@link #place} from a web handler, {@link #work} from a worker
 * thread. An order whose handling fails five times moves to {@code orders-dlq}.
 */
public final class OrderService implements AutoCloseable {

    private final JedisPooled redis;
    private final RedisMailbox<Order> deadLetters;
    private final RedisMailbox<Order> orders;

    /** @param redisUri where Redis is, such as {@code redis://127.0.0.1:6379} */
    public OrderService(String redisUri) {
        redis = new JedisPooled(redisUri);
        // the same hash tag puts both mailboxes in one slot, so the move to dead letters is atomic on a cluster too
        deadLetters = RedisMailbox.builder("orders-dlq", JsonCodec.of(Order.class))
                .client(redis).hashTag("orders").build();
        orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class))
                .client(redis)
                .redrivePolicy(RedrivePolicy.of(5, deadLetters))
                .build();
    }

    /** @return the message id */
    public String place(Order order) {
        return orders.send(order);
    }

    /**
     * Waits up to {@code wait} for orders and hands each to {@code handler}; an order whose handler returns is
     * acknowledged, one whose handler throws comes back after 10 s.
     *
     * @return how many orders were handled
     */
    public int work(Duration wait, Consumer<Order> handler) {
        int handled = 0;
        for (Message<Order> m : orders.receive(ReceiveOptions.defaults()
                .withMaxMessages(10)
                .withWaitTime(wait)
                .withVisibilityTimeout(Duration.ofSeconds(60)))) {
            try {
                handler.accept(m.body());
                m.acknowledge();
                handled++;
            } catch (RuntimeException e) {
                m.nack(Duration.ofSeconds(10));
            }
        }
        return handled;
    }

    /** @return the orders that failed too often */
    public Mailbox<Order> deadLetters() {
        return deadLetters;
    }

    /** @return every order not yet handled: waiting, delayed or in flight */
    public long backlog() {
        return orders.approximateCount();
    }

    @Override
    public void close() {
        orders.close();
        deadLetters.close();
        redis.close();
    }
}
