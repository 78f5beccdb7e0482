package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.RequestFailedException;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
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
import redis.clients.jedis.JedisPooled;

/**
 * {@code backend: node}: the mailboxes are RemoteMailboxes through a mailbox node of a coordinator cluster,
 * which keeps them on a shared Redis (as {@code mailboxctl node start --backend redis://...} does). A listener
 * acknowledges, nacks with backoff and keeps a long message invisible; a handler answers its client, whose
 * response mailbox is on the node too.
 */
class NodeBackendTest {

    static RedisServerProcess redis;
    static JedisPooled jedis;
    static TestingCluster cluster;
    static CoordinationClient coordinator;
    static MailboxNode node;
    static final String PREFIX = "n" + System.nanoTime() + ":";

    @BeforeAll
    static void start() {
        redis = RedisServerProcess.start();
        jedis = new JedisPooled(redis.host(), redis.port());
        cluster = TestingCluster.start(1);
        cluster.awaitLeader(Duration.ofSeconds(30));
        coordinator = cluster.client();
        node = MailboxNode.builder("node-a").coordinator(coordinator).backend(new MailboxBackend() {
            @Override
            public Mailbox<byte[]> open(String mailboxId) {
                return RedisMailbox.builder(mailboxId, Codec.bytes()).client(jedis).keyPrefix(PREFIX).build();
            }

            @Override
            public boolean shared() {
                return true;
            }
        }).start();
    }

    @AfterAll
    static void stop() {
        node.close();
        cluster.close();
        jedis.close();
        redis.close();
    }

    /** Fails "bad" orders' first {@code quantity} deliveries; "slow" ones wait until released. */
    static class Shop {
        final Recorder<Message<Order>> handled = new Recorder<>();
        final AtomicInteger failures = new AtomicInteger();
        final Recorder<Integer> deliveriesOfSlow = new Recorder<>();
        final CountDownLatch release = new CountDownLatch(1);

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
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues("mailbox.default-backend=node", "mailbox.node.addresses=" + node.address(),
                        "mailbox.mailboxes.orders.visibility-timeout=1500ms",
                        "mailbox.mailboxes.orders.wait-time=1s",
                        "mailbox.mailboxes.orders.listener.concurrency=2",
                        "mailbox.mailboxes.orders.listener.backoff.initial=100ms",
                        "mailbox.mailboxes.orders.listener.backoff.max=100ms",
                        "mailbox.mailboxes.quotes.wait-time=1s",
                        "mailbox.listener.shutdown-grace=2s");
    }

    @SuppressWarnings("unchecked")
    private static Mailbox<Order> orders(org.springframework.context.ApplicationContext context) {
        return (Mailbox<Order>) context.getBean("orders");
    }

    @Test
    void aListenerAcknowledgesAndNacksThroughTheNode() {
        // put straight into the node's Redis: the listener gets it through the node
        try (RedisMailbox<Order> direct = RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(jedis)
                .keyPrefix(PREFIX).build()) {
            direct.send(new Order("o-0", 1));
        }
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> orders = orders(context);
            assertThat(orders).isInstanceOf(RemoteMailbox.class);
            orders.send(new Order("o-1", 1));
            orders.send(new Order("bad-once", 1)); // fails delivery 1, succeeds on 2
            assertThat(shop.handled.awaitCount(3, Duration.ofSeconds(20))).extracting(m -> m.body().id() + "#"
                    + m.deliveryCount()).containsExactlyInAnyOrder("o-0#1", "o-1#1", "bad-once#2");
            assertThat(shop.failures.get()).isEqualTo(1);
            ListenerOnRedisTest.awaitCount(orders, 0);
        });
    }

    @Test
    void aMessageStaysInvisibleThroughTheNodeWhileItsMethodRuns() {
        runner().run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> orders = orders(context);
            orders.send(new Order("slow-1", 1));
            shop.deliveriesOfSlow.awaitCount(1, Duration.ofSeconds(20));
            // three visibility timeouts pass; without the extension the other worker would get it again
            Thread.sleep(4_500);
            assertThat(shop.deliveriesOfSlow.all()).containsExactly(1);
            shop.release.countDown();
            assertThat(shop.handled.awaitCount(1, Duration.ofSeconds(20))).extracting(m -> m.body().id())
                    .containsExactly("slow-1");
            ListenerOnRedisTest.awaitCount(orders, 0);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void aHandlerAnswersItsClientThroughTheNode() {
        runner().run(context -> {
            MainLoopClient<Order, Integer> client = (MainLoopClient<Order, Integer>) context.getBean("quotesClient");
            assertThat(client.callAndWait(new Order("q-1", 4), Duration.ofSeconds(20))).isEqualTo(40);
            assertThatThrownBy(() -> client.callAndWait(new Order("q-2", -1), Duration.ofSeconds(20)))
                    .isInstanceOf(RequestFailedException.class).hasMessageContaining("negative quantity -1");
        });
    }
}
