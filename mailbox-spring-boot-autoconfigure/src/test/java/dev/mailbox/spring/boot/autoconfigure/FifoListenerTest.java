package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.SendOptions;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ResolvableType;

/**
 * A {@code @MailboxListener} on a FIFO mailbox with four workers taking up to ten messages a receive: every group's
 * messages are handled in send order and one at a time, also when the method fails for some of them (the rest of
 * that group's run goes back unhandled, so the group resumes at the failed message), on memory and on real Redis.
 */
@DisplayName("@MailboxListener on a FIFO mailbox keeps each group's order under concurrency 4")
class FifoListenerTest {

    private static final int GROUPS = 8;
    private static final int PER_GROUP = 30;

    static RedisServerProcess redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** Handles orders "group:seq"; fails every seventh one (seq 3, 10, 17, ...) on its first delivery. */
    static class Shop {
        final Recorder<Order> handled = new Recorder<>();
        final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final Map<String, Integer> workersSeen = new ConcurrentHashMap<>();

        @MailboxListener("orders")
        void on(Message<Order> message) throws InterruptedException {
            String group = message.groupId();
            AtomicInteger inGroup = running.computeIfAbsent(group, g -> new AtomicInteger());
            if (inGroup.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
            workersSeen.merge(Thread.currentThread().getName(), 1, Integer::sum);
            try {
                Thread.sleep(ThreadLocalRandom.current().nextInt(3)); // lets the workers interleave
                Order order = message.body();
                if (order.quantity() % 7 == 3 && message.deliveryCount() == 1) {
                    failures.incrementAndGet();
                    throw new IllegalStateException("refused " + order.id() + " on its first delivery");
                }
                handled.add(order);
            } finally {
                inGroup.decrementAndGet();
            }
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

    @SuppressWarnings("unchecked")
    private static Mailbox<Order> orders(org.springframework.context.ApplicationContext context) {
        return (Mailbox<Order>) context.getBeanProvider(ResolvableType.forClassWithGenerics(Mailbox.class, Order.class))
                .stream().filter(m -> ((Mailbox<?>) m).name().equals("orders")).findFirst().orElseThrow();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void eachGroupInOrderOneAtATime(String backend) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues(
                        "mailbox.redis.uri=" + redis.uri(),
                        "mailbox.redis.key-prefix=fifo" + System.nanoTime() + ":",
                        "mailbox.default-backend=" + backend,
                        "mailbox.mailboxes.orders.fifo=true",
                        "mailbox.mailboxes.orders.content-based-deduplication=true",
                        "mailbox.mailboxes.orders.visibility-timeout=5s",
                        "mailbox.mailboxes.orders.wait-time=1s",
                        "mailbox.mailboxes.orders.listener.concurrency=4",
                        "mailbox.mailboxes.orders.listener.max-messages=10",
                        "mailbox.mailboxes.orders.listener.backoff.initial=20ms",
                        "mailbox.mailboxes.orders.listener.backoff.max=50ms",
                        "mailbox.listener.shutdown-grace=2s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Shop shop = context.getBean(Shop.class);
                    Mailbox<Order> orders = orders(context);
                    assertThat(orders.capabilities().fifo()).as("a FIFO mailbox").isTrue();
                    for (int seq = 0; seq < PER_GROUP; seq++) {
                        for (int g = 0; g < GROUPS; g++) {
                            orders.send(new Order("g" + g + ":" + seq, seq),
                                    SendOptions.defaults().withGroupId("g" + g));
                        }
                    }
                    List<Order> all = shop.handled.await(seen -> seen.size() >= GROUPS * PER_GROUP,
                            Duration.ofSeconds(60), "every order handled");
                    Map<String, List<Integer>> byGroup = all.stream().collect(Collectors.groupingBy(
                            o -> o.id().substring(0, o.id().indexOf(':')), Collectors.mapping(Order::quantity,
                                    Collectors.toList())));
                    List<Integer> inOrder = new ArrayList<>();
                    for (int seq = 0; seq < PER_GROUP; seq++) {
                        inOrder.add(seq);
                    }
                    assertThat(byGroup).hasSize(GROUPS);
                    byGroup.forEach((group, seqs) -> assertThat(seqs).as("group %s", group).isEqualTo(inOrder));
                    assertThat(shop.overlaps.get()).as("two messages of one group handled at once").isZero();
                    // every group's seq 3 fails once; a later failing one may first come back unhandled with its
                    // group's failed message, and then it is on its second delivery and goes through
                    assertThat(shop.failures.get()).as("first deliveries refused").isBetween(GROUPS,
                            GROUPS * (int) inOrder.stream().filter(seq -> seq % 7 == 3).count());
                    assertThat(shop.workersSeen).as("the work spread over the workers").hasSizeGreaterThan(1);
                });
    }
}
