package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.FaultInjectingMailbox;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The MainLoop behaviour every backend must show. Subclasses say where the mailboxes live.
 * Mailbox names are unique per test, so tests never see each other's messages.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
abstract class MainLoopSuite {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final List<AutoCloseable> loops = new ArrayList<>();
    private final List<AutoCloseable> clients = new ArrayList<>();
    private final List<AutoCloseable> mailboxes = new ArrayList<>();
    private final List<Thread> runners = new ArrayList<>();
    private final List<Throwable> runnerFailures = new CopyOnWriteArrayList<>();

    protected abstract Backend backend();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : clients) {
            c.close();
        }
        for (AutoCloseable l : loops) {
            l.close();
        }
        for (Thread t : runners) {
            t.join(30_000);
        }
        for (AutoCloseable m : mailboxes) {
            m.close();
        }
        assertThat(runnerFailures).as("failures of background runs").isEmpty();
    }

    // ---------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "receiveBatch {0}")
    @ValueSource(ints = {10, 1}) // one thread receiving for all the workers, and every worker receiving
    @DisplayName("typed requests get typed responses, with several handlers at once")
    void roundTrip(int batch) throws Exception {
        var requests = requests("round");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = track(loop(requests, RequestHandler.ofBody(Shop::price)).concurrency(4)
                .receiveBatch(batch).meterRegistry(registry).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        List<CompletableFuture<Quote>> calls = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            calls.add(client.call(new Order("apple-" + i, i)));
        }
        for (int i = 0; i < 20; i++) {
            assertThat(calls.get(i).get(60, TimeUnit.SECONDS)).isEqualTo(new Quote("apple-" + i, i, 125L * i));
        }
        assertThat(registry.get("mainloop.requests").tag("outcome", "success").counter().count()).isEqualTo(20);
        assertThat(registry.get("mainloop.handler.time").timer().count()).isEqualTo(20);
        assertThat(client.pendingCalls()).isZero();
    }

    @Test
    @DisplayName("callAndWait from several threads at once, with futures from call() among them: every caller gets its own result")
    void callAndWaitFromSeveralThreads() throws Exception {
        var requests = requests("blocking");
        MainLoop<Order, Quote> loop = track(loop(requests, RequestHandler.ofBody(Shop::price)).concurrency(4)
                .receiveBatch(1).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        List<CompletableFuture<List<Quote>>> callers = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            String item = "plum-" + c;
            callers.add(CompletableFuture.supplyAsync(() -> {
                List<Quote> got = new ArrayList<>();
                for (int i = 1; i <= 10; i++) {
                    got.add(client.callAndWait(new Order(item, i)));
                }
                return got;
            }, runnable -> new Thread(runnable, "caller-" + item).start()));
        }
        List<CompletableFuture<Quote>> futures = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            futures.add(client.call(new Order("async", i)));
        }
        for (int c = 0; c < 4; c++) {
            List<Quote> expected = new ArrayList<>();
            for (int i = 1; i <= 10; i++) {
                expected.add(new Quote("plum-" + c, i, 125L * i));
            }
            // well inside the calls' own timeout, so a caller left asleep while its result waits fails the test
            assertThat(callers.get(c).get(20, TimeUnit.SECONDS)).isEqualTo(expected);
        }
        for (int i = 1; i <= 10; i++) {
            assertThat(futures.get(i - 1).get(120, TimeUnit.SECONDS)).isEqualTo(new Quote("async", i, 125L * i));
        }
        assertThat(client.pendingCalls()).isZero();
    }

    @Test
    @DisplayName("a handler error is answered with a portable error and not retried")
    void handlerError() throws Exception {
        var requests = requests("error");
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        CompletableFuture<Quote> call = client.call(new Order("pear", -1));
        assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(RequestFailedException.class)
                .satisfies(e -> {
                    MainLoopError error = ((RequestFailedException) e).error();
                    assertThat(error.type()).isEqualTo(IllegalArgumentException.class.getName());
                    assertThat(error.message()).contains("must not be negative");
                });
        assertThat(client.call(new Order("pear", 2)).get(60, TimeUnit.SECONDS).cents()).isEqualTo(250);
        assertThat(calls).hasValue(2);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a handler slower than the visibility timeout is not redelivered while it runs")
    void slowHandlerKeepsItsRequest() throws Exception {
        var requests = requests("slow");
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RequestHandler<Order, Quote> handler = r -> {
            calls.incrementAndGet();
            started.countDown();
            release.await();
            return Shop.price(r.body());
        };
        Duration visibility = backend().shortVisibility();
        MainLoop<Order, Quote> first = track(loop(requests, handler).visibilityTimeout(visibility).build());
        MainLoop<Order, Quote> second = track(loop(requests, handler).visibilityTimeout(visibility).build());
        runInBackground(first);
        MainLoopClient<Order, Quote> client = client(requests);

        CompletableFuture<Quote> call = client.call(new Order("plum", 4));
        assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
        // three receive calls of one second each: three visibility timeouts pass while the handler runs
        long takenBySecond = second.run(3);
        release.countDown();

        assertThat(call.get(60, TimeUnit.SECONDS)).isEqualTo(new Quote("plum", 4, 500));
        assertThat(takenBySecond).as("requests the second runner received").isZero();
        assertThat(calls).hasValue(1);
    }

    @Test
    @DisplayName("a runner SIGKILLed mid-request: another runner answers it, every request is answered once")
    void runnerKilledMidRequest() throws Exception {
        List<String> childArgs = backend().childArgs();
        assumeTrue(childArgs != null, "in-memory mailboxes live in one process: nothing outlives a killed runner");
        var requests = requests("kill");
        MainLoopClient<Order, Quote> client = client(requests);
        Duration visibility = backend().shortVisibility();

        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ChildRunner.class.getName()));
        command.addAll(childArgs);
        command.addAll(List.of("--", requests.name(), Long.toString(visibility.toMillis())));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> startedInChild = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("READY");
            Map<String, CompletableFuture<Quote>> calls = new HashMap<>();
            for (int i = 1; i <= 3; i++) {
                MainLoopRequest<Order> request = MainLoopRequest.of(new Order("fig-" + i, i));
                calls.put(request.requestId(), client.call(request, PATIENCE));
            }
            String line = out.readLine();
            assertThat(line).startsWith("STARTED ");
            startedInChild.add(line.substring("STARTED ".length()));
            // its one handler never returns, so it cannot have started another
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no nack
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

            Map<String, Integer> handledHere = new ConcurrentHashMap<>();
            MainLoop<Order, Quote> survivor = track(loop(requests, r -> {
                handledHere.merge(r.requestId(), 1, Integer::sum);
                return Shop.price(r.body());
            }).build());
            runInBackground(survivor);

            for (var e : calls.entrySet()) {
                Quote q = e.getValue().get(60, TimeUnit.SECONDS);
                assertThat(q.cents()).isEqualTo(125L * q.quantity());
            }
            assertThat(startedInChild).as("requests the killed runner had started").hasSize(1);
            assertThat(calls).containsKey(startedInChild.get(0));
            Map<String, Integer> once = new HashMap<>();
            calls.keySet().forEach(id -> once.put(id, 1));
            assertThat(handledHere).as("every request was run once by the survivor, the killed one included")
                    .isEqualTo(once);
            awaitEmpty(requests);
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    @DisplayName("a request past its deadline is answered with DeadlineExceeded and its handler never runs")
    void deadlinePassed() throws Exception {
        var requests = requests("late");
        var replies = open(unique("late-replies"), Shop.RESULTS);
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).build());

        MainLoopRequest<Order> late = MainLoopRequest.of(new Order("kiwi", 1)).withDeadline(Instant.now().minusSeconds(1));
        requests.send(late);
        assertThat(loop.run(1)).isEqualTo(1);

        MainLoopResult<Quote> result = results(replies, 1).get(0);
        assertThat(result.requestId()).isEqualTo(late.requestId());
        assertThat(result.ok()).isFalse();
        assertThat(result.error().type()).isEqualTo(MainLoopError.DEADLINE_EXCEEDED);
        assertThat(calls).hasValue(0);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a handler that overruns its budget is interrupted and answered with DeadlineExceeded")
    void budgetInterrupts() throws Exception {
        var requests = requests("budget");
        var replies = open(unique("budget-replies"), Shop.RESULTS);
        AtomicBoolean interrupted = new AtomicBoolean();
        MainLoop<Order, Quote> loop = track(loop(requests, r -> {
            try {
                Thread.sleep(120_000); // far longer than the budget: the loop must cut it short
                return Shop.price(r.body());
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
        }).responses(replies).build());

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("lime", 1)).withBudget(Duration.ofMillis(300));
        requests.send(request);
        long started = System.nanoTime();
        assertThat(loop.run(1)).isEqualTo(1);

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(60));
        assertThat(interrupted).isTrue();
        MainLoopResult<Quote> result = results(replies, 1).get(0);
        assertThat(result.error().type()).isEqualTo(MainLoopError.DEADLINE_EXCEEDED);
        assertThat(result.error().message()).contains("interrupted");
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a poison request is retried with backoff, then dead-lettered after N deliveries and answered")
    void poisonDeadLettered() throws Exception {
        var requests = requests("poison");
        var dead = open(unique("poison-dlq"), Shop.DEAD_LETTERS);
        AtomicInteger calls = new AtomicInteger();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = track(loop(requests, r -> {
            calls.incrementAndGet();
            throw new MailboxUnavailableException("downstream is down", true, null);
        }).retryPolicy(RetryPolicy.defaults().withMaxDeliveries(3).withBackoff(Duration.ZERO, 1.0, Duration.ZERO))
                .deadLetters(dead).meterRegistry(registry).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        MainLoopRequest<Order> poison = MainLoopRequest.of(new Order("durian", 1));
        CompletableFuture<Quote> call = client.call(poison, PATIENCE);
        assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(RequestFailedException.class)
                .satisfies(e -> assertThat(((RequestFailedException) e).error().type())
                        .isEqualTo(MailboxUnavailableException.class.getName()));

        List<DeadLetter<Order>> letters = drain(dead, 1);
        assertThat(letters).hasSize(1);
        DeadLetter<Order> letter = letters.get(0);
        assertThat(letter.request().requestId()).isEqualTo(poison.requestId());
        assertThat(letter.request().body()).isEqualTo(new Order("durian", 1));
        assertThat(letter.deliveryCount()).isEqualTo(3);
        assertThat(letter.mailbox()).isEqualTo(requests.name());
        assertThat(letter.error().message()).isEqualTo("downstream is down");
        assertThat(calls).hasValue(3);
        assertThat(registry.get("mainloop.requests").tag("outcome", "retried").counter().count()).isEqualTo(2);
        assertThat(registry.get("mainloop.requests").tag("outcome", "dead_lettered").counter().count()).isEqualTo(1);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a request delivered more often than allowed (its runners died) is dead-lettered without running")
    void deliveryLimit() throws Exception {
        var requests = requests("limit");
        var replies = open(unique("limit-replies"), Shop.RESULTS);
        var dead = open(unique("limit-dlq"), Shop.DEAD_LETTERS);
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).deadLetters(dead).retryPolicy(RetryPolicy.defaults().withMaxDeliveries(2)).build());

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("lychee", 1));
        requests.send(request);
        for (int i = 0; i < 2; i++) { // two runners that took it and died
            List<Message<MainLoopRequest<Order>>> got = requests.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
            assertThat(got).hasSize(1);
            got.get(0).nack();
        }
        assertThat(loop.run(1)).isEqualTo(1);

        assertThat(calls).hasValue(0);
        MainLoopResult<Quote> result = results(replies, 1).get(0);
        assertThat(result.error().type()).isEqualTo(MainLoopError.DELIVERY_LIMIT_EXCEEDED);
        DeadLetter<Order> letter = drain(dead, 1).get(0);
        assertThat(letter.deliveryCount()).isEqualTo(3);
        assertThat(letter.request()).isEqualTo(request);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("an undecodable request is dead-lettered at once with its bytes, never retried")
    void undecodableDeadLettered() throws Exception {
        var requests = withUndecodable(unique("junk"), "{not json");
        var dead = open(unique("junk-dlq"), Shop.DEAD_LETTERS);
        var replies = open(unique("junk-replies"), Shop.RESULTS);
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).deadLetters(dead).build());

        assertThat(loop.run(1)).isEqualTo(1);

        DeadLetter<Order> letter = drain(dead, 1).get(0);
        assertThat(letter.request()).isNull();
        assertThat(letter.rawBody()).isEqualTo("{not json".getBytes(StandardCharsets.UTF_8));
        assertThat(letter.error().type()).isEqualTo(MainLoopError.UNDECODABLE);
        assertThat(letter.deliveryCount()).isEqualTo(1);
        assertThat(calls).hasValue(0);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a duplicated delivery runs the handler once; both deliveries get the same result")
    void duplicateDelivery() throws Exception {
        var real = requests("dup");
        FaultInjectingMailbox<MainLoopRequest<Order>> requests = FaultInjectingMailbox.wrap(real).duplicateNextDelivery();
        var replies = open(unique("dup-replies"), Shop.RESULTS);
        AtomicInteger calls = new AtomicInteger();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).concurrency(2).meterRegistry(registry).build());

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("date", 3));
        real.send(request);
        assertThat(loop.run(2)).as("the delivery and its duplicate").isEqualTo(2);

        List<MainLoopResult<Quote>> results = results(replies, 2);
        assertThat(results).hasSize(2);
        assertThat(results.get(0)).isEqualTo(results.get(1));
        assertThat(results.get(0).requestId()).isEqualTo(request.requestId());
        assertThat(results.get(0).response()).isEqualTo(new Quote("date", 3, 375));
        assertThat(calls).hasValue(1);
        assertThat(registry.get("mainloop.requests").tag("outcome", "duplicate").counter().count()).isEqualTo(1);
        assertNothingMore(replies);
        awaitEmpty(real);
    }

    @Test
    @DisplayName("a lost acknowledgement: the request comes back and is answered from memory, handler once")
    void lostAcknowledgement() throws Exception {
        var real = requests("lostack");
        FaultInjectingMailbox<MainLoopRequest<Order>> requests = FaultInjectingMailbox.wrap(real)
                .failNext(FaultInjectingMailbox.Operation.ACKNOWLEDGE, 1);
        var replies = open(unique("lostack-replies"), Shop.RESULTS);
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).visibilityTimeout(backend().shortVisibility()).build());
        runInBackground(loop);

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("quince", 2));
        real.send(request);

        List<MainLoopResult<Quote>> results = results(replies, 2);
        assertThat(results).hasSize(2);
        assertThat(results.get(1)).isEqualTo(results.get(0));
        assertThat(results.get(0).response()).isEqualTo(new Quote("quince", 2, 250));
        assertThat(calls).hasValue(1);
        awaitEmpty(real);
    }

    @Test
    @DisplayName("a result that cannot be sent: the request is nacked and answered later, handler once")
    void lostReply() throws Exception {
        var requests = requests("lostreply");
        var realReplies = open(unique("lostreply-replies"), Shop.RESULTS);
        FaultInjectingMailbox<MainLoopResult<Quote>> replies = FaultInjectingMailbox.wrap(realReplies)
                .failNext(FaultInjectingMailbox.Operation.SEND, 1);
        AtomicInteger calls = new AtomicInteger();
        MainLoop<Order, Quote> loop = track(loop(requests, counting(calls)).responses(replies).retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ZERO, 1, Duration.ZERO)).build());
        runInBackground(loop);

        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("guava", 5));
        requests.send(request);

        MainLoopResult<Quote> result = results(realReplies, 1).get(0);
        assertThat(result.response()).isEqualTo(new Quote("guava", 5, 625));
        assertThat(calls).hasValue(1);
        awaitEmpty(requests);
        assertNothingMore(realReplies);
    }

    @ParameterizedTest(name = "receiveBatch {0}")
    @ValueSource(ints = {10, 1})
    @DisplayName("shutdown past its grace period returns unfinished requests at once; another runner answers each once")
    void shutdownReturnsUnfinished(int batch) throws Exception {
        var requests = requests("shutdown");
        var replies = open(unique("shutdown-replies"), Shop.RESULTS);
        CountDownLatch threeStarted = new CountDownLatch(3);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> first = track(loop(requests, r -> {
            threeStarted.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
                throw e;
            }
            return Shop.price(r.body());
        }).responses(replies).concurrency(3).receiveBatch(batch).meterRegistry(registry)
                // long enough that only the shutdown's nack can bring the requests back in time
                .visibilityTimeout(Duration.ofMinutes(5)).build());
        Set<String> sent = new java.util.HashSet<>();
        for (int i = 0; i < 6; i++) {
            MainLoopRequest<Order> r = MainLoopRequest.of(new Order("nut-" + i, i));
            requests.send(r);
            sent.add(r.requestId());
        }
        Thread run = runInBackground(first);
        assertThat(threeStarted.await(60, TimeUnit.SECONDS)).isTrue();

        assertThat(first.shutdown(Duration.ofMillis(200))).isTrue();
        run.join(30_000);
        assertThat(run.isAlive()).isFalse();
        assertThat(interrupted).hasValue(3);
        assertThat(registry.get("mainloop.requests").tag("outcome", "abandoned").counter().count()).isEqualTo(3);
        gate.countDown();

        MainLoop<Order, Quote> second = track(loop(requests, r -> Shop.price(r.body())).responses(replies).build());
        runInBackground(second);
        List<MainLoopResult<Quote>> results = results(replies, 6);
        assertThat(results).extracting(MainLoopResult::requestId).containsExactlyInAnyOrderElementsOf(sent);
        assertNothingMore(replies);
        awaitEmpty(requests);
    }

    @ParameterizedTest(name = "receiveBatch {0}")
    @ValueSource(ints = {10, 1})
    @DisplayName("shutdown within its grace period lets running handlers finish and answer, then stops receiving")
    void shutdownFinishesRunning(int batch) throws Exception {
        var requests = requests("graceful");
        var replies = open(unique("graceful-replies"), Shop.RESULTS);
        CountDownLatch bothStarted = new CountDownLatch(2);
        CountDownLatch gate = new CountDownLatch(1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = track(loop(requests, r -> {
            bothStarted.countDown();
            gate.await();
            return Shop.price(r.body());
        }).responses(replies).concurrency(2).receiveBatch(batch).meterRegistry(registry)
                .shutdownGrace(Duration.ofSeconds(60)).build());
        requests.send(MainLoopRequest.of(new Order("a", 1)));
        requests.send(MainLoopRequest.of(new Order("b", 2)));
        runInBackground(loop);
        assertThat(bothStarted.await(60, TimeUnit.SECONDS)).isTrue();

        loop.stop(); // asks; running handlers may finish within the grace period
        gate.countDown();
        boolean stopped = loop.shutdown(Duration.ofSeconds(60));

        assertThat(stopped).isTrue();
        assertThat(results(replies, 2)).extracting(r -> r.response().item()).containsExactlyInAnyOrder("a", "b");
        assertThat(registry.find("mainloop.requests").tag("outcome", "abandoned").counter()).isNull();
        requests.send(MainLoopRequest.of(new Order("after", 1)));
        assertThat(requests.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))))
                .as("a stopped loop receives nothing more").hasSize(1);
    }

    /** A FIFO request mailbox, or the test is skipped where the backend has none yet. */
    final Mailbox<MainLoopRequest<Order>> fifoRequests(String hint) {
        Mailbox<MainLoopRequest<Order>> m = backend().openFifo(unique(hint), Shop.REQUESTS);
        assumeTrue(m != null, () -> getClass().getSimpleName() + "'s backend has no FIFO mailboxes yet");
        mailboxes.add(m);
        return m;
    }

    @ParameterizedTest(name = "receiveBatch {0}")
    @ValueSource(ints = {10, 1}) // runs of a key handed to one worker, and every worker receiving for itself
    @DisplayName("on a FIFO request mailbox, requests with a key are handled in send order per key, one at a time per"
            + " key, and different keys at once; a retried request keeps its key's later requests behind it")
    void keyedRequestsInOrder(int batch) throws Exception {
        var requests = fifoRequests("keyed");
        int keys = 6;
        int perKey = 12;
        Map<String, List<Integer>> started = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> inHandler = new ConcurrentHashMap<>();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        CountDownLatch firstTwoKeys = new CountDownLatch(2);
        AtomicBoolean keysOverlapped = new AtomicBoolean();
        AtomicBoolean failedOnce = new AtomicBoolean();
        RequestHandler<Order, Quote> handler = r -> {
            String key = r.key();
            int index = r.body().quantity();
            started.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>())).add(index);
            int inKey = inHandler.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            try {
                if (inKey > 1) {
                    overlaps.add(key + "#" + index);
                }
                if (index == 0 && (key.equals("k0") || key.equals("k1"))) {
                    // each waits for the other: only handlers of two keys running at once get past this
                    firstTwoKeys.countDown();
                    keysOverlapped.set(firstTwoKeys.await(30, TimeUnit.SECONDS) || keysOverlapped.get());
                }
                if (key.equals("k2") && index == 3 && failedOnce.compareAndSet(false, true)) {
                    throw new MailboxUnavailableException("k2#3 fails once, retryably", true, null);
                }
                Thread.sleep(2); // long enough for a second handler of the key, if one were started, to overlap
                return Shop.price(r.body());
            } finally {
                inHandler.get(key).decrementAndGet();
            }
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = track(loop(requests, handler).concurrency(4).receiveBatch(batch)
                .retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ofMillis(50), 1.0, Duration.ofMillis(50)))
                .meterRegistry(registry).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        List<CompletableFuture<Quote>> calls = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (int k = 0; k < keys; k++) {
                calls.add(client.callWithKey("k" + k, new Order("k" + k, i)));
            }
        }
        for (CompletableFuture<Quote> call : calls) {
            call.get(60, TimeUnit.SECONDS);
        }

        assertThat(overlaps).as("requests started while another of their key was in its handler").isEmpty();
        assertThat(keysOverlapped).as("the first requests of k0 and k1 were in their handlers at once").isTrue();
        List<Integer> inOrder = java.util.stream.IntStream.range(0, perKey).boxed().toList();
        for (int k = 0; k < keys; k++) {
            List<Integer> expected = new ArrayList<>(inOrder);
            if (k == 2) {
                expected.add(3, 3); // its failed attempt, then its retry, before k2#4
            }
            assertThat(started.get("k" + k)).as("handler starts of key k%d, in order", k).isEqualTo(expected);
        }
        assertThat(registry.get("mainloop.requests").tag("outcome", "retried").counter().count()).isEqualTo(1);
        assertThat(registry.get("mainloop.requests").tag("outcome", "success").counter().count())
                .isEqualTo(keys * perKey);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a key's run received at once is handled in order by one worker; when one of it is retried, the rest"
            + " go back unhandled behind it and are handled after its retry")
    void keyRunGivenBackBehindARetry() throws Exception {
        var requests = fifoRequests("key-run");
        MainLoopClient<Order, Quote> client = client(requests);
        List<CompletableFuture<Quote>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            calls.add(client.callWithKey("only", new Order("only", i)));
        }
        List<Integer> started = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean failedOnce = new AtomicBoolean();
        RequestHandler<Order, Quote> handler = r -> {
            started.add(r.body().quantity());
            if (r.body().quantity() == 1 && failedOnce.compareAndSet(false, true)) {
                throw new MailboxUnavailableException("fails once, retryably", true, null);
            }
            return Shop.price(r.body());
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // started after the four are queued, with room for all: the first receive takes them as one run
        MainLoop<Order, Quote> loop = track(loop(requests, handler).concurrency(4).receiveBatch(10)
                .retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ofMillis(50), 1.0, Duration.ofMillis(50)))
                .meterRegistry(registry).build());
        runInBackground(loop);
        for (CompletableFuture<Quote> call : calls) {
            call.get(60, TimeUnit.SECONDS);
        }
        assertThat(started).as("handler starts").containsExactly(0, 1, 1, 2, 3);
        assertThat(registry.get("mainloop.requests").tag("outcome", "requeued").counter().count())
                .as("the run's requests after the retried one, given back unhandled").isEqualTo(2);
        awaitEmpty(requests);
    }

    @Test
    @DisplayName("a FIFO request mailbox: a call without a key is refused by the mailbox; a bad key is refused before"
            + " anything is sent; a keyed request given up on goes to a FIFO dead-letter mailbox under its key")
    void keysOnAFifoMailbox() throws Exception {
        var requests = fifoRequests("keys");
        Mailbox<DeadLetter<Order>> deadLetters = backend().openFifo(unique("keys-dlq"), MainLoopCodecs.deadLetters(Order.class));
        mailboxes.add(deadLetters);
        RequestHandler<Order, Quote> handler = r -> {
            if (r.body().quantity() < 0) {
                throw new MailboxUnavailableException("never works", true, null);
            }
            return Shop.price(r.body());
        };
        MainLoop<Order, Quote> loop = track(loop(requests, handler).deadLetters(deadLetters)
                .retryPolicy(RetryPolicy.defaults().withMaxDeliveries(1)).build());
        runInBackground(loop);
        MainLoopClient<Order, Quote> client = client(requests);

        assertThatThrownBy(() -> client.call(new Order("no-key", 1)).get(60, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group id");
        assertThatThrownBy(() -> client.callWithKey("not a key", new Order("bad", 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("request key");
        assertThat(client.callAndWait(MainLoopRequest.of(new Order("pear", 2)).withKey("customer-42"),
                Duration.ofSeconds(60))).isEqualTo(new Quote("pear", 2, 250));

        CompletableFuture<Quote> doomed = client.callWithKey("customer-7", new Order("never", -1));
        assertThatThrownBy(() -> doomed.get(60, TimeUnit.SECONDS)).cause().isInstanceOf(RequestFailedException.class);
        Message<DeadLetter<Order>> dead = deadLetters.receive(ReceiveOptions.defaults()
                .withWaitTime(Duration.ofSeconds(10))).get(0);
        assertThat(dead.groupId()).isEqualTo("customer-7");
        assertThat(dead.body().request().key()).isEqualTo("customer-7");
        awaitEmpty(requests);
    }

    // ---------------------------------------------------------------------------------------------

    final String unique(String hint) {
        return "ml-" + hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A request mailbox holding one message whose stored body is {@code text}, which is not a request. */
    protected Mailbox<MainLoopRequest<Order>> withUndecodable(String name, String text) {
        open(name, Codec.utf8()).send(text);
        return open(name, Shop.REQUESTS);
    }

    /** Opens a mailbox that the test closes when it ends. */
    final <T> Mailbox<T> open(String name, Codec<T> codec) {
        Mailbox<T> m = backend().open(name, codec);
        mailboxes.add(m);
        return m;
    }

    final Mailbox<MainLoopRequest<Order>> requests(String hint) {
        return open(unique(hint), Shop.REQUESTS);
    }

    /** The pricing handler, counting its calls. */
    static RequestHandler<Order, Quote> counting(AtomicInteger calls) {
        return r -> {
            calls.incrementAndGet();
            return Shop.price(r.body());
        };
    }

    final MainLoop.Builder<Order, Quote> loop(Mailbox<MainLoopRequest<Order>> requests, RequestHandler<Order, Quote> handler) {
        return MainLoop.builder(requests, handler)
                .replyTo(name -> backend().open(name, Shop.RESULTS))
                .waitTime(Duration.ofSeconds(1))
                .visibilityTimeout(Duration.ofSeconds(10))
                .shutdownGrace(Duration.ofSeconds(5));
    }

    final MainLoopClient<Order, Quote> client(Mailbox<MainLoopRequest<Order>> requests) {
        MainLoopClient<Order, Quote> client = MainLoopClient.builder(requests, name -> backend().open(name, Shop.RESULTS))
                .receiveWait(Duration.ofSeconds(1)).defaultTimeout(PATIENCE).build();
        clients.add(client);
        return client;
    }

    final <L extends AutoCloseable> L track(L loop) {
        loops.add(loop);
        return loop;
    }

    final Thread runInBackground(MainLoop<?, ?> loop) {
        Thread t = new Thread(() -> {
            try {
                loop.run();
            } catch (Throwable e) {
                runnerFailures.add(e);
            }
        }, "test-run-" + loop.name());
        t.setDaemon(true);
        t.start();
        runners.add(t);
        return t;
    }

    /** Receives until {@code count} results have arrived, acknowledging each. */
    final List<MainLoopResult<Quote>> results(Mailbox<MainLoopResult<Quote>> replies, int count) {
        return drain(replies, count);
    }

    static <T> List<T> drain(Mailbox<T> mailbox, int count) {
        List<T> out = new ArrayList<>();
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (out.size() < count && System.nanoTime() < until) {
            for (Message<T> m : mailbox.receive(ReceiveOptions.defaults().withMaxMessages(10)
                    .withWaitTime(Duration.ofSeconds(1)))) {
                out.add(m.body());
                m.acknowledge();
            }
        }
        assertThat(out).as("messages in '" + mailbox.name() + "'").hasSize(count);
        return Collections.unmodifiableList(out);
    }

    static void assertNothingMore(Mailbox<?> mailbox) {
        assertThat(mailbox.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(2))))
                .as("nothing more in '" + mailbox.name() + "'").isEmpty();
    }

    /** Polls the count: the backend offers nothing to wait on for "empty". */
    static void awaitEmpty(Mailbox<?> mailbox) throws InterruptedException {
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (mailbox.approximateCount() != 0) {
            assertThat(System.nanoTime()).as("'" + mailbox.name() + "' empties").isLessThan(until);
            Thread.sleep(20);
        }
    }
}
