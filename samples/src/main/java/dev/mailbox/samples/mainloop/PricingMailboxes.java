package dev.mailbox.samples.mainloop;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import java.time.Duration;
import redis.clients.jedis.UnifiedJedis;

/**
 * The mailboxes the worker and its callers share. Both sides use the MainLoop codecs: a request travels as a
 * {@code MainLoopRequest<Order>} (id, body, deadline, reply-to), never as a bare {@code Order}.
 */
public final class PricingMailboxes {

    private PricingMailboxes() {
    }

    /** @return the mailbox requests go to */
    public static Mailbox<MainLoopRequest<Order>> requests(UnifiedJedis redis) {
        return RedisMailbox.builder("pricing", MainLoopCodecs.requests(Order.class)).client(redis).build();
    }

    /** @return a caller's reply mailbox; its keys expire an hour after its last use, should the caller crash */
    public static Mailbox<MainLoopResult<Quote>> replies(UnifiedJedis redis, String name) {
        return RedisMailbox.builder(name, MainLoopCodecs.results(Quote.class))
                .client(redis).keyTtl(Duration.ofHours(1)).build();
    }
}
