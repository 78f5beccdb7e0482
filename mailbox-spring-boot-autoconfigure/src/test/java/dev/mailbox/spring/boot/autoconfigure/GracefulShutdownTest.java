package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.JedisPooled;

/**
 * Closing the context loses nothing: every message is either handled and acknowledged, or back in the
 * mailbox at once (not after its 60 s visibility timeout), including the one whose method outlived the grace
 * period.
 */
class GracefulShutdownTest {

    static RedisServerProcess redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** Handles each order in about 20 ms; "stuck" orders block until interrupted. */
    static class Worker {
        final Recorder<String> finished = new Recorder<>();
        final Recorder<String> started = new Recorder<>();

        @MailboxListener(value = "orders", concurrency = "4")
        void on(Order order) throws InterruptedException {
            started.add(order.id());
            if (order.id().startsWith("stuck")) {
                new CountDownLatch(1).await(); // until the grace period ends and it is interrupted
            }
            Thread.sleep(20); // the work
            finished.add(order.id());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(MailboxAutoConfiguration.class)
    static class App {
        @Bean
        Worker worker() {
            return new Worker();
        }
    }

    @Test
    void closingTheContextFinishesOrReturnsEveryMessage() throws Exception {
        String prefix = "g" + System.nanoTime() + ":";
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(org.springframework.boot.WebApplicationType.NONE)
                .properties("mailbox.redis.uri=" + redis.uri(), "mailbox.redis.key-prefix=" + prefix,
                        "mailbox.mailboxes.orders.backend=redis",
                        "mailbox.mailboxes.orders.visibility-timeout=60s",
                        "mailbox.mailboxes.orders.wait-time=5s",
                        "mailbox.listener.shutdown-grace=1s")
                .run();
        Worker worker = context.getBean(Worker.class);
        @SuppressWarnings("unchecked")
        Mailbox<Order> orders = (Mailbox<Order>) context.getBean("orders");
        List<String> sent = new ArrayList<>();
        sent.add("stuck-1");
        orders.send(new Order("stuck-1", 1));
        for (int i = 0; i < 200; i++) {
            sent.add("o-" + i);
            orders.send(new Order("o-" + i, 1));
        }
        worker.finished.awaitCount(20, Duration.ofSeconds(20));

        long closing = System.nanoTime();
        SpringApplication.exit(context);
        long closedInMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);

        List<String> finished = worker.finished.all();
        assertThat(new HashSet<>(finished)).as("no message handled twice").hasSize(finished.size());
        assertThat(finished).doesNotContain("stuck-1");
        assertThat(closedInMillis).as("stopped within the grace period plus a margin").isLessThan(10_000);

        // what is left is visible at once: the in-flight messages were returned, not left to their 60 s timeout
        try (JedisPooled jedis = new JedisPooled(redis.host(), redis.port());
             RedisMailbox<Order> after = RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(jedis)
                     .keyPrefix(prefix).build()) {
            assertThat(after.approximateCount()).isEqualTo(sent.size() - finished.size());
            Set<String> left = new HashSet<>();
            List<Message<Order>> got;
            do {
                got = after.receive(ReceiveOptions.defaults().withMaxMessages(10));
                got.forEach(m -> left.add(m.body().id()));
            } while (!got.isEmpty());
            Set<String> all = new HashSet<>(finished);
            all.addAll(left);
            assertThat(all).as("handled or back in the mailbox").containsExactlyInAnyOrderElementsOf(sent);
            assertThat(left).contains("stuck-1");
        }
    }
}
