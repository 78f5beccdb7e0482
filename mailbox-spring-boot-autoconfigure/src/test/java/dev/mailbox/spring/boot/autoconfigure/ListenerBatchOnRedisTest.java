package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.JedisPooled;

/**
 * With {@code max-messages} over 1 a worker holds a batch: the messages waiting their turn, and the ones handled
 * but not yet acknowledged (that rides on the next receive), must stay invisible too, or another worker gets
 * them once the visibility timeout lapses and they are handled twice.
 */
class ListenerBatchOnRedisTest {

    static RedisServerProcess redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** "slow" runs for three visibility timeouts, or until another message has been handled twice. */
    static class Batcher {
        final Recorder<String> handled = new Recorder<>();

        @MailboxListener("orders")
        void on(Message<Order> message) {
            String id = message.body().id();
            if (id.equals("slow")) {
                try {
                    handled.await(s -> s.stream().filter(h -> h.startsWith("next")).count() >= 1,
                            Duration.ofMillis(3_500), "another worker to take 'next'");
                } catch (AssertionError expected) {
                    // nobody else took it: as it should be
                }
            }
            handled.add(id + "#" + message.deliveryCount());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Batcher batcher() {
            return new Batcher();
        }
    }

    @Test
    void messagesHeldInABatchStayInvisibleUntilSettled() {
        String prefix = "b" + System.nanoTime() + ":";
        try (JedisPooled jedis = new JedisPooled(redis.host(), redis.port());
             Mailbox<Order> orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(jedis)
                     .keyPrefix(prefix).build()) {
            // both are there before the workers start, so the first receive takes them together
            orders.send(new Order("slow", 1));
            orders.send(new Order("next", 1));
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                    .withUserConfiguration(App.class)
                    .withPropertyValues("mailbox.redis.uri=" + redis.uri(), "mailbox.redis.key-prefix=" + prefix,
                            "mailbox.mailboxes.orders.backend=redis",
                            "mailbox.mailboxes.orders.visibility-timeout=1s",
                            "mailbox.mailboxes.orders.wait-time=1s",
                            "mailbox.mailboxes.orders.listener.concurrency=2",
                            "mailbox.mailboxes.orders.listener.max-messages=2")
                    .run(context -> {
                        Batcher b = context.getBean(Batcher.class);
                        b.handled.awaitCount(2, Duration.ofSeconds(15));
                        // empty once the worker that took the batch has settled all of it
                        ListenerOnRedisTest.awaitCount(orders, 0);
                        assertThat(b.handled.all()).as("each handled once, on its first delivery")
                                .containsExactlyInAnyOrder("slow#1", "next#1");
                    });
        }
    }
}
