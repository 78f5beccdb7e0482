package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.Threads;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StopAndShutdownTest {

    /** shutdown(grace) while run(n) waits for its last handler: the grace must be kept. */
    @ParameterizedTest(name = "receiveBatch {0}")
    @ValueSource(ints = {10, 1})
    void shutdownDuringRunNFinalDrainKeepsItsGrace(int batch) throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-drain-" + batch, Shop.REQUESTS).build();
        Mailbox<MainLoopResult<Quote>> replies = InMemoryMailbox.builder("rv-drain-replies-" + batch, Shop.RESULTS).build();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, sleepsUntilInterrupted(started, interrupted)).responses(replies).concurrency(2).receiveBatch(batch).waitTime(Duration.ofSeconds(1))
                .visibilityTimeout(Duration.ofMinutes(5)).shutdownGrace(Duration.ofSeconds(60)).build();
        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("fig", 1));
        requests.send(request);
        Thread runner = new Thread(() -> loop.run(1), "rv-run");
        runner.setDaemon(true);
        runner.start();
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        // run(1)'s one receive is made: the run now only waits for its handler (drains, or with every worker
        // receiving, waits for the workers)
        Threads.awaitParkedIn(runner, f -> f.getClassName().equals(Run.class.getName())
                && (f.getMethodName().equals("drain") || f.getMethodName().equals("loopOnWorkers")), Duration.ofSeconds(10));

        long t0 = System.nanoTime();
        boolean stopped = loop.shutdown(Duration.ofMillis(200));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(stopped).as("shutdown(200 ms) returned true (took %d ms)", tookMs).isTrue();
        assertThat(interrupted).as("the handler past the grace was interrupted").isTrue();
        runner.join(5_000);
        assertThat(runner.isAlive()).as("run(1) returned").isFalse();
        List<Message<MainLoopRequest<Order>>> back = requests.receive(ReceiveOptions.defaults()
                .withWaitTime(Duration.ofSeconds(2)));
        assertThat(back).as("the unfinished request was handed back").hasSize(1);
    }

    /** stop() first (default grace 60 s), then shutdown(ZERO): the shorter grace must apply. */
    @Test
    void shutdownAfterStopUsesItsOwnGrace() throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-stop", Shop.REQUESTS).build();
        Mailbox<MainLoopResult<Quote>> replies = InMemoryMailbox.builder("rv-stop-replies", Shop.RESULTS).build();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, sleepsUntilInterrupted(started, interrupted)).responses(replies).waitTime(Duration.ofSeconds(1))
                .visibilityTimeout(Duration.ofMinutes(5)).shutdownGrace(Duration.ofSeconds(60)).build();
        requests.send(MainLoopRequest.of(new Order("fig", 1)));
        Thread runner = new Thread(loop::run, "rv-run2");
        runner.setDaemon(true);
        runner.start();
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        loop.stop();
        long t0 = System.nanoTime();
        boolean stopped = loop.shutdown(Duration.ZERO);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(stopped).as("shutdown(ZERO) after stop() returned true (took %d ms)", tookMs).isTrue();
        assertThat(interrupted).isTrue();
    }

    /**
     * A supervisor runs the loop again as soon as run() returns. shutdown() stops the run it found and
     * that run returns at once; shutdown must not then wait for (and report false because of) the next run.
     */
    @Test
    void shutdownDoesNotWaitForTheNextRun() throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-restart", Shop.REQUESTS).build();
        Mailbox<MainLoopResult<Quote>> replies = InMemoryMailbox.builder("rv-restart-replies", Shop.RESULTS).build();
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> Shop.price(r.body()))
                .responses(replies).waitTime(Duration.ofMillis(100)).build();
        AtomicBoolean done = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        Thread supervisor = new Thread(() -> {
            while (!done.get()) {
                runs.incrementAndGet();
                loop.run();
            }
        }, "rv-supervisor");
        supervisor.setDaemon(true);
        supervisor.start();
        try {
            for (int i = 0; i < 10; i++) {
                Thread.sleep(100); // the supervisor has run the loop again
                long t0 = System.nanoTime();
                boolean stopped = loop.shutdown(Duration.ZERO);
                long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(stopped).as("shutdown #%d returned true (took %d ms)", i, tookMs).isTrue();
                assertThat(tookMs).as("shutdown #%d took", i).isLessThan(2_000);
            }
        } finally {
            done.set(true);
            loop.close();
        }
    }

    /** A handler that notes it started, then sleeps until interrupted, and notes that too. */
    private static RequestHandler<Order, Quote> sleepsUntilInterrupted(CountDownLatch started, AtomicBoolean interrupted) {
        return r -> {
            started.countDown();
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
            return Shop.price(r.body());
        };
    }
}
