package dev.mailbox.samples.mainloop;

import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import redis.clients.jedis.JedisPooled;

/** A caller: asks the pricing workers for a quote and waits for it. */
public final class PricingCaller implements AutoCloseable {

    private final MainLoopClient<Order, Quote> client;

    public PricingCaller(JedisPooled redis) {
        client = MainLoopClient.builder(PricingMailboxes.requests(redis), name -> PricingMailboxes.replies(redis, name))
                .build();
    }

    /** @return the quote, once a worker has answered */
    public Quote quote(Order order) {
        return client.callAndWait(order, Duration.ofSeconds(5));
    }

    /** @return a future the client completes when the answer arrives */
    public CompletableFuture<Quote> quoteLater(Order order) {
        return client.call(order, Duration.ofSeconds(5));
    }

    @Override
    public void close() {
        client.close(); // and purges its reply mailbox
    }
}
