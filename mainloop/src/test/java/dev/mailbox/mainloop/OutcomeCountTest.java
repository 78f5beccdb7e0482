package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.TimeSource;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.FaultInjectingMailbox;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class OutcomeCountTest {

    /** Whether a worker waits in Task.answerAfter: a copy of a request waiting for the first to finish. */
    static boolean copyWaiting() {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(e -> java.util.Arrays.stream(e.getValue())
                .anyMatch(f -> f.getClassName().equals(Task.class.getName()) && f.getMethodName().equals("answerAfter")));
    }

    static Map<String, Double> outcomes(SimpleMeterRegistry registry) {
        Map<String, Double> out = new TreeMap<>();
        for (Counter c : registry.find("mainloop.requests").counters()) {
            out.put(c.getId().getTag("outcome"), c.count());
        }
        return out;
    }

    /**
     * A duplicate delivery waiting for the first copy, both handed back at shutdown: each delivery taken
     * should end with one outcome. The waiting copy is counted "duplicate" and then "abandoned".
     */
    @Test
    void abandonedDuplicateIsCountedOnce() throws Exception {
        Mailbox<MainLoopRequest<Order>> real = InMemoryMailbox.builder("rv-m-dup", Shop.REQUESTS).build();
        FaultInjectingMailbox<MainLoopRequest<Order>> requests = FaultInjectingMailbox.wrap(real).duplicateNextDelivery();
        Mailbox<MainLoopResult<Quote>> replies = InMemoryMailbox.builder("rv-m-dup-replies", Shop.RESULTS).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CountDownLatch started = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> {
            started.countDown();
            try {
                Thread.sleep(600_000); // interrupted at shutdown
            } catch (InterruptedException e) {
                // takes a moment to stop, so the shutdown gives up the waiting copy before this one ends
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                throw e;
            }
            return Shop.price(r.body());
        }).responses(replies).concurrency(2).waitTime(Duration.ofMillis(200))
                .visibilityTimeout(Duration.ofMinutes(5)).meterRegistry(registry).build();
        real.send(MainLoopRequest.of(new Order("fig", 1)));
        AtomicLong taken = new AtomicLong();
        Thread runner = new Thread(() -> taken.set(loop.run()), "rv-m-run");
        runner.start();
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!copyWaiting() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(copyWaiting()).as("the second copy waits for the first").isTrue();

        assertThat(loop.shutdown(Duration.ZERO)).isTrue();
        runner.join(10_000);

        Map<String, Double> outcomes = outcomes(registry);
        double sum = outcomes.values().stream().mapToDouble(Double::doubleValue).sum();
        System.out.println("DUP outcomes " + outcomes + " taken " + taken.get());
        assertThat(taken.get()).as("deliveries taken").isEqualTo(2);
        assertThat(sum).as("outcomes counted for 2 deliveries: %s", outcomes).isEqualTo(2.0);
    }

    /**
     * The handler returns, and the shutdown hands the request back before the task commits to answering:
     * no result is sent, yet the request is counted "success" as well as "abandoned".
     */
    @Test
    void requestHandedBackIsNotCountedAsSuccess() throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-m-succ", Shop.REQUESTS).build();
        Mailbox<MainLoopResult<Quote>> replies = InMemoryMailbox.builder("rv-m-succ-replies", Shop.RESULTS).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ThreadLocal<Boolean> handlerReturned = ThreadLocal.withInitial(() -> false);
        CountDownLatch inClock = new CountDownLatch(1);
        CountDownLatch handedBack = new CountDownLatch(1);
        // the loop reads the clock right after the handler returns: hold that thread there until the shutdown
        // has handed the request back
        TimeSource clock = new TimeSource() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public Instant now() {
                if (handlerReturned.get()) {
                    handlerReturned.set(false);
                    inClock.countDown();
                    try {
                        handedBack.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return Instant.now();
            }
        };
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> {
            handlerReturned.set(true);
            return Shop.price(r.body());
        }).responses(replies).waitTime(Duration.ofMillis(200)).visibilityTimeout(Duration.ofMinutes(5))
                .timeSource(clock).meterRegistry(registry).build();
        requests.send(MainLoopRequest.of(new Order("fig", 1)));
        AtomicLong taken = new AtomicLong();
        Thread runner = new Thread(() -> taken.set(loop.run()), "rv-m-run2");
        runner.start();
        assertThat(inClock.await(30, TimeUnit.SECONDS)).isTrue();

        Thread shutdown = new Thread(() -> loop.shutdown(Duration.ZERO));
        shutdown.start();
        // the shutdown hands the request back (nack): it is visible again at once
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (outcomes(registry).getOrDefault("abandoned", 0.0) < 1 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        handedBack.countDown();
        shutdown.join(30_000);
        runner.join(10_000);

        Map<String, Double> outcomes = outcomes(registry);
        assertThat(replies.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(500))))
                .as("no result was sent").isEmpty();
        assertThat(taken.get()).isEqualTo(1);
        assertThat(outcomes).as("one delivery, handed back unanswered").isEqualTo(Map.of("abandoned", 1.0));
    }
}
