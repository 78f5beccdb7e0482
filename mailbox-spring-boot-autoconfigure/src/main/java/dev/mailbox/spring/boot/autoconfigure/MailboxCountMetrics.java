package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;

/**
 * The {@code mailbox.messages} gauge, one per declared mailbox (tags {@code mailbox}, {@code backend}): its
 * {@code approximateCount()}, messages not yet deleted. Counting can cost a backend call (on SQS a
 * GetQueueAttributes), so a scrape never counts: it reads the last count, and when that is older than the
 * interval it has a new one taken on a thread of this binder's own, at most one at a time per mailbox. A scrape
 * never waits for a backend, and a backend is asked at most once per interval however often it is scraped.
 * The gauge is NaN until the first count, and while counting fails.
 */
final class MailboxCountMetrics implements MeterBinder, DisposableBean {

    private static final Logger LOG = LoggerFactory.getLogger(MailboxCountMetrics.class);

    /**
     * One mailbox to count.
     *
     * @param name    its name
     * @param backend its backend, for the tag
     * @param mailbox how to get it (the bean), when first counted
     */
    record Counted(String name, String backend, Supplier<Mailbox<?>> mailbox) {
    }

    private final List<Sample> samples = new ArrayList<>();
    private final long intervalNanos;
    private final ExecutorService counter;

    MailboxCountMetrics(List<Counted> mailboxes, Duration interval) {
        this.intervalNanos = interval.toNanos();
        // one thread, and at most one waiting count per mailbox (see Sample.read): a slow backend holds up only
        // the counts, never a scrape
        ThreadPoolExecutor t = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread thread = new Thread(r, "mailbox-count");
            thread.setDaemon(true);
            return thread;
        });
        t.allowCoreThreadTimeOut(true);
        this.counter = t;
        mailboxes.forEach(c -> samples.add(new Sample(c)));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (Sample s : samples) {
            Gauge.builder("mailbox.messages", s, Sample::read)
                    .description("messages not yet deleted (queued, delayed, in flight), counted at most once per"
                            + " mailbox.metrics.count-interval")
                    .baseUnit("messages")
                    .tag("mailbox", s.counted.name()).tag("backend", s.counted.backend())
                    .strongReference(true)
                    .register(registry);
        }
    }

    @Override
    public void destroy() {
        counter.shutdownNow();
    }

    private final class Sample {
        final Counted counted;
        private final AtomicBoolean counting = new AtomicBoolean();
        private volatile double value = Double.NaN;
        private volatile long countedAt;
        private volatile boolean ever;

        Sample(Counted counted) {
            this.counted = counted;
        }

        double read() {
            long now = System.nanoTime();
            if ((!ever || now - countedAt >= intervalNanos) && counting.compareAndSet(false, true)) {
                try {
                    counter.execute(this::count);
                } catch (RuntimeException closed) {
                    counting.set(false); // shut down with the context
                }
            }
            return value;
        }

        private void count() {
            try {
                value = counted.mailbox().get().approximateCount();
            } catch (RuntimeException e) {
                value = Double.NaN; // a stale count would look like a good one
                LOG.debug("counting mailbox '{}' failed: {}", counted.name(), e.toString());
            } finally {
                countedAt = System.nanoTime();
                ever = true;
                counting.set(false);
            }
        }
    }
}
