package dev.mailbox.samples.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.DeadLetter;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopError;
import dev.mailbox.mainloop.RequestHandler;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.JedisPooled;

/**
 * What troubleshooting.md says of a producer that sends bare bodies to a MainLoop's mailbox (the mistake the old
 * README's example made): the runner cannot decode them and dead-letters each one as undecodable.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class CodecMismatchTest {

    @Test
    void aBareOrderSentToTheWorkersMailboxIsDeadLetteredAsUndecodable() {
        try (RedisServerProcess redis = RedisServerProcess.start(); JedisPooled jedis = new JedisPooled(redis.uri())) {
            Mailbox<DeadLetter<Order>> deadLetters = RedisMailbox.builder("pricing-dlq",
                    MainLoopCodecs.deadLetters(Order.class)).client(jedis).build();
            CollectingMailbox<dev.mailbox.mainloop.MainLoopResult<Quote>> replies = new CollectingMailbox<>("replies");
            MainLoop<Order, Quote> worker = MainLoop.builder(PricingMailboxes.requests(jedis),
                            RequestHandler.ofBody(Quote::price))
                    .responses(replies).deadLetters(deadLetters).waitTime(Duration.ofMillis(200)).build();

            try (Mailbox<Order> wrong = RedisMailbox.builder("pricing", JsonCodec.of(Order.class)).client(jedis).build()) {
                wrong.send(new Order("o-1", "beans", 2));
            }
            worker.run(5);

            List<Message<DeadLetter<Order>>> dead = deadLetters.receive(ReceiveOptions.defaults()
                    .withWaitTime(Duration.ofSeconds(5)));
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).body().error().type()).isEqualTo(MainLoopError.UNDECODABLE);
            assertThat(dead.get(0).body().rawBody()).isNotNull();
            assertThat(replies.bodies()).as("nobody to answer: a bare body has no reply-to").isEmpty();
            worker.close();
            deadLetters.close();
        }
    }
}
