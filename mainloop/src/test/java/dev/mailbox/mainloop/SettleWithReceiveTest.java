package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.ForwardingMailbox;
import dev.mailbox.testkit.Threads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How MainLoop sends acknowledgements with its receives ({@link Mailbox#acknowledgeAndReceive}): which
 * ones ride along, and what a failed call does.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SettleWithReceiveTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("at concurrency 1, a finished request's acknowledgement goes with the worker's next receive")
    void ridesOnTheNextReceive() throws Exception {
        Recording requests = new Recording();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        Semaphore proceed = new Semaphore(0);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            proceed.acquire();
            return Shop.price(r.body());
        }).responses(responses).concurrency(1).waitTime(Duration.ZERO).build();
        List<String> ids = new ArrayList<>();
        for (String item : List.of("a", "b", "c")) {
            ids.add(requests.send(MainLoopRequest.of(new Order(item, 1))));
        }
        CompletableFuture<Long> taken = new CompletableFuture<>();
        Thread runner = new Thread(() -> taken.complete(loop.run(3)));
        runner.start();

        for (int call = 2; call <= 3; call++) {
            requests.awaitCalls(call - 1); // the one worker now runs the request it received last
            proceed.release();
        }
        requests.awaitCalls(3);
        proceed.release(); // the last request: the loop is done receiving, so the drain acknowledges it

        assertThat(taken.get(30, TimeUnit.SECONDS)).isEqualTo(3);
        assertThat(requests.settled).containsExactly(List.of(), List.of(ids.get(0)), List.of(ids.get(1)));
        assertThat(responses.sentCount()).isEqualTo(3);
        assertThat(requests.approximateCount()).as("all three acknowledged").isZero();
        loop.close();
    }

    @Test
    @DisplayName("above concurrency 1, with every worker busy, a finished request's acknowledgement goes with the runner's next receive")
    void ridesOnTheRunnersNextReceive() throws Exception {
        Recording requests = new Recording();
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        Semaphore proceed = new Semaphore(0);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            proceed.acquire();
            return Shop.price(r.body());
        }).responses(responses).concurrency(2).waitTime(Duration.ZERO).build();
        List<String> ids = new ArrayList<>();
        for (String item : List.of("a", "b", "c")) {
            ids.add(requests.send(MainLoopRequest.of(new Order(item, 1))));
        }
        CompletableFuture<Long> taken = new CompletableFuture<>();
        Thread runner = new Thread(() -> taken.complete(loop.run(2)));
        runner.start();

        requests.awaitCalls(1); // a and b, one on each worker
        Threads.awaitParkedIn(runner, f -> f.getClassName().equals(MainLoop.Slots.class.getName())
                && f.getMethodName().equals("acquireUpTo"), PATIENCE); // waiting for a worker
        proceed.release(); // one of them finishes and leaves its acknowledgement to that receive
        requests.awaitCalls(2);
        proceed.release(2); // the other and c: the loop is done receiving, so they acknowledge on their own

        assertThat(taken.get(30, TimeUnit.SECONDS)).isEqualTo(3);
        assertThat(requests.settled).hasSize(2);
        assertThat(requests.settled.get(0)).isEmpty();
        assertThat(requests.settled.get(1)).singleElement().isIn(ids.get(0), ids.get(1));
        assertThat(responses.sentCount()).isEqualTo(3);
        assertThat(requests.approximateCount()).as("all three acknowledged").isZero();
        loop.close();
    }

    @Test
    @DisplayName("a combined call that fails for good does not stop the loop: it receives again without the acknowledgements")
    void failureDoesNotStopTheLoop() throws Exception {
        Recording requests = new Recording();
        requests.failNextSettle(new MailboxException("refused")); // not retryable: a receive alone would stop the loop
        CollectingMailbox<MainLoopResult<Quote>> responses = new CollectingMailbox<>("responses");
        Semaphore proceed = new Semaphore(0);
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, (MainLoopRequest<Order> r) -> {
            proceed.acquire();
            return Shop.price(r.body());
        }).responses(responses).concurrency(1).waitTime(Duration.ZERO).build();
        String first = requests.send(MainLoopRequest.of(new Order("a", 1)));
        requests.send(MainLoopRequest.of(new Order("b", 1)));
        CompletableFuture<Long> taken = new CompletableFuture<>();
        Thread runner = new Thread(() -> {
            try {
                taken.complete(loop.run(2));
            } catch (Throwable e) {
                taken.completeExceptionally(e);
            }
        });
        runner.start();

        requests.awaitCalls(1);
        proceed.release(2);

        assertThat(taken.get(30, TimeUnit.SECONDS)).isEqualTo(2);
        assertThat(requests.settled).as("the failed call, then a receive without it")
                .containsExactly(List.of(), List.of(first), List.of());
        assertThat(responses.sentCount()).isEqualTo(2);
        // as when a worker's own acknowledge fails: 'a' comes back after its visibility timeout and is
        // answered from memory (MainLoopSuite's lost acknowledgement); 'b' was acknowledged by the drain
        assertThat(requests.approximateCount()).isEqualTo(1);
        loop.close();
    }

    /**
     * An in-memory request mailbox that records the ids each {@code acknowledgeAndReceive} was asked to
     * settle, and can fail the next call that has something to settle (before doing anything).
     */
    private static final class Recording extends ForwardingMailbox<MainLoopRequest<Order>> {
        final List<List<String>> settled = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final Semaphore calls = new Semaphore(0);
        private volatile RuntimeException failure;

        Recording() {
            super(InMemoryMailbox.builder("requests", Shop.REQUESTS).build());
        }

        void failNextSettle(RuntimeException e) {
            failure = e;
        }

        void awaitCalls(int n) throws InterruptedException {
            assertThat(calls.tryAcquire(n, PATIENCE.toSeconds(), TimeUnit.SECONDS)).as(n + " combined calls").isTrue();
            calls.release(n);
        }

        @Override
        public List<Message<MainLoopRequest<Order>>> acknowledgeAndReceive(
                List<? extends Message<MainLoopRequest<Order>>> acknowledge, ReceiveOptions options,
                Consumer<? super Message<MainLoopRequest<Order>>> stale) {
            settled.add(acknowledge.stream().map(Message::id).toList());
            try {
                RuntimeException f = failure;
                if (f != null && !acknowledge.isEmpty()) {
                    failure = null;
                    throw f;
                }
                return delegate.acknowledgeAndReceive(acknowledge, options, stale);
            } finally {
                calls.release();
            }
        }

        @Override
        public Mailbox<MainLoopRequest<Order>> fenced(long epoch) {
            throw new UnsupportedOperationException("not used here");
        }
    }
}
