package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Closing the context ends every thread the mailboxes, listeners, handlers, clients and meters started. */
class ThreadsAfterCloseTest {

    static class Shop {
        final Recorder<String> handled = new Recorder<>();

        @MailboxListener(value = "orders", concurrency = "3")
        void on(Order order) {
            handled.add(order.id());
        }

        @MainLoopHandler(value = "quotes", concurrency = "2")
        Integer quote(Order order) {
            return order.quantity();
        }
    }

    /** Threads of ours; the JVM-wide ones (MainLoopClient's timeout timer, pools shared by every mailbox) excluded. */
    private static List<String> ours(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).filter(t -> !before.contains(t))
                .map(Thread::getName)
                .filter(n -> n.startsWith("mailbox-") || n.startsWith("mainloop-"))
                .filter(n -> !n.startsWith("mainloop-client-timeout") && !n.equals("mainloop-client-timed-out"))
                .sorted().toList();
    }

    @Test
    @SuppressWarnings("unchecked")
    void nothingOfOursRunsAfterTheContextCloses() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                            CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                            MailboxAutoConfiguration.class))
                    .withBean(Shop.class)
                    .withPropertyValues("mailbox.redis.uri=" + redis.uri(), "mailbox.default-backend=redis",
                            "mailbox.mailboxes.orders.wait-time=1s", "mailbox.mailboxes.quotes.wait-time=1s",
                            "mailbox.mailboxes.audit.backend=memory", "mailbox.mailboxes.audit.type=java.lang.String",
                            "mailbox.mailboxes.audit.codec=utf8", "mailbox.metrics.count-interval=10ms")
                    .run(context -> {
                        ((Mailbox<Order>) context.getBean("orders")).send(new Order("o-1", 1));
                        context.getBean(Shop.class).handled.awaitCount(1, Duration.ofSeconds(10));
                        MainLoopClient<Order, Integer> client =
                                (MainLoopClient<Order, Integer>) context.getBean("quotesClient");
                        assertThat(client.callAndWait(new Order("q-1", 7), Duration.ofSeconds(10))).isEqualTo(7);
                        context.getBean(MeterRegistry.class).get("mailbox.messages").gauges()
                                .forEach(g -> g.value());
                        assertThat(ours(before)).isNotEmpty();
                    });
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!ours(before).isEmpty() && System.nanoTime() < until) {
                Thread.sleep(20); // threads end just after close returns
            }
            assertThat(ours(before)).isEmpty();
        }
    }
}
