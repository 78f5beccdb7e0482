package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.RequestFailedException;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ResolvableType;
import redis.clients.jedis.JedisPooled;

/** A listener's acknowledge, nack, dead letter and visibility extension, and a handler's answers, on real Redis. */
class ListenerOnRedisTest {

    static RedisServerProcess redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** Fails an order's first {@code failures} deliveries, blocks on "slow" orders until released. */
    static class Shop {
        final Recorder<Message<Order>> handled = new Recorder<>();
        final Recorder<String> dead = new Recorder<>();
        final Recorder<Integer> deliveriesOfSlow = new Recorder<>();
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger failures = new AtomicInteger();

        @MailboxListener("orders")
        void on(Message<Order> message) throws InterruptedException {
            Order order = message.body();
            if (order.id().startsWith("slow")) {
                deliveriesOfSlow.add(message.deliveryCount());
                release.await(30, TimeUnit.SECONDS);
            }
            if (order.id().startsWith("bad") && message.deliveryCount() <= order.quantity()) {
                failures.incrementAndGet();
                throw new IllegalStateException("refused " + order.id() + " on delivery " + message.deliveryCount());
            }
            handled.add(message);
        }

        @MailboxListener("orders-dlq")
        void dead(Order order) {
            dead.add(order.id());
        }

        @MainLoopHandler("quotes")
        Integer quote(Order order) {
            if (order.quantity() < 0) {
                throw new IllegalArgumentException("negative quantity " + order.quantity());
            }
            return order.quantity() * 10;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Shop shop() {
            return new Shop();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues(
                        "mailbox.redis.uri=" + redis.uri(),
                        "mailbox.redis.key-prefix=t" + System.nanoTime() + ":",
                        "mailbox.default-backend=redis",
                        "mailbox.mailboxes.orders.visibility-timeout=1500ms",
                        "mailbox.mailboxes.orders.wait-time=2s",
                        "mailbox.mailboxes.orders.listener.concurrency=2",
                        "mailbox.mailboxes.orders.listener.backoff.initial=50ms",
                        "mailbox.mailboxes.orders.listener.backoff.max=200ms",
                        "mailbox.mailboxes.orders.redrive.max-receive-count=3",
                        "mailbox.mailboxes.orders.redrive.dead-letter=orders-dlq",
                        "mailbox.mailboxes.orders-dlq.wait-time=2s",
                        "mailbox.mailboxes.quotes.wait-time=2s",
                        "mailbox.listener.shutdown-grace=2s");
    }

    @SuppressWarnings("unchecked")
    private static Mailbox<Order> orders(org.springframework.context.ApplicationContext context) {
        return (Mailbox<Order>) context.getBeanProvider(ResolvableType.forClassWithGenerics(Mailbox.class, Order.class))
                .stream().filter(m -> ((Mailbox<?>) m).name().equals("orders")).findFirst().orElseThrow();
    }

    @Test
    void aMessageIsAcknowledgedWhenTheMethodReturns() {
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> orders = orders(context);
            orders.send(new Order("o-1", 1));
            orders.send(new Order("o-2", 2));
            List<Message<Order>> seen = shop.handled.awaitCount(2, Duration.ofSeconds(10));
            assertThat(seen).extracting(Message::body).containsExactlyInAnyOrder(new Order("o-1", 1), new Order("o-2", 2));
            assertThat(seen).extracting(Message::deliveryCount).containsOnly(1);
            awaitCount(orders, 0);
            assertThat(context.getBean(MeterRegistry.class).counter("mailbox.listener.messages", "mailbox", "orders",
                    "outcome", "acknowledged").count()).isEqualTo(2.0);
        });
    }

    @Test
    void aMethodThatThrowsHasItsMessageBackAfterTheBackoffAndThenDeadLettered() {
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> orders = orders(context);
            orders.send(new Order("bad-once", 1));   // fails delivery 1, succeeds on 2
            orders.send(new Order("bad-always", 99)); // fails 3 deliveries, then moves to orders-dlq
            assertThat(shop.handled.awaitCount(1, Duration.ofSeconds(10))).singleElement().satisfies(m -> {
                assertThat(m.body().id()).isEqualTo("bad-once");
                assertThat(m.deliveryCount()).isEqualTo(2);
            });
            assertThat(shop.dead.awaitCount(1, Duration.ofSeconds(15))).containsExactly("bad-always");
            assertThat(shop.failures.get()).isEqualTo(1 + 3);
            assertThat(shop.handled.all()).hasSize(1);
            awaitCount(orders, 0);
        });
    }

    @Test
    void anUndecodableBodyEndsAsADeadLetterInsteadOfBeingDropped() {
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            String prefix = context.getEnvironment().getProperty("mailbox.redis.key-prefix");
            try (JedisPooled jedis = new JedisPooled(redis.host(), redis.port());
                 RedisMailbox<String> raw = RedisMailbox.builder("orders", Codec.utf8()).client(jedis)
                         .keyPrefix(prefix).build()) {
                raw.send("{not json");
            }
            // three failed decodes, then the receive script moves the bytes to orders-dlq, whose listener cannot
            // decode them either: they stay there for a person to look at
            Mailbox<?> dlq = (Mailbox<?>) context.getBean("orders-dlq");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (dlq.approximateCount() == 0 && System.nanoTime() < until) {
                Thread.sleep(50); // polling a count in another process: nothing to wait on
            }
            assertThat(dlq.approximateCount()).isEqualTo(1);
            assertThat(orders(context).approximateCount()).isZero();
            assertThat(shop.handled.all()).isEmpty();
        });
    }

    @Test
    void aMessageStaysInvisibleWhileItsMethodRunsLongerThanTheVisibilityTimeout() {
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> orders = orders(context);
            orders.send(new Order("slow-1", 1));
            shop.deliveriesOfSlow.awaitCount(1, Duration.ofSeconds(10));
            // three visibility timeouts (1.5 s each) pass while the method runs; without the extension the
            // other worker would get the message again
            Thread.sleep(4_500);
            assertThat(shop.deliveriesOfSlow.all()).containsExactly(1);
            assertThat(orders.receive(ReceiveOptions.defaults())).isEmpty();
            shop.release.countDown();
            assertThat(shop.handled.awaitCount(1, Duration.ofSeconds(10))).extracting(m -> m.body().id())
                    .containsExactly("slow-1");
            awaitCount(orders, 0);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void aHandlerAnswersItsClient() {
        runner().run(context -> {
            MainLoopClient<Order, Integer> client = (MainLoopClient<Order, Integer>) context.getBeanProvider(
                    ResolvableType.forClassWithGenerics(MainLoopClient.class, Order.class, Integer.class)).getObject();
            assertThat(client.callAndWait(new Order("q-1", 4), Duration.ofSeconds(10))).isEqualTo(40);
            assertThatThrownBy(() -> client.callAndWait(new Order("q-2", -1), Duration.ofSeconds(10)))
                    .isInstanceOf(RequestFailedException.class).hasMessageContaining("negative quantity -1");
        });
    }

    static void awaitCount(Mailbox<?> mailbox, long count) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (mailbox.approximateCount() != count && System.nanoTime() < until) {
            Thread.sleep(20); // the acknowledgement rides on the worker's next receive
        }
        assertThat(mailbox.approximateCount()).isEqualTo(count);
    }
}
