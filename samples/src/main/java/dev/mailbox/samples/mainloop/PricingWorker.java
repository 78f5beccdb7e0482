package dev.mailbox.samples.mainloop;

import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.RequestHandler;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import redis.clients.jedis.JedisPooled;

/** A worker process: prices every order sent to {@code pricing} and replies to its caller. */
public final class PricingWorker {

    private PricingWorker() {
    }

    /** @return the runner; {@code run()} serves until it is shut down */
    public static MainLoop<Order, Quote> loop(JedisPooled redis) {
        return MainLoop.builder(PricingMailboxes.requests(redis), RequestHandler.ofBody(Quote::price))
                .replyTo(name -> PricingMailboxes.replies(redis, name))
                .concurrency(4)
                .build();
    }

    /** @param args the Redis URI, by default {@code redis://127.0.0.1:6379} */
    public static void main(String[] args) {
        JedisPooled redis = new JedisPooled(args.length > 0 ? args[0] : "redis://127.0.0.1:6379");
        MainLoop<Order, Quote> loop = loop(redis);
        Runtime.getRuntime().addShutdownHook(loop.shutdownHook()); // Ctrl-C: finish what runs, then stop
        loop.run();
    }
}
