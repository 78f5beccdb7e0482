package dev.mailbox.mainloop;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** The loop's meters, looked up once per tag value. */
final class LoopMetrics {

    private final MeterRegistry registry;
    private final String mailbox;
    private final ConcurrentHashMap<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> failures = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> replyFailures = new ConcurrentHashMap<>();
    private final Timer handlerTime;
    private final Timer queueWait;

    LoopMetrics(MeterRegistry registry, String mailbox) {
        this.registry = registry;
        this.mailbox = mailbox;
        this.handlerTime = Timer.builder("mainloop.handler.time").description("time spent in the handler")
                .tag("mailbox", mailbox).register(registry);
        this.queueWait = Timer.builder("mainloop.queue.wait")
                .description("time from a request's enqueue to its receipt").tag("mailbox", mailbox).register(registry);
    }

    void outcome(String outcome) {
        outcomes.computeIfAbsent(outcome, o -> Counter.builder("mainloop.requests")
                .description("requests taken, by how they ended").tag("mailbox", mailbox).tag("outcome", o)
                .register(registry)).increment();
    }

    /** A delivery whose result could not be sent: given back to be answered again, or given up. */
    void replyFailed(String then) {
        replyFailures.computeIfAbsent(then, t -> Counter.builder("mainloop.replies.failed")
                .description("deliveries whose result could not be sent, by what became of the request")
                .tag("mailbox", mailbox).tag("then", t).register(registry)).increment();
    }

    void failure(Throwable error) {
        failures.computeIfAbsent(error.getClass().getName(), t -> Counter.builder("mainloop.failures")
                .description("handler exceptions").tag("mailbox", mailbox).tag("type", t)
                .register(registry)).increment();
    }

    void handlerTime(long nanos) {
        handlerTime.record(nanos, TimeUnit.NANOSECONDS);
    }

    void queueWait(Duration wait) {
        if (!wait.isNegative()) {
            queueWait.record(wait);
        }
    }
}
