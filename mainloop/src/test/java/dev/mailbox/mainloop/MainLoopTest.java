package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.FaultInjectingMailbox;
import dev.mailbox.testkit.ForwardingMailbox;
import dev.mailbox.testkit.ManualClock;
import dev.mailbox.testkit.Threads;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** MainLoop and MainLoopClient details that do not depend on the backend, on in-memory mailboxes. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MainLoopTest {

    private static InMemoryMailbox<MainLoopRequest<Order>> requests() {
        return InMemoryMailbox.builder("requests", Shop.REQUESTS).build();
    }

    @Test
    @DisplayName("as users test a runner: CollectingMailbox records the result of one iteration")
    void withCollectingMailbox() {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(responses).waitTime(Duration.ZERO).build();

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("cherry", 8));
        requests.send(request);
        assertThat(loop.run(1)).isEqualTo(1);

        assertThat(responses.sentCount()).isEqualTo(1);
        MainLoopResult<Quote> result = responses.lastBody();
        assertThat(result.requestId()).isEqualTo(request.requestId());
        assertThat(result.ok()).isTrue();
        assertThat(result.response()).isEqualTo(new Quote("cherry", 8, 1000));
        assertThat(requests.approximateCount()).isZero();
    }

    @Test
    @DisplayName("answering requests wakes no common-pool thread: the memory of completed requests is kept up on the "
            + "worker, even while it evicts at every request")
    void completedMemoryUpkeepOnTheWorker() {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(responses).waitTime(Duration.ZERO).rememberCompleted(50, Duration.ofMinutes(1)).build();
        int n = 1_000;
        for (int i = 0; i < n; i++) {
            requests.send(MainLoopRequest.of(new Order("cherry", 1)));
        }
        // every task the common pool runs for a submitter counts as a steal; its upkeep scheduled there (the
        // cache's default) cost a thread wake-up per request, about a tenth of a call's context switches in the
        // peer harness
        long before = java.util.concurrent.ForkJoinPool.commonPool().getStealCount();
        assertThat(loop.run(n)).isEqualTo(n);
        long ran = java.util.concurrent.ForkJoinPool.commonPool().getStealCount() - before;
        assertThat(responses.sentCount()).isEqualTo(n);
        assertThat(ran).as("common-pool tasks run while %d requests were answered", n).isLessThan(n / 20);
    }

    @Test
    @DisplayName("envelopes survive JSON both ways, with and without optional fields")
    void envelopesRoundTrip() {
        MainLoopRequest<Order> full = MainLoopRequest.of(new Order("x", 1)).withDeadline(Instant.parse("2030-01-01T00:00:00Z"))
                .withBudget(Duration.ofSeconds(3)).withReplyTo("replies");
        MainLoopRequest<Order> bare = MainLoopRequest.of(new Order("y", 2));
        for (MainLoopRequest<Order> r : List.of(full, bare)) {
            assertThat(Shop.REQUESTS.decode(Shop.REQUESTS.encode(r))).isEqualTo(r);
        }
        MainLoopResult<Quote> ok = MainLoopResult.success("id", new Quote("x", 1, 125), Instant.now());
        MainLoopResult<Quote> failed = MainLoopResult.failure("id", new MainLoopError("t", "m"), Instant.now());
        for (MainLoopResult<Quote> r : List.of(ok, failed)) {
            assertThat(Shop.RESULTS.decode(Shop.RESULTS.encode(r))).isEqualTo(r);
        }
        assertThat(new String(Shop.RESULTS.encode(ok), StandardCharsets.UTF_8)).doesNotContain("ok\"");
        DeadLetter<Order> letter = new DeadLetter<>("m", "requests", null, new byte[] {1, 2, 3}, 2,
                new MainLoopError("t", "m"), Instant.now());
        DeadLetter<Order> back = Shop.DEAD_LETTERS.decode(Shop.DEAD_LETTERS.encode(letter));
        assertThat(back.rawBody()).containsExactly(1, 2, 3);
        assertThat(back.error()).isEqualTo(letter.error());
    }

    @Test
    @DisplayName("bad arguments are refused with messages that name them")
    void validation() {
        var requests = requests();
        assertThatThrownBy(() -> MainLoop.builder(requests, RequestHandler.ofBody(Shop::price)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("responses(...) or replyTo(...)");
        var builder = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price));
        assertThatThrownBy(() -> builder.concurrency(0)).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> builder.receiveBatch(11)).hasMessageContaining("receiveBatch");
        assertThatThrownBy(() -> builder.visibilityTimeout(Duration.ZERO)).hasMessageContaining("visibilityTimeout");
        assertThatThrownBy(() -> builder.rememberCompleted(-1, Duration.ofMinutes(1))).hasMessageContaining("maxEntries");
        assertThatThrownBy(() -> RetryPolicy.defaults().withMaxDeliveries(0)).hasMessageContaining("maxDeliveries");
        assertThatThrownBy(() -> RetryPolicy.defaults().withBackoff(Duration.ofSeconds(2), 2, Duration.ofSeconds(1)))
                .hasMessageContaining("longer than the max");
        assertThatThrownBy(() -> RetryPolicy.defaults().withBackoff(Duration.ZERO, 0.5, Duration.ZERO))
                .hasMessageContaining("multiplier");
        assertThatThrownBy(() -> MainLoopRequest.of(new Order("x", 1)).withRequestId(" ")).hasMessageContaining("requestId");
        assertThatThrownBy(() -> MainLoopRequest.of(new Order("x", 1)).withBudget(Duration.ZERO)).hasMessageContaining("budget");
        assertThatThrownBy(() -> new MainLoopResult<>("id", "r", new MainLoopError("t", ""), Instant.now()))
                .hasMessageContaining("not both");
        MainLoop<Order, Quote> loop = builder.responses(new CollectingMailbox<>("r")).build();
        assertThatThrownBy(() -> loop.run(0)).hasMessageContaining("maxIterations");
        loop.close();
        assertThatThrownBy(loop::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    @DisplayName("backoff grows by the multiplier from the first failed delivery and stops at the max")
    void backoff() {
        RetryPolicy p = RetryPolicy.defaults().withBackoff(Duration.ofMillis(100), 3, Duration.ofSeconds(2));
        assertThat(List.of(p.backoff(1), p.backoff(2), p.backoff(3), p.backoff(4), p.backoff(50)))
                .containsExactly(Duration.ofMillis(100), Duration.ofMillis(300), Duration.ofMillis(900),
                        Duration.ofSeconds(2), Duration.ofSeconds(2));
        RetryPolicy fine = RetryPolicy.defaults().withBackoff(Duration.ofNanos(400_000), 2.5, Duration.ofSeconds(1));
        assertThat(List.of(fine.backoff(1), fine.backoff(2), fine.backoff(3)))
                .as("a sub-millisecond backoff is kept, not truncated to 0")
                .containsExactly(Duration.ofNanos(400_000), Duration.ofMillis(1), Duration.ofNanos(2_500_000));
        assertThat(RetryPolicy.defaults().isRetryable(new MailboxUnavailableException("x", true, null))).isTrue();
        assertThat(RetryPolicy.defaults().isRetryable(new IllegalStateException())).isFalse();
        assertThat(RetryPolicy.never().isRetryable(new MailboxUnavailableException("x", true, null))).isFalse();
    }

    @Test
    @DisplayName("a retryable failure nacks the request for the policy's backoff: it stays, invisible, until then")
    void retryBackoffThroughNack() {
        ManualClock clock = new ManualClock();
        var requests = InMemoryMailbox.builder("requests", Shop.REQUESTS).timeSource(clock).build();
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> {
            calls.incrementAndGet();
            throw new MailboxUnavailableException("try later", true, null);
        }).responses(new CollectingMailbox<>("r")).waitTime(Duration.ZERO)
                .retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ofMinutes(10), 2, Duration.ofHours(1))).build();
        requests.send(MainLoopRequest.of(new Order("later", 1)));
        assertThat(loop.run(1)).isEqualTo(1);
        assertThat(calls).hasValue(1);
        assertThat(requests.approximateCount()).as("kept").isEqualTo(1);
        clock.advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(requests.receive()).as("invisible during the backoff").isEmpty();
        clock.advance(Duration.ofMillis(1));
        assertThat(requests.receive()).singleElement().satisfies(m -> assertThat(m.deliveryCount()).isEqualTo(2));
        loop.close();
    }

    @Test
    @DisplayName("a loop runs on one thread at a time; run(n) returns after n receives and the work they brought")
    void oneRunAtATime() throws Exception {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            inHandler.countDown();
            release.await();
            return Shop.price(r.body());
        }).responses(responses).waitTime(Duration.ofSeconds(5)).build();
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        CompletableFuture<Long> first = CompletableFuture.supplyAsync(() -> loop.run(1));
        assertThat(inHandler.await(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> loop.run(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already running");
        assertThat(first).isNotDone(); // run(1) waits for the request it took
        release.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(responses.sentCount()).isEqualTo(1);
        loop.close();
    }

    @Test
    @DisplayName("at concurrency 1 the one worker receives and runs each handler itself: no hand-off, never on run()'s thread")
    void workerReceivesAtConcurrencyOne() {
        List<Thread> receivers = new CopyOnWriteArrayList<>();
        var requests = onReceive(requests(), call -> {
            receivers.add(Thread.currentThread());
            return call.get();
        });
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        List<Thread> handlers = new CopyOnWriteArrayList<>();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            handlers.add(Thread.currentThread());
            return Shop.price(r.body());
        }).responses(responses).waitTime(Duration.ZERO).build();
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        requests.send(MainLoopRequest.of(new Order("b", 2)));

        assertThat(loop.run(2)).isEqualTo(2);

        assertThat(handlers).hasSize(2).doesNotContain(Thread.currentThread());
        assertThat(receivers).hasSize(2).containsOnly(handlers.get(0));
        assertThat(handlers).containsOnly(handlers.get(0));
        assertThat(responses.sentCount()).isEqualTo(2);
        assertThat(requests.approximateCount()).as("both acknowledged before run returned").isZero();
        loop.close();
    }

    @Test
    @DisplayName("with receiveBatch(1) every worker receives for itself and runs what it received, several at once")
    void workersReceiveWithBatchOne() {
        Map<String, Thread> receivedOn = new ConcurrentHashMap<>();
        var requests = onReceive(requests(), call -> {
            List<Message<MainLoopRequest<Order>>> got = call.get();
            got.forEach(m -> receivedOn.put(m.body().requestId(), Thread.currentThread()));
            return got;
        });
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        Map<String, Thread> handledOn = new ConcurrentHashMap<>();
        CyclicBarrier allThree = new CyclicBarrier(3);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            handledOn.put(r.requestId(), Thread.currentThread());
            allThree.await(30, TimeUnit.SECONDS); // only three workers handling at once get past this
            return Shop.price(r.body());
        }).responses(responses).concurrency(3).receiveBatch(1).waitTime(Duration.ofMillis(20)).build();
        for (int i = 0; i < 6; i++) {
            requests.send(MainLoopRequest.of(new Order("fig-" + i, i)));
        }

        // six requests, three at a time: some receive calls may come back empty, so allow for them
        long taken = 0;
        while (taken < 6) {
            taken += loop.run(6 - taken);
        }

        assertThat(handledOn).hasSize(6);
        assertThat(Set.copyOf(handledOn.values())).as("three workers").hasSize(3)
                .doesNotContain(Thread.currentThread());
        assertThat(receivedOn).as("each request handled on the thread that received it").isEqualTo(handledOn);
        assertThat(responses.sentCount()).isEqualTo(6);
        assertThat(requests.approximateCount()).as("all acknowledged before run returned").isZero();
        loop.close();
    }

    @Test
    @DisplayName("with receiveBatch(1), a worker's receive fenced for good stops the whole run, which throws it once the others finish")
    void fencedWorkerStopsTheRun() throws Exception {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        CountDownLatch handling = new CountDownLatch(1);
        CountDownLatch overtaken = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            handling.countDown();
            try {
                overtaken.await(); // a worker paused mid-request while the lease moves on
            } catch (InterruptedException e) {
                interrupts.incrementAndGet();
                throw e;
            }
            return Shop.price(r.body());
        }).responses(responses).concurrency(3).receiveBatch(1).waitTime(Duration.ofMillis(50))
                .shutdownGrace(Duration.ofSeconds(60)).build();
        requests.send(MainLoopRequest.of(new Order("cherry", 8)));
        CompletableFuture<Long> run = new CompletableFuture<>();
        Thread runner = new Thread(() -> {
            try {
                run.complete(loop.runFenced(3));
            } catch (Throwable e) {
                run.completeExceptionally(e);
            }
        });
        runner.start();
        assertThat(handling.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(requests.fenced(4).receive()).as("the successor's first receive").isEmpty();
        // the idle workers' next receives are refused: the run stops and waits for the busy one, within its grace
        Threads.awaitParkedIn(runner, f -> f.getClassName().equals(MainLoop.Slots.class.getName())
                && f.getMethodName().equals("awaitIdle"), Duration.ofSeconds(30));
        assertThat(run).isNotDone();
        overtaken.countDown();

        assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(dev.mailbox.api.FencedException.class);
        assertThat(interrupts).as("the busy worker finished within the grace period").hasValue(0);
        assertThat(responses.sentCount()).as("answered").isEqualTo(1);
        assertThat(requests.approximateCount()).as("but not acknowledged: it goes to the successor").isEqualTo(1);
        loop.close();
    }

    @Test
    @DisplayName("at concurrency 1, shutdown past its grace period hands the request back and returns, even while a handler ignores its interrupt")
    void shutdownPastGraceAtConcurrencyOne() throws Exception {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            inHandler.countDown();
            while (true) { // a handler that will not stop when asked
                try {
                    gate.await();
                    break;
                } catch (InterruptedException e) {
                    interrupts.incrementAndGet();
                }
            }
            return Shop.price(r.body());
        }).responses(responses).meterRegistry(registry).waitTime(Duration.ofSeconds(5))
                // long enough that only the shutdown's nack can bring the request back in time
                .visibilityTimeout(Duration.ofMinutes(5)).build();
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        CompletableFuture<Long> run = new CompletableFuture<>();
        Thread runner = new Thread(() -> run.complete(loop.run()));
        runner.start();
        assertThat(inHandler.await(30, TimeUnit.SECONDS)).isTrue();

        assertThat(loop.shutdown(Duration.ofMillis(200))).as("run returned within grace and margin").isTrue();

        assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(interrupts).hasValue(1);
        assertThat(registry.get("mainloop.requests").tag("outcome", "abandoned").counter().count()).isEqualTo(1);
        assertThat(requests.receive(ReceiveOptions.defaults().withWaitTime(Duration.ZERO)))
                .as("handed back at once").hasSize(1);
        Thread worker = thread("mainloop-requests-worker-");
        gate.countDown();
        // the handler now returns: let its worker finish whatever it would do with the result before looking
        worker.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(worker.isAlive()).as("the worker ends once its handler returns").isFalse();
        assertThat(responses.sentCount()).as("an abandoned request is never answered by this runner").isZero();
        loop.close();
    }

    @Test
    @DisplayName("at concurrency 1, interrupting run()'s thread stops the loop: the running handler is not interrupted and answers; run keeps the interrupt")
    void callerInterruptAtConcurrencyOne() throws Exception {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            inHandler.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                interrupts.incrementAndGet();
                throw e;
            }
            return Shop.price(r.body());
        }).responses(responses).waitTime(Duration.ofMinutes(5)).shutdownGrace(Duration.ofSeconds(60)).build();
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        requests.send(MainLoopRequest.of(new Order("b", 2)));
        CompletableFuture<Boolean> keptInterrupt = new CompletableFuture<>();
        CompletableFuture<Long> taken = new CompletableFuture<>();
        Thread runner = new Thread(() -> {
            taken.complete(loop.run());
            keptInterrupt.complete(Thread.currentThread().isInterrupted());
        });
        runner.start();
        assertThat(inHandler.await(30, TimeUnit.SECONDS)).isTrue();

        runner.interrupt();
        // the caller's thread, interrupted, stops the loop and drains; only then may the handler finish, or its
        // worker could take 'b' before the stop is seen
        Threads.awaitParkedIn(runner, f -> f.getClassName().equals(MainLoop.Slots.class.getName())
                && f.getMethodName().equals("awaitIdle"), Duration.ofSeconds(30));
        gate.countDown(); // within the grace period

        assertThat(keptInterrupt.get(30, TimeUnit.SECONDS)).isTrue();
        assertThat(taken.get()).as("stopped after the first request").isEqualTo(1);
        assertThat(interrupts).hasValue(0);
        assertThat(responses.sentCount()).isEqualTo(1);
        assertThat(requests.approximateCount()).as("'a' acknowledged, 'b' never taken").isEqualTo(1);
        loop.close();
    }

    @Test
    @DisplayName("at concurrency 1, a handler that finishes within the grace period after stop() is answered and acknowledged")
    void stopThenFinishAtConcurrencyOne() throws Exception {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            inHandler.countDown();
            gate.await();
            return Shop.price(r.body());
        }).responses(responses).waitTime(Duration.ofSeconds(5)).shutdownGrace(Duration.ofSeconds(60)).build();
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        CompletableFuture<Long> run = new CompletableFuture<>();
        Thread runner = new Thread(() -> run.complete(loop.run()));
        runner.start();
        assertThat(inHandler.await(30, TimeUnit.SECONDS)).isTrue();

        loop.stop();
        // the caller's thread drains: it has sent what was handed over and waits for the handler
        Threads.awaitParkedIn(runner, f -> f.getClassName().equals(MainLoop.Slots.class.getName())
                && f.getMethodName().equals("awaitIdle"), Duration.ofSeconds(30));
        gate.countDown();

        assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(responses.sentCount()).isEqualTo(1);
        assertThat(requests.approximateCount()).as("acknowledged by its task, the drain having gone by").isZero();
        loop.close();
    }

    /** The loop's worker thread other than this one, once it exists. */
    private static Thread otherWorker() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("mainloop-requests-worker-") && t != Thread.currentThread()) {
                    return t;
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no second worker");
    }

    /** The live thread whose name starts with {@code prefix}, once it exists. */
    private static Thread thread(String prefix) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith(prefix)) {
                    return t;
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no thread named " + prefix + "*");
    }

    @Test
    @DisplayName("the shutdown hook stops a running loop and lets run() return")
    void shutdownHook() throws Exception {
        var requests = requests();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(new CollectingMailbox<>("r")).waitTime(Duration.ofMinutes(5)).build();
        CompletableFuture<Long> run = new CompletableFuture<>();
        Thread runner = new Thread(() -> run.complete(loop.run()));
        runner.start();
        // at concurrency 1 the loop's one worker receives
        Threads.awaitParkedIn(thread("mainloop-requests-worker-"), e -> e.getClassName().endsWith("InMemoryMailbox"),
                Duration.ofSeconds(30));
        Thread hook = loop.shutdownHook();
        hook.start();
        hook.join(30_000);
        assertThat(run.get(30, TimeUnit.SECONDS)).isZero();
        assertThatThrownBy(loop::run).hasMessageContaining("closed");
    }

    @Test
    @DisplayName("a reply-to names the mailbox the result goes to; one that cannot be opened is dead-lettered")
    void replyRouting() {
        var requests = requests();
        var fallback = new CollectingMailbox<MainLoopResult<Quote>>("fallback");
        var elsewhere = new CollectingMailbox<MainLoopResult<Quote>>("elsewhere");
        var dead = new CollectingMailbox<DeadLetter<Order>>("dead");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(fallback).deadLetters(dead).waitTime(Duration.ZERO).concurrency(4)
                .replyTo(name -> {
                    if (name.equals("elsewhere")) {
                        return elsewhere;
                    }
                    throw new IllegalArgumentException("no mailbox " + name);
                }).build();

        requests.send(MainLoopRequest.of(new Order("to-fallback", 1)));
        requests.send(MainLoopRequest.of(new Order("to-fallback-by-name", 1)).withReplyTo("fallback"));
        requests.send(MainLoopRequest.of(new Order("to-elsewhere", 1)).withReplyTo("elsewhere"));
        MainLoopRequest<Order> lost = MainLoopRequest.of(new Order("nowhere", 1)).withReplyTo("nowhere");
        requests.send(lost);
        assertThat(loop.run(1)).isEqualTo(4);

        assertThat(fallback.bodies()).extracting(r -> r.response().item())
                .containsExactlyInAnyOrder("to-fallback", "to-fallback-by-name");
        assertThat(elsewhere.bodies()).extracting(r -> r.response().item()).containsExactly("to-elsewhere");
        assertThat(dead.bodies()).singleElement().satisfies(d -> {
            assertThat(d.request()).isEqualTo(lost);
            assertThat(d.error().type()).isEqualTo(MainLoopError.NO_REPLY_ROUTE);
        });
        assertThat(requests.approximateCount()).isZero();
        loop.close();
    }

    @Test
    @DisplayName("a result too large for its reply-to mailbox is dead-lettered and the caller told, not redelivered")
    void resultTooLargeForTheReplyMailbox() {
        var requests = requests();
        var replies = InMemoryMailbox.builder("small-replies", Shop.RESULTS).maxMessageBytes(500).build();
        var dead = new CollectingMailbox<DeadLetter<Order>>("dead");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests,
                        RequestHandler.<Order, Quote>ofBody(o -> new Quote(o.item().repeat(o.quantity()), 1, 1)))
                .replyTo(name -> replies).deadLetters(dead).waitTime(Duration.ZERO).meterRegistry(registry).build();
        MainLoopRequest<Order> big = MainLoopRequest.of(new Order("x", 2_000)).withReplyTo("small-replies");
        requests.send(big);
        requests.send(MainLoopRequest.of(new Order("y", 1)).withReplyTo("small-replies"));

        assertThat(loop.run(2)).isEqualTo(2);

        assertThat(requests.approximateCount()).as("nothing comes back to be answered again").isZero();
        assertThat(dead.bodies()).singleElement().satisfies(d -> {
            assertThat(d.request()).isEqualTo(big);
            assertThat(d.error().type()).isEqualTo(MainLoopError.RESULT_REJECTED);
            assertThat(d.error().message()).contains("small-replies");
        });
        List<MainLoopResult<Quote>> answers = replies.receive(ReceiveOptions.defaults().withMaxMessages(10))
                .stream().map(Message::body).toList();
        assertThat(answers).hasSize(2);
        assertThat(answers).filteredOn(r -> r.requestId().equals(big.requestId())).singleElement()
                .satisfies(r -> assertThat(r.error()).isNotNull()
                        .extracting(MainLoopError::type).isEqualTo(MainLoopError.RESULT_REJECTED));
        assertThat(answers).filteredOn(r -> !r.requestId().equals(big.requestId())).singleElement()
                .satisfies(r -> assertThat(r.response().item()).isEqualTo("y"));
        assertThat(registry.get("mainloop.requests").counters()).as("one outcome a request: the handler's")
                .singleElement().satisfies(c -> {
                    assertThat(c.getId().getTag("outcome")).isEqualTo("success");
                    assertThat(c.count()).isEqualTo(2.0);
                });
        loop.close();
    }

    @Test
    @DisplayName("a duplicate that waited for a copy whose result was rejected answers with the error, and is not"
            + " dead-lettered a second time")
    void duplicateOfARejectedResult() throws Exception {
        var requests = requests();
        var replies = InMemoryMailbox.builder("small-replies-2", Shop.RESULTS).maxMessageBytes(500).build();
        var dead = new CollectingMailbox<DeadLetter<Order>>("dead");
        CountDownLatch release = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            release.await();
            return new Quote("x".repeat(2_000), 1, 1);
        }).replyTo(name -> replies).deadLetters(dead).waitTime(Duration.ZERO).concurrency(2).build();
        MainLoopRequest<Order> big = MainLoopRequest.of(new Order("x", 1)).withReplyTo("small-replies-2");
        requests.send(big);
        requests.send(big); // the same request again, as a client's retry would send it
        CompletableFuture<Long> run = CompletableFuture.supplyAsync(() -> loop.run(1));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (Thread.getAllStackTraces().values().stream().noneMatch(frames -> java.util.Arrays.stream(frames)
                .anyMatch(f -> f.getMethodName().equals("answerAfter")))) {
            assertThat(System.nanoTime() - until).as("the second copy waits for the first").isNegative();
            Thread.sleep(10);
        }
        release.countDown();

        assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(2L);
        assertThat(dead.bodies()).as("one dead letter for one request").hasSize(1);
        assertThat(replies.receive(ReceiveOptions.defaults().withMaxMessages(10))).hasSize(2)
                .allSatisfy(m -> assertThat(m.body().error()).isNotNull()
                        .extracting(MainLoopError::type).isEqualTo(MainLoopError.RESULT_REJECTED));
        assertThat(requests.approximateCount()).isZero();
        loop.close();
    }

    @Test
    @DisplayName("without a dead-letter mailbox an undecodable request is put back with the longest backoff, not lost")
    void undecodableWithoutDeadLetters() {
        FaultInjectingMailbox<MainLoopRequest<Order>> requests = FaultInjectingMailbox.wrap(requests());
        var poison = requests.injectUndecodable("garbage");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(new CollectingMailbox<>("r")).waitTime(Duration.ZERO).build();
        assertThat(loop.run(1)).isEqualTo(1);
        assertThat(poison.acknowledged()).isFalse();
        assertThat(poison.nacks()).isEqualTo(1);
    }

    @Test
    @DisplayName("a client call times out with RequestTimeoutException; its request carries the deadline")
    void clientTimeout() throws Exception {
        var requests = requests();
        var client = MainLoopClient.builder(requests,
                name -> InMemoryMailbox.builder(name, Shop.RESULTS).build()).receiveWait(Duration.ofMillis(200)).build();
        try (client) {
            Instant before = Instant.now();
            CompletableFuture<Quote> call = client.call(new Order("slow", 1), Duration.ofMillis(200));
            assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(RequestTimeoutException.class).hasMessageContaining("within PT0.2S");
            Message<MainLoopRequest<Order>> sent = requests.receive().get(0);
            assertThat(sent.body().replyTo()).isEqualTo(client.responseMailboxName());
            assertThat(sent.body().deadline()).isBetween(before.plusMillis(200), Instant.now().plusMillis(200));
            assertThat(client.pendingCalls()).isZero();
        }
    }

    /** Sleeps in a handler; an interrupt fails the handler, as it fails a handler that blocks on I/O. */
    private static void nap(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** A response mailbox that records the threads its receives ran on. */
    private static Mailbox<MainLoopResult<Quote>> recordingReceivers(String name, List<Thread> receivers) {
        return onReceive(InMemoryMailbox.builder(name, Shop.RESULTS).build(), call -> {
            receivers.add(Thread.currentThread());
            return call.get();
        });
    }

    /** A mailbox whose receives ({@code acknowledgeAndReceive}) go through {@code hook}, given the real call. */
    private static <T> Mailbox<T> onReceive(Mailbox<T> mailbox, Function<Supplier<List<Message<T>>>, List<Message<T>>> hook) {
        return new ForwardingMailbox<>(mailbox) {
            @Override
            public List<Message<T>> acknowledgeAndReceive(List<? extends Message<T>> acknowledge, ReceiveOptions options,
                                                          Consumer<? super Message<T>> stale) {
                return hook.apply(() -> delegate.acknowledgeAndReceive(acknowledge, options, stale));
            }

            @Override
            public Mailbox<T> fenced(long epoch) {
                throw new UnsupportedOperationException("not used here");
            }
        };
    }

    @Test
    @DisplayName("callAndWait receives on the caller's thread; futures from call() are received by the client's own")
    void callAndWaitReceivesOnTheCaller() throws Exception {
        var requests = requests();
        List<Thread> receivers = new CopyOnWriteArrayList<>();
        // the loop answers into the same mailbox objects the client receives from
        Map<String, Mailbox<MainLoopResult<Quote>>> boxes = new ConcurrentHashMap<>();
        MainLoop<Order, Quote> shared = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .replyTo(boxes::get).waitTime(Duration.ofSeconds(1)).build();
        Thread runner = new Thread(shared::run);
        runner.start();
        try (var client = MainLoopClient.<Order, Quote>builder(requests,
                name -> boxes.computeIfAbsent(name, n -> recordingReceivers(n, receivers)))
                .receiveWait(Duration.ofMillis(200)).build()) {
            for (int i = 1; i <= 3; i++) {
                assertThat(client.callAndWait(new Order("kiwi", i))).isEqualTo(new Quote("kiwi", i, 125L * i));
            }
            assertThat(receivers).as("every receive so far on this thread").isNotEmpty()
                    .containsOnly(Thread.currentThread());
            assertThat(client.pendingCalls()).isZero();

            receivers.clear();
            assertThat(client.call(new Order("lime", 2)).get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("lime", 2, 250));
            assertThat(receivers).as("a future is received by the client's thread").isNotEmpty()
                    .allSatisfy(t -> assertThat(t.getName()).startsWith("mainloop-client-"));
        } finally {
            shared.close();
            runner.join(30_000);
        }
    }

    @Test
    @DisplayName("a caller of callAndWait that receives delivers the others' results; the role passes on when it is done")
    void callAndWaitDeliversForOthers() throws Exception {
        var requests = requests();
        Map<String, Mailbox<MainLoopResult<Quote>>> boxes = new ConcurrentHashMap<>();
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch slowGate = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            if (r.body().item().equals("slow")) {
                slowStarted.countDown();
                slowGate.await();
            }
            return Shop.price(r.body());
        }).replyTo(boxes::get).concurrency(4).receiveBatch(1).waitTime(Duration.ofSeconds(1)).build();
        Thread runner = new Thread(loop::run);
        runner.start();
        List<Thread> receivers = new CopyOnWriteArrayList<>();
        try (var client = MainLoopClient.<Order, Quote>builder(requests,
                name -> boxes.computeIfAbsent(name, n -> recordingReceivers(n, receivers)))
                .receiveWait(Duration.ofSeconds(5)).build()) {
            CompletableFuture<Quote> slow = new CompletableFuture<>();
            Thread slowCaller = new Thread(() -> {
                try {
                    slow.complete(client.callAndWait(new Order("slow", 1)));
                } catch (Throwable e) {
                    slow.completeExceptionally(e);
                }
            }, "slow-caller");
            slowCaller.start();
            assertThat(slowStarted.await(30, TimeUnit.SECONDS)).isTrue();
            // the slow caller now waits in its receive; these calls are answered while it still waits
            CompletableFuture<Quote> async = client.call(new Order("pear", 3));
            assertThat(client.callAndWait(new Order("fig", 2))).isEqualTo(new Quote("fig", 2, 250));
            assertThat(async.get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("pear", 3, 375));
            assertThat(slow).isNotDone();
            slowGate.countDown();
            assertThat(slow.get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("slow", 1, 125));
            assertThat(receivers).as("the slow caller received for the others").contains(slowCaller);
            assertThat(client.pendingCalls()).isZero();
        } finally {
            slowGate.countDown();
            loop.close();
            runner.join(30_000);
        }
    }

    @RepeatedTest(25)
    @DisplayName("callAndWait from four threads: no caller sleeps on while its result has been delivered or the role is free")
    void callAndWaitNobodyLeftAsleep() throws Exception {
        var requests = requests();
        Map<String, Mailbox<MainLoopResult<Quote>>> boxes = new ConcurrentHashMap<>();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .replyTo(boxes::get).concurrency(4).receiveBatch(1).waitTime(Duration.ofSeconds(1)).build();
        Thread runner = new Thread(loop::run);
        runner.start();
        try (var client = MainLoopClient.<Order, Quote>builder(requests,
                name -> boxes.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, Shop.RESULTS).build()))
                .receiveWait(Duration.ofSeconds(1)).build()) {
            List<CompletableFuture<Long>> callers = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                callers.add(CompletableFuture.supplyAsync(() -> {
                    long cents = 0;
                    for (int i = 1; i <= 25; i++) {
                        cents += client.callAndWait(new Order("date", i), Duration.ofSeconds(60)).cents();
                    }
                    return cents;
                }, r -> new Thread(r).start()));
            }
            for (CompletableFuture<Long> caller : callers) {
                // a lost wake-up leaves a caller asleep until its call's 60 s timeout
                assertThat(caller.get(10, TimeUnit.SECONDS)).isEqualTo(125L * 25 * 26 / 2);
            }
        } finally {
            loop.close();
            runner.join(30_000);
        }
    }

    @Test
    @DisplayName("callAndWait from a stage run by the thread delivering results is refused, not left waiting for itself")
    void callAndWaitFromADeliveringStage() throws Exception {
        var requests = requests();
        Map<String, Mailbox<MainLoopResult<Quote>>> boxes = new ConcurrentHashMap<>();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .replyTo(boxes::get).waitTime(Duration.ofSeconds(1)).build();
        try (var client = MainLoopClient.<Order, Quote>builder(requests,
                name -> boxes.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, Shop.RESULTS).build()))
                .receiveWait(Duration.ofSeconds(1)).build()) {
            // attached before anything can answer, so the stage runs on the thread that delivers the result
            CompletableFuture<Quote> nested = client.call(new Order("outer", 1))
                    .thenApply(q -> client.callAndWait(new Order("inner", 1)));
            Thread runner = new Thread(loop::run);
            runner.start();
            try {
                assertThatThrownBy(() -> nested.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("dependent stage");
                assertThat(client.callAndWait(new Order("after", 2))).as("the client still answers")
                        .isEqualTo(new Quote("after", 2, 250));
            } finally {
                loop.close();
                runner.join(30_000);
            }
        }
    }

    @Test
    @DisplayName("run(1) with several receiving workers: a receive call that failed is retried, not lost to the other worker")
    void receiveBudgetSurvivesAFailure() {
        AtomicInteger calls = new AtomicInteger();
        var requests = onReceive(requests(), call -> {
            if (calls.incrementAndGet() == 1) {
                // fail only once the other worker has found the budget used up and left its loop
                try {
                    Threads.awaitParkedIn(otherWorker(), f -> f.getMethodName().equals("getTask"), Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                throw new MailboxUnavailableException("the first receive fails", true, null);
            }
            return call.get();
        });
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(responses).concurrency(2).receiveBatch(1).waitTime(Duration.ofSeconds(5)).build();
        requests.send(MainLoopRequest.of(new Order("quince", 3)));

        assertThat(loop.run(1)).isEqualTo(1);
        assertThat(calls).as("one failed call, one that counted").hasValue(2);
        assertThat(responses.sentCount()).isEqualTo(1);
        loop.close();
    }

    @ParameterizedTest(name = "concurrency {0}")
    @ValueSource(ints = {1, 2}) // a worker receiving for itself, and the thread receiving for the workers
    @DisplayName("stop() cuts short a receiver's backoff after failed receives: run returns at once, with no receive after the stop")
    void stopEndsTheReceiveBackoff(int concurrency) throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch fourth = new CountDownLatch(1);
        List<Thread> receiver = new CopyOnWriteArrayList<>();
        var requests = onReceive(requests(), call -> {
            if (calls.incrementAndGet() == 4) {
                receiver.add(Thread.currentThread());
                fourth.countDown(); // the backoff after this failure is 1.6 s
            }
            throw new MailboxUnavailableException("the mailbox is down", true, null);
        });
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(new CollectingMailbox<>("responses")).concurrency(concurrency)
                .waitTime(Duration.ofMillis(50)).build();
        CompletableFuture<Long> run = CompletableFuture.supplyAsync(loop::run);
        assertThat(fourth.await(30, TimeUnit.SECONDS)).isTrue();
        Threads.awaitParkedIn(receiver.get(0), f -> f.getClassName().equals(Run.class.getName())
                && f.getMethodName().equals("pause"), Duration.ofSeconds(30));

        long stopped = System.nanoTime();
        loop.stop();
        assertThat(run.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - stopped)).as("run returned within the backoff")
                .isLessThan(Duration.ofMillis(1_000));
        assertThat(calls).as("no receive after the stop").hasValue(4);
        loop.close();
    }

    @Test
    @DisplayName("with receiveBatch(1) and run(n), a worker that runs out of receives acknowledges its last request at once, not when the others finish")
    void lastAcknowledgementNotHeldForTheOthers() {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        AtomicInteger handled = new AtomicInteger();
        // the worker without a request long-polls 2 s; the other's request would be visible again after 1 s
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.<Order, Quote>ofBody(o -> {
            handled.incrementAndGet();
            return Shop.price(o);
        })).responses(responses).concurrency(2).receiveBatch(1)
                .visibilityTimeout(Duration.ofSeconds(1)).waitTime(Duration.ofSeconds(2)).build();
        requests.send(MainLoopRequest.of(new Order("fig", 1)));

        assertThat(loop.run(2)).as("requests taken").isEqualTo(1);
        assertThat(handled).as("handled once").hasValue(1);
        assertThat(responses.sentCount()).as("answered once").isEqualTo(1);
        assertThat(requests.approximateCount()).isZero();
        loop.close();
    }

    @Test
    @DisplayName("a receiver takes at most a batch of acknowledgements from finishing tasks; the rest acknowledge on their own")
    void handOverHoldsAtMostABatch() {
        // More tasks than a batch can finish while their receiver waits to be scheduled; the race is a thread
        // wake-up wide, so this asserts the bound where it is kept rather than through a run.
        var requests = requests();
        requests.send(MainLoopRequest.of(new Order("fig", 1)));
        Message<MainLoopRequest<Order>> answered = requests.receive().get(0);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(new CollectingMailbox<>("responses")).concurrency(12).build();
        Run<Order, Quote> run = new Run<>(loop, requests);
        try {
            Run<Order, Quote>.Receiver receiver = run.new Receiver();
            receiver.awaitingSlot();
            for (int i = 0; i < dev.mailbox.api.Limits.MAX_BATCH; i++) {
                assertThat(receiver.handOver(answered)).as("acknowledgement %d taken", i + 1).isTrue();
            }
            assertThat(receiver.handOver(answered)).as("one more than a batch").isFalse();
        } finally {
            run.workers.shutdownNow();
            run.timers.shutdownNow();
            loop.close();
        }
    }

    @Test
    @DisplayName("a request answered on its last allowed delivery whose acknowledgement was lost is answered from memory when it comes back, not dead-lettered")
    void answeredFromMemoryPastTheDeliveryLimit() {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(responses).waitTime(Duration.ZERO)
                .retryPolicy(RetryPolicy.defaults().withMaxDeliveries(1)).build();
        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("cherry", 8));
        requests.send(request);
        Message<MainLoopRequest<Order>> lost = requests.receive().get(0); // its delivery, never acknowledged
        requests.send(request);
        assertThat(loop.run(1)).isEqualTo(1);
        assertThat(responses.lastBody().ok()).isTrue();
        lost.nack(Duration.ZERO); // comes back on its second delivery, past the limit of 1

        assertThat(loop.run(1)).isEqualTo(1);
        assertThat(responses.bodies()).hasSize(2).allSatisfy(r -> assertThat(r.ok()).as("answer %s", r).isTrue());
        assertThat(requests.approximateCount()).isZero();
        loop.close();
    }

    @Test
    @DisplayName("a copy that misses the memory of answers just before the first copy finishes still does not run the handler again")
    @SuppressWarnings("unchecked")
    void duplicateRacingTheFirstCopyRunsTheHandlerOnce() throws Exception {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        AtomicInteger handled = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.<Order, Quote>ofBody(o -> {
            handled.incrementAndGet();
            nap(100);
            return Shop.price(o);
        })).responses(responses).waitTime(Duration.ZERO).concurrency(2).build();
        // The window is between a copy's miss in the memory and its claim of the request: widen it to 400 ms
        // for the second lookup of the id (the second copy's), so the first copy finishes inside it.
        var real = (com.github.benmanes.caffeine.cache.Cache<String, Object>) (Object) loop.completed;
        AtomicInteger lookups = new AtomicInteger();
        Object slowed = java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {com.github.benmanes.caffeine.cache.Cache.class}, (proxy, method, args) -> {
                    Object found = method.invoke(real, args);
                    if (method.getName().equals("getIfPresent") && lookups.incrementAndGet() == 2) {
                        Thread.sleep(400);
                    }
                    return found;
                });
        var field = MainLoop.class.getDeclaredField("completed");
        field.setAccessible(true);
        field.set(loop, slowed);
        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("cherry", 8));
        requests.send(request);
        requests.send(request);

        assertThat(loop.run(1)).as("both copies taken by one receive").isEqualTo(2);
        assertThat(responses.sentCount()).isEqualTo(2);
        assertThat(handled).as("handler runs").hasValue(1);
        loop.close();
    }

    @Test
    @DisplayName("a deadline that passes before the handler starts still interrupts it")
    void deadlineBeforeTheHandlerStarts() {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.<Order, Quote>ofBody(o -> {
            nap(30);
            return Shop.price(o);
        })).responses(responses).waitTime(Duration.ZERO).build();
        int n = 100;
        for (int i = 0; i < n; i++) {
            // the budget's timer fires at once, often before the handler has begun
            requests.send(MainLoopRequest.of(new Order("cherry", 8)).withBudget(Duration.ofNanos(1)));
        }
        assertThat(loop.run(n)).isEqualTo(n);
        assertThat(responses.bodies()).hasSize(n).allSatisfy(r -> assertThat(r.error()).as("answer %s", r)
                .isNotNull().extracting(MainLoopError::type).isEqualTo(MainLoopError.DEADLINE_EXCEEDED));
        loop.close();
    }

    @Test
    @DisplayName("a deadline centuries away, a budget of Long.MAX_VALUE seconds and a grace of FOREVER are taken as given, not overflowed")
    void farLimits() {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(responses).waitTime(Duration.ZERO).concurrency(2).receiveBatch(2)
                .shutdownGrace(java.time.temporal.ChronoUnit.FOREVER.getDuration()).build();
        requests.send(MainLoopRequest.of(new Order("cherry", 8)).withDeadline(Instant.parse("2400-01-01T00:00:00Z")));
        requests.send(MainLoopRequest.of(new Order("cherry", 8)).withBudget(Duration.ofSeconds(Long.MAX_VALUE)));

        assertThat(loop.run(1)).isEqualTo(2);
        assertThat(responses.bodies()).hasSize(2).allSatisfy(r -> assertThat(r.ok()).as("answer %s", r).isTrue());
        assertThat(requests.approximateCount()).isZero();
        assertThat(loop.shutdown(java.time.temporal.ChronoUnit.FOREVER.getDuration())).as("nothing running").isTrue();
        assertThatThrownBy(() -> loop.shutdown(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
        loop.close();
    }

    @Test
    @DisplayName("callAndWait: a timeout, an interrupt and a close each end the wait with their own exception")
    void callAndWaitEnds() throws Exception {
        var requests = requests(); // nobody answers
        var client = MainLoopClient.<Order, Quote>builder(requests,
                name -> InMemoryMailbox.builder(name, Shop.RESULTS).build()).receiveWait(Duration.ofSeconds(10)).build();
        assertThatThrownBy(() -> client.callAndWait(new Order("late", 1), Duration.ofMillis(200)))
                .isInstanceOf(RequestTimeoutException.class).hasMessageContaining("within PT0.2S");

        CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            try {
                client.callAndWait(new Order("cut", 1));
                interrupted.complete(null);
            } catch (Throwable e) {
                interrupted.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("flag lost", e));
            }
        });
        caller.start();
        Threads.awaitParkedIn(caller, f -> f.getClassName().endsWith("InMemoryMailbox"), Duration.ofSeconds(30));
        caller.interrupt();
        assertThat(interrupted.get(30, TimeUnit.SECONDS)).isInstanceOf(MailboxUnavailableException.class)
                .hasMessageContaining("interrupted");

        CompletableFuture<Throwable> closed = new CompletableFuture<>();
        Thread other = new Thread(() -> {
            try {
                client.callAndWait(new Order("never", 1));
                closed.complete(null);
            } catch (Throwable e) {
                closed.complete(e);
            }
        });
        other.start();
        Threads.awaitParkedIn(other, f -> f.getClassName().endsWith("InMemoryMailbox"), Duration.ofSeconds(30));
        client.close();
        assertThat(closed.get(30, TimeUnit.SECONDS)).isInstanceOf(MailboxClosedException.class);
        assertThatThrownBy(() -> client.callAndWait(new Order("after", 1))).isInstanceOf(MailboxClosedException.class);
        assertThat(client.pendingCalls()).isZero();
    }

    @Test
    @DisplayName("closing a client fails its pending calls and cleans up its response mailbox")
    void clientClose() {
        var requests = requests();
        AtomicInteger cleaned = new AtomicInteger();
        var opened = new Mailbox[1];
        var client = MainLoopClient.<Order, Quote>builder(requests, name -> {
            var m = InMemoryMailbox.builder(name, Shop.RESULTS).build();
            opened[0] = m;
            return m;
        }).cleanup(m -> {
            cleaned.incrementAndGet();
            m.purge();
        }).receiveWait(Duration.ofSeconds(10)).build();
        assertThat(client.responseMailboxName()).startsWith("requests-reply-");
        CompletableFuture<Quote> pending = client.call(new Order("never", 1));
        client.close();
        assertThat(pending).isCompletedExceptionally();
        assertThatThrownBy(pending::join).cause().isInstanceOf(MailboxClosedException.class);
        assertThat(cleaned).hasValue(1);
        assertThatThrownBy(() -> opened[0].send(MainLoopResult.success("x", null, Instant.now())))
                .isInstanceOf(MailboxClosedException.class);
        assertThat(client.call(new Order("after", 1))).isCompletedExceptionally();
        assertThatThrownBy(() -> client.callAndWait(new Order("after", 1))).as("on the thread that closed it, too")
                .isInstanceOf(MailboxClosedException.class);
        assertThatThrownBy(() -> client.call(MainLoopRequest.of(new Order("x", 1)).withReplyTo("other"), Duration.ofSeconds(1)))
                .hasMessageContaining("reply-to 'other'");
    }

    @Test
    @DisplayName("results with no waiting call (late or duplicated) are acknowledged and dropped")
    void strayResults() throws Exception {
        var requests = requests();
        InMemoryMailbox<MainLoopResult<Quote>>[] box = new InMemoryMailbox[1];
        var client = MainLoopClient.<Order, Quote>builder(requests, name -> box[0] = InMemoryMailbox.builder(name, Shop.RESULTS).build())
                .receiveWait(Duration.ofMillis(100)).build();
        try (client) {
            box[0].send(MainLoopResult.success("nobody-waits", new Quote("x", 1, 1), Instant.now()));
            MainLoopRequest<Order> r = MainLoopRequest.of(new Order("real", 1));
            CompletableFuture<Quote> call = client.call(r, Duration.ofSeconds(30));
            box[0].send(MainLoopResult.success(r.requestId(), new Quote("real", 1, 125), Instant.now()));
            assertThat(call.get(30, TimeUnit.SECONDS).cents()).isEqualTo(125);
            // the stray one was taken and acknowledged too, or the count would not reach zero
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (box[0].approximateCount() != 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertThat(box[0].approximateCount()).isZero();
        }
    }

    @Test
    @DisplayName("a handler may return null (a Void response) and the caller gets null")
    void nullResponse() throws Exception {
        var requests = requests();
        var responses = new CollectingMailbox<MainLoopResult<Quote>>("responses");
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> null)
                .responses(responses).waitTime(Duration.ZERO).build();
        requests.send(MainLoopRequest.of(new Order("void", 1)));
        loop.run(1);
        assertThat(responses.lastBody().ok()).isTrue();
        assertThat(responses.lastBody().response()).isNull();
        assertThat(requests.receive(ReceiveOptions.defaults())).isEmpty();
    }

    @Test
    @DisplayName("runFenced: a loop whose epoch is overtaken stops receiving, and cannot acknowledge what it held")
    void fencedLoopStops() throws Exception {
        var requests = requests();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        CountDownLatch handling = new CountDownLatch(1);
        CountDownLatch overtaken = new CountDownLatch(1);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            handling.countDown();
            overtaken.await(); // a runner paused mid-request while its lease moves on
            return Shop.price(r.body());
        }).responses(responses).waitTime(Duration.ofMillis(50)).build();
        requests.send(MainLoopRequest.of(new Order("cherry", 8)));

        CompletableFuture<Long> run = CompletableFuture.supplyAsync(() -> loop.runFenced(3));
        assertThat(handling.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(requests.fenced(4).receive()).as("the successor's first receive").isEmpty();
        overtaken.countDown();

        assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(dev.mailbox.api.FencedException.class);
        assertThat(requests.approximateCount()).as("the request was not acknowledged: it goes to the successor")
                .isEqualTo(1);
        loop.close();
    }
}
