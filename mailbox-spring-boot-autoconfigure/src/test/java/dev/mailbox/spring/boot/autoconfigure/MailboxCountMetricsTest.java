package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.ForwardingMailbox;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The mailbox.messages gauge: the count, taken in the background at most once per interval. */
class MailboxCountMetricsTest {

    /** Counts the counts, each of which waits for a permit. */
    static final class Counting extends ForwardingMailbox<String> {
        final AtomicInteger counts = new AtomicInteger();
        final Semaphore permits = new Semaphore(Integer.MAX_VALUE);
        final Semaphore counted = new Semaphore(0);

        Counting(Mailbox<String> delegate) {
            super(delegate);
        }

        @Override
        public long approximateCount() {
            counts.incrementAndGet();
            permits.acquireUninterruptibly();
            try {
                return delegate.approximateCount();
            } finally {
                counted.release();
            }
        }

        @Override
        public Mailbox<String> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }
    }

    private static Gauge bind(Counting mailbox, Duration interval, MeterRegistry registry) {
        MailboxCountMetrics metrics = new MailboxCountMetrics(List.of(new MailboxCountMetrics.Counted("orders",
                "memory", () -> mailbox)), interval);
        metrics.bindTo(registry);
        return registry.get("mailbox.messages").tag("mailbox", "orders").tag("backend", "memory").gauge();
    }

    private static double awaitValue(DoubleSupplier gauge, double expected) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        double v = gauge.getAsDouble();
        while (v != expected && System.nanoTime() < until) {
            Thread.sleep(5); // the count is taken on the binder's thread
            v = gauge.getAsDouble();
        }
        return v;
    }

    @Test
    void scrapesReadTheLastCountAndAskTheBackendAtMostOncePerInterval() throws Exception {
        Counting orders = new Counting(InMemoryMailbox.builder("orders", Codec.utf8()).build());
        orders.send("a");
        orders.send("b");
        orders.permits.drainPermits();
        Gauge gauge = bind(orders, Duration.ofHours(1), new SimpleMeterRegistry());
        assertThat(gauge.value()).as("nothing counted yet").isNaN();
        orders.permits.release(Integer.MAX_VALUE);
        assertThat(orders.counted.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
        assertThat(awaitValue(gauge::value, 2)).isEqualTo(2);
        orders.send("c");
        for (int i = 0; i < 1_000; i++) {
            assertThat(gauge.value()).as("the count of the last hour").isEqualTo(2);
        }
        assertThat(orders.counts.get()).isEqualTo(1);
    }

    @Test
    void anOldCountIsTakenAgain() throws Exception {
        Counting orders = new Counting(InMemoryMailbox.builder("orders", Codec.utf8()).build());
        Gauge gauge = bind(orders, Duration.ofMillis(20), new SimpleMeterRegistry());
        assertThat(awaitValue(gauge::value, 0)).isZero();
        orders.send("a");
        assertThat(awaitValue(gauge::value, 1)).isEqualTo(1);
    }

    @Test
    void aSlowBackendNeverHoldsUpAScrape() throws Exception {
        Counting orders = new Counting(InMemoryMailbox.builder("orders", Codec.utf8()).build());
        orders.permits.drainPermits(); // every count waits
        Gauge gauge = bind(orders, Duration.ofMillis(1), new SimpleMeterRegistry());
        long start = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            assertThat(gauge.value()).isNaN();
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (orders.counts.get() == 0 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertThat(orders.counts.get()).as("one count under way, none queued behind it").isEqualTo(1);
        orders.permits.release(Integer.MAX_VALUE);
        assertThat(awaitValue(gauge::value, 0)).isZero();
    }

    @Test
    void theGaugeIsBoundToTheApplicationsRegistry() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        MailboxAutoConfiguration.class))
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory",
                        "mailbox.mailboxes.orders.type=java.lang.String", "mailbox.mailboxes.orders.codec=utf8",
                        "mailbox.mailboxes.orders.redrive.max-receive-count=3",
                        "mailbox.mailboxes.orders.redrive.dead-letter=orders-dlq",
                        "mailbox.metrics.count-interval=10ms")
                .run(context -> {
                    @SuppressWarnings("unchecked")
                    Mailbox<String> orders = (Mailbox<String>) context.getBean("orders");
                    orders.send("a");
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    Gauge gauge = registry.get("mailbox.messages").tag("mailbox", "orders").gauge();
                    assertThat(awaitValue(gauge::value, 1)).isEqualTo(1);
                    assertThat(registry.get("mailbox.messages").tag("mailbox", "orders-dlq").tag("backend", "memory")
                            .gauge()).isNotNull();
                });
    }
}
