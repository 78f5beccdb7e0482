package dev.mailbox.inmemory;

import static dev.mailbox.inmemory.InMemoryMailboxTest.receiveParked;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.TimeSource;
import dev.mailbox.api.spi.Inspection;
import dev.mailbox.testkit.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Details of InMemoryMailbox that neither the TCK nor {@link InMemoryMailboxTest} pinned down, found by mutation
 * testing (TESTING.md): each test fails if the check, call or bound it names is removed or changed.
 */
class InMemoryMailboxDetailTest {

    private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60));
    private static final ReceiveOptions ALL = ReceiveOptions.defaults().withMaxMessages(10);
    private static final Duration LONG = Duration.ofMinutes(10);

    private final ManualClock clock = new ManualClock();

    private InMemoryMailbox<String> standard(String name) {
        return InMemoryMailbox.builder(name, Codec.utf8()).timeSource(clock).build();
    }

    private InMemoryMailbox<String> fifo(String name) {
        return InMemoryMailbox.builder(name, Codec.utf8()).timeSource(clock).fifo(FifoOptions.defaults()).build();
    }

    private static SendOptions group(String id) {
        return SendOptions.defaults().withGroupId(id);
    }

    private static SendOptions dedup(String id) {
        return SendOptions.defaults().withDeduplicationId(id);
    }

    private static List<String> drain(Mailbox<String> m) {
        List<String> bodies = new ArrayList<>();
        List<Message<String>> got;
        while (!(got = m.receive(ALL)).isEmpty()) {
            got.forEach(x -> bodies.add(x.body()));
        }
        return bodies;
    }

    /**
     * Fails unless another thread can take the mailbox's lock now: an operation that returned (or threw) still
     * holding it would shut every other thread out for good.
     */
    private static void assertLockFree(InMemoryMailbox<?> m, String after) {
        CompletableFuture<Void> probe = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                m.approximateCount();
            } catch (MailboxClosedException closed) {
                // it took the lock to find out
            }
            probe.complete(null);
        }, "lock probe");
        t.setDaemon(true);
        t.start();
        assertThat(probe).as("another thread takes the lock after %s", after).succeedsWithin(Duration.ofSeconds(10));
    }

    /** A message that says it has {@code handle}, for the batch calls, which read the handle from the message. */
    private static Message<String> withHandle(Message<String> real, String handle) {
        return new Message<>() {
            @Override
            public String id() {
                return real.id();
            }

            @Override
            public String body() {
                return real.body();
            }

            @Override
            public String receiptHandle() {
                return handle;
            }

            @Override
            public int deliveryCount() {
                return real.deliveryCount();
            }

            @Override
            public Instant enqueuedAt() {
                return real.enqueuedAt();
            }

            @Override
            public Map<String, String> attributes() {
                return real.attributes();
            }

            @Override
            public void acknowledge() {
                throw new UnsupportedOperationException();
            }

            @Override
            public void nack(Duration visibilityTimeout) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void extendVisibility(Duration timeout) {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Nested
    @DisplayName("the lock")
    class Locking {

        @Test
        @DisplayName("every operation lets go of the mailbox's lock, also when it throws, and so does a dead-letter move")
        void everyOperationUnlocks() {
            try (InMemoryMailbox<String> dlq = standard("dlq");
                 InMemoryMailbox<String> m = InMemoryMailbox.builder("locks", Codec.utf8()).timeSource(clock)
                         .redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                Map<String, Runnable> steps = new java.util.LinkedHashMap<>();
                List<Message<String>> held = new ArrayList<>();
                steps.put("send", () -> m.send("a"));
                steps.put("a deduplicated send", () -> m.send("b", dedup("b")));
                steps.put("sendBatch", () -> m.sendBatch(List.of("c", "d", "e", "f", "g", "h")));
                steps.put("a deduplicated sendBatch", () -> m.sendBatch(List.of("i"), dedup("i")));
                steps.put("receive", () -> held.addAll(m.receive(ALL.withVisibilityTimeout(LONG))));
                steps.put("acknowledge", () -> held.get(0).acknowledge());
                steps.put("extendVisibility", () -> held.get(1).extendVisibility(LONG));
                steps.put("nack", () -> held.get(1).nack(LONG));
                steps.put("acknowledge by handle", () -> m.acknowledge(held.get(2).receiptHandle()));
                steps.put("extendVisibility by handle", () -> m.extendVisibility(held.get(3).receiptHandle(), LONG));
                steps.put("nack by handle", () -> m.nack(held.get(3).receiptHandle(), Duration.ZERO));
                steps.put("acknowledgeBatch", () -> m.acknowledgeBatch(List.of(held.get(4))));
                steps.put("a stale nack", () -> assertThatThrownBy(() -> held.get(1).nack(Duration.ZERO))
                        .isInstanceOf(ReceiptHandleExpiredException.class));
                steps.put("a stale nack by handle", () -> assertThatThrownBy(() -> m.nack(held.get(1).receiptHandle(),
                        Duration.ZERO)).isInstanceOf(ReceiptHandleExpiredException.class));
                steps.put("a stale extend by handle", () -> assertThatThrownBy(() -> m.extendVisibility(
                        held.get(1).receiptHandle(), LONG)).isInstanceOf(ReceiptHandleExpiredException.class));
                steps.put("a stale acknowledge by handle", () -> assertThatThrownBy(() -> m.acknowledge(
                        held.get(0).receiptHandle())).isInstanceOf(ReceiptHandleExpiredException.class));
                steps.put("a fenced receive", () -> m.fenced(2).receive());
                steps.put("a refused fenced receive", () -> assertThatThrownBy(() -> m.fenced(1).receive())
                        .isInstanceOf(FencedException.class));
                steps.put("a refused batch acknowledge", () -> assertThatThrownBy(() -> m.fenced(1)
                        .acknowledgeBatch(List.of(held.get(5)))).isInstanceOf(FencedException.class));
                steps.put("inspect", m::inspect);
                steps.put("peek", () -> m.peek(10));
                steps.put("approximateCount", m::approximateCount);
                steps.put("the count of remembered ids", m::rememberedDeduplicationIds);
                steps.put("the count of deliveries by handle", m::deliveriesByHandle);
                steps.put("the count of groups", m::groupsHeld);
                steps.put("a receive that dead-letters", () -> {
                    held.get(5).nack(Duration.ZERO);
                    m.receive(ALL);
                    assertThat(dlq.approximateCount()).isPositive();
                    assertLockFree(dlq, "taking a dead letter");
                });
                steps.put("purge", m::purge);
                steps.put("close", m::close);
                steps.put("a call on the closed mailbox", () -> assertThatThrownBy(() -> m.send("z"))
                        .isInstanceOf(MailboxClosedException.class));
                for (Map.Entry<String, Runnable> step : steps.entrySet()) {
                    step.getValue().run();
                    assertLockFree(m, step.getKey());
                }
            }
        }
    }

    @Nested
    @DisplayName("a closed mailbox")
    class Closed {

        @Test
        @DisplayName("refuses a received message's nack and extend, every call by handle, batch acknowledges, fenced views and inspection")
        void refusesEverything() {
            InMemoryMailbox<String> m = standard("closing");
            m.sendBatch(List.of("a", "b"));
            List<Message<String>> got = m.receive(ALL.withVisibilityTimeout(LONG));
            Message<String> a = got.get(0);
            m.close();

            assertThatThrownBy(() -> a.nack(Duration.ZERO)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> a.extendVisibility(LONG)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.acknowledge(a.receiptHandle())).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.nack(a.receiptHandle(), Duration.ZERO)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.extendVisibility(a.receiptHandle(), LONG))
                    .isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.acknowledgeBatch(got)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.fenced(1).receive()).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(m::inspect).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.peek(10)).isInstanceOf(MailboxClosedException.class);
        }

        @Test
        @DisplayName("closing takes the mailbox off its time source, so a long-lived clock does not keep closed mailboxes")
        void leavesTheClock() {
            ListeningClock time = new ListeningClock(0);
            InMemoryMailbox<String> m = InMemoryMailbox.builder("leaves", Codec.utf8()).timeSource(time).build();
            assertThat(time.listeners).hasSize(1);
            m.close();
            assertThat(time.listeners).isEmpty();
        }
    }

    @Nested
    @DisplayName("receipt handles")
    class Handles {

        @Test
        @DisplayName("a handle of a message never sent here is refused as not ours by nack, extend and batch acknowledge, even the next one to be issued")
        void neverIssued() {
            try (InMemoryMailbox<String> m = standard("issued")) {
                m.send("x");
                Message<String> x = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(LONG)).get(0);
                String tag = x.receiptHandle().split(":")[0];
                String next = tag + ":1:1"; // one message was sent: seq 1 is the next, not yet issued

                for (String forged : List.of(next, tag + ":ff:1")) {
                    assertThatThrownBy(() -> m.nack(forged, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("no such message was ever sent");
                    assertThatThrownBy(() -> m.extendVisibility(forged, LONG))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no such message was ever sent");
                    assertThatThrownBy(() -> m.acknowledge(forged)).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("no such message was ever sent");
                    assertThatThrownBy(() -> m.acknowledgeBatch(List.of(x, withHandle(x, forged))))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no such message was ever sent");
                    assertThatThrownBy(() -> m.fenced(1).acknowledgeBatch(List.of(x, withHandle(x, forged))))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no such message was ever sent");
                }
                assertThat(m.approximateCount()).as("nothing of a refused batch was acknowledged").isEqualTo(1);
                x.acknowledge();
            }
        }

        @Test
        @DisplayName("a stale nack or extend says whether the delivery was nacked or its visibility ended")
        void staleSaysWhy() {
            try (InMemoryMailbox<String> m = standard("why")) {
                m.sendBatch(List.of("nacked", "lapsed"));
                List<Message<String>> got = m.receive(ALL.withVisibilityTimeout(Duration.ofSeconds(1)));
                got.get(0).nack(LONG);
                clock.advance(Duration.ofSeconds(1));
                m.send("touch"); // applies the lapse

                for (Consumer<Message<String>> call : List.<Consumer<Message<String>>>of(
                        x -> x.nack(Duration.ZERO), x -> x.extendVisibility(LONG))) {
                    assertThatThrownBy(() -> call.accept(got.get(0))).isInstanceOf(ReceiptHandleExpiredException.class)
                            .hasMessageContaining("the message was nacked");
                    assertThatThrownBy(() -> call.accept(got.get(1))).isInstanceOf(ReceiptHandleExpiredException.class)
                            .hasMessageContaining("its visibility timeout ended");
                }
            }
        }

        @Test
        @DisplayName("a dead letter's receipt handle acts in the dead-letter mailbox like any other")
        void deadLetterHandle() {
            try (InMemoryMailbox<String> dlq = standard("dlq");
                 InMemoryMailbox<String> m = InMemoryMailbox.builder("source", Codec.utf8()).timeSource(clock)
                         .redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                m.send("poison");
                m.receive().get(0).nack(Duration.ZERO);
                assertThat(m.receive()).isEmpty();
                dlq.send("own");

                List<Message<String>> both = dlq.receive(ALL);
                assertThat(both).extracting(Message::body).containsExactly("poison", "own");
                assertThat(both.get(0).id()).isNotEqualTo(both.get(1).id());
                dlq.acknowledge(both.get(0).receiptHandle());
                dlq.acknowledge(both.get(1).receiptHandle());
                assertThat(dlq.approximateCount()).isZero();
            }
        }

        @Test
        @DisplayName("message ids are distinct and short: the mailbox's tag and the message's number in hex")
        void ids() {
            try (InMemoryMailbox<String> m = standard("ids")) {
                Set<String> ids = new HashSet<>();
                for (int i = 0; i < 300; i++) {
                    String id = m.send("x");
                    assertThat(id).hasSizeLessThanOrEqualTo(8 + 1 + 16);
                    ids.add(id);
                }
                assertThat(ids).hasSize(300);
            }
        }
    }

    @Nested
    @DisplayName("fences")
    class Fences {

        @Test
        @DisplayName("a batch acknowledge of messages from several epochs (and none) is refused whole when one is below the fence")
        void lowestEpochDecides() {
            try (InMemoryMailbox<String> m = standard("epochs")) {
                m.sendBatch(List.of("a", "b", "c"));
                ReceiveOptions one = ReceiveOptions.defaults().withVisibilityTimeout(LONG);
                Message<String> fromEpoch1 = m.fenced(1).receive(one).get(0);
                Message<String> fromEpoch2 = m.fenced(2).receive(one).get(0);
                Message<String> unfenced = m.receive(one).get(0);

                assertThatThrownBy(() -> m.acknowledgeBatch(List.of(fromEpoch1, fromEpoch2, unfenced)))
                        .isInstanceOf(FencedException.class);
                assertThat(m.approximateCount()).isEqualTo(3);
                assertThat(m.acknowledgeBatch(List.of(fromEpoch2, unfenced))).isEmpty();
                assertThat(m.approximateCount()).isEqualTo(1);
            }
        }

        @Test
        @DisplayName("a batch acknowledge through a view of a newer epoch raises the fence, shutting out the older holder")
        void batchRaisesTheFence() {
            try (InMemoryMailbox<String> m = standard("raise")) {
                m.sendBatch(List.of("a", "b"));
                Message<String> a = m.fenced(1).receive(ReceiveOptions.defaults().withVisibilityTimeout(LONG)).get(0);

                assertThat(m.fenced(5).acknowledgeBatch(List.of(a))).isEmpty();

                assertThatThrownBy(() -> m.fenced(4).receive()).isInstanceOf(FencedException.class);
                assertThat(m.fenced(5).receive()).extracting(Message::body).containsExactly("b");
            }
        }

        @Test
        @DisplayName("a view's batch acknowledge returns the messages that were stale")
        void viewReturnsStale() {
            try (InMemoryMailbox<String> m = standard("stale")) {
                m.sendBatch(List.of("a", "b"));
                Mailbox<String> view = m.fenced(1);
                List<Message<String>> got = view.receive(ALL.withVisibilityTimeout(LONG));
                got.get(0).acknowledge();

                assertThat(view.acknowledgeBatch(got)).containsExactly(got.get(0));
                assertThat(m.approximateCount()).isZero();
            }
        }
    }

    @Nested
    @DisplayName("sending")
    class Sending {

        @Test
        @DisplayName("a batch with a null body is refused, saying so")
        void nullInBatch() {
            try (InMemoryMailbox<String> m = standard("nulls")) {
                assertThatThrownBy(() -> m.sendBatch(Arrays.asList("a", null)))
                        .isInstanceOf(NullPointerException.class).hasMessage("bodies contains null");
                assertThat(m.approximateCount()).isZero();
            }
        }

        @Test
        @DisplayName("a deduplicated batch needs room only for its new messages, and is refused whole when they do not fit")
        void deduplicatedBatchCapacity() {
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("room", Codec.utf8()).timeSource(clock)
                    .capacity(3).build()) {
                List<String> first = m.sendBatch(List.of("x", "y"), dedup("b"));

                assertThatThrownBy(() -> m.sendBatch(List.of("x", "y"), dedup("c")))
                        .isInstanceOf(MailboxFullException.class);
                assertThat(m.approximateCount()).isEqualTo(2);
                assertThat(m.rememberedDeduplicationIds()).as("a refused send is not remembered").isEqualTo(2);

                List<String> again = m.sendBatch(List.of("x", "y", "z"), dedup("b"));
                assertThat(again).startsWith(first.get(0), first.get(1)).doesNotHaveDuplicates();
                assertThat(m.approximateCount()).isEqualTo(3);
            }
        }

        @Test
        @DisplayName("a batch's deduplication ids expire after the window like a single send's")
        void deduplicatedBatchExpires() {
            try (InMemoryMailbox<String> m = standard("window")) {
                String first = m.sendBatch(List.of("x"), dedup("w")).get(0);
                assertThat(m.sendBatch(List.of("x"), dedup("w"))).containsExactly(first);
                clock.advance(Limits.DEDUPLICATION_WINDOW);

                assertThat(m.sendBatch(List.of("x"), dedup("w"))).doesNotContain(first);
                assertThat(m.approximateCount()).isEqualTo(2);
            }
        }

        @Test
        @DisplayName("a message sent without delay is visible at once, even on a clock that reads below zero (System.nanoTime may)")
        void negativeClock() {
            ListeningClock time = new ListeningClock(-Duration.ofMinutes(1).toNanos());
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("below-zero", Codec.utf8()).timeSource(time).build()) {
                m.send("x");
                assertThat(m.receive()).extracting(Message::body).containsExactly("x");
            }
        }
    }

    @Nested
    @DisplayName("order")
    class Order {

        /**
         * Each way a message can join the visible ones first makes visible what became due before it: "early" was
         * due first, so it is delivered first.
         */
        @Test
        @DisplayName("a message whose delay ended before another joined the queue is delivered first, however the other joined")
        void dueFirst() {
            Map<String, Consumer<InMemoryMailbox<String>>> joins = new java.util.LinkedHashMap<>();
            joins.put("send", m -> m.send("late"));
            joins.put("deduplicated send", m -> m.send("late", dedup("late")));
            joins.put("sendBatch", m -> m.sendBatch(List.of("late")));
            joins.put("deduplicated sendBatch", m -> m.sendBatch(List.of("late"), dedup("late")));
            for (Map.Entry<String, Consumer<InMemoryMailbox<String>>> join : joins.entrySet()) {
                try (InMemoryMailbox<String> m = standard("due-" + join.getKey().replace(' ', '-'))) {
                    m.send("early", SendOptions.defaults().withDelay(Duration.ofSeconds(1)));
                    clock.advance(Duration.ofSeconds(1));
                    join.getValue().accept(m);
                    assertThat(drain(m)).as(join.getKey()).containsExactly("early", "late");
                }
            }
        }

        @Test
        @DisplayName("a message nacked after another's delay ended goes behind it")
        void nackAfterDue() {
            try (InMemoryMailbox<String> m = standard("nack-order")) {
                m.send("late");
                Message<String> late = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(LONG)).get(0);
                m.send("early", SendOptions.defaults().withDelay(Duration.ofSeconds(1)));
                clock.advance(Duration.ofSeconds(1));
                late.nack(Duration.ZERO);
                assertThat(drain(m)).containsExactly("early", "late");
            }
        }

        @Test
        @DisplayName("a dead letter goes behind what became visible in the dead-letter mailbox before it arrived")
        void deadLetterAfterDue() {
            try (InMemoryMailbox<String> dlq = standard("dlq");
                 InMemoryMailbox<String> m = InMemoryMailbox.builder("source", Codec.utf8()).timeSource(clock)
                         .redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                m.send("late");
                m.receive().get(0).nack(Duration.ZERO);
                dlq.send("early", SendOptions.defaults().withDelay(Duration.ofSeconds(1)));
                clock.advance(Duration.ofSeconds(1));
                assertThat(m.receive()).isEmpty(); // moves "late" to the dead-letter mailbox
                assertThat(drain(dlq)).containsExactly("early", "late");
            }
        }

        @Test
        @DisplayName("an extend to later lets the messages due before it become visible on time")
        void extendLater() {
            try (InMemoryMailbox<String> m = standard("extend-later")) {
                m.send("a");
                m.send("b");
                Message<String> a = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(1))).get(0);
                m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(2)));
                a.extendVisibility(Duration.ofSeconds(10));
                clock.advance(Duration.ofSeconds(2));
                assertThat(drain(m)).containsExactly("b");
            }
        }

        @Test
        @DisplayName("between noisy tenants with as many in flight the older message goes first; with fewer in flight, that tenant's")
        void leastNoisyTies() {
            int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
            ReceiveOptions hold = ALL.withVisibilityTimeout(LONG);
            // as many in flight: b's message is older than a's, but a was set aside first
            try (InMemoryMailbox<String> m = standard("ties")) {
                inFlight(m, "a", min, hold);
                inFlight(m, "b", min, hold);
                m.send("b-late", group("b").withDelay(Duration.ofSeconds(1)));
                m.send("a-late", group("a"));
                clock.advance(Duration.ofSeconds(1)); // visible in this order: a-late, b-late
                assertThat(m.receive().get(0).body()).isEqualTo("b-late");
            }
            // a has one more in flight: b goes first though a's message is older
            try (InMemoryMailbox<String> m = standard("fewer")) {
                inFlight(m, "a", min + 1, hold);
                inFlight(m, "b", min, hold);
                m.send("a-late", group("a"));
                m.send("b-late", group("b"));
                assertThat(m.receive().get(0).body()).isEqualTo("b-late");
            }
        }

        private void inFlight(InMemoryMailbox<String> m, String tenant, int n, ReceiveOptions hold) {
            for (int i = 0; i < n; i++) {
                m.send(tenant + i, group(tenant));
            }
            int taken = 0;
            while (taken < n) {
                taken += m.receive(hold).size();
            }
        }
    }

    @Nested
    @DisplayName("waiting receives")
    class Waiting {

        @Test
        @DisplayName("a receive with a short wait on an empty mailbox returns empty once the wait is over (system clock)")
        void shortWait() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("short")) {
                CompletableFuture<List<Message<String>>> got = receiveParked(m,
                        ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(50)));
                assertThat(got.get(10, TimeUnit.SECONDS)).isEmpty();
            }
        }

        @Test
        @DisplayName("a receive waiting on an empty mailbox wakes for a delayed message sent while it waits (system clock)")
        void wakesForDelayed() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("delayed")) {
                CompletableFuture<List<Message<String>>> got = receiveParked(m, WAIT);
                m.send("x", SendOptions.defaults().withDelay(Duration.ofMillis(50)));
                assertThat(got.get(10, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("x");
            }
        }

        @Test
        @DisplayName("an asynchronous receive on an empty mailbox completes empty once its wait is over (system clock)")
        void asyncWaitEnds() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("async-short")) {
                CompletableFuture<List<Message<String>>> got =
                        m.receiveAsync(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(50)));
                assertThat(got.get(10, TimeUnit.SECONDS)).isEmpty();
                m.send("after");
                assertThat(m.receive()).as("the finished receive took nothing").extracting(Message::body)
                        .containsExactly("after");
            }
        }

        @Test
        @DisplayName("an asynchronous receive waiting long wakes when a delayed message sent before it becomes visible (system clock)")
        void asyncWakesAtDelayEnd() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("async-delayed")) {
                m.send("x", SendOptions.defaults().withDelay(Duration.ofMillis(50)));
                CompletableFuture<List<Message<String>>> got = m.receiveAsync(WAIT);
                assertThat(got.get(10, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("x");
            }
        }

        @Test
        @DisplayName("a receive waiting on a FIFO mailbox wakes as soon as a group has a message")
        void fifoWakes() throws Exception {
            try (InMemoryMailbox<String> m = fifo("fifo-wait")) {
                CompletableFuture<List<Message<String>>> got = receiveParked(m, WAIT);
                m.send("x", group("g"));
                assertThat(got.get(10, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("x");
            }
        }
    }

    @Nested
    @DisplayName("dead letters of a FIFO mailbox")
    class FifoDeadLetters {

        @Test
        @DisplayName("a receive that meets one it cannot dead-letter returns what it took before; the next receive says why")
        void closedDeadLetterMailboxMidReceive() {
            InMemoryMailbox<String> dlq = fifo("dlq");
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("source", Codec.utf8()).timeSource(clock)
                    .fifo(FifoOptions.defaults()).redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                m.send("poison", group("p"));
                Message<String> poison = m.receive().get(0);
                m.send("fresh", group("f"));
                poison.nack(Duration.ZERO); // groups in turn: f, then p
                dlq.close();

                assertThat(m.receive(ALL)).extracting(Message::body).containsExactly("fresh");
                assertThatThrownBy(m::receive).isInstanceOf(MailboxClosedException.class).hasMessageContaining("'dlq'");
                assertThat(m.approximateCount()).isEqualTo(2);
            }
        }
    }

    @Nested
    @DisplayName("inspection")
    class Inspecting {

        @Test
        @DisplayName("a lapsed delivery counts as queued, not in flight, and an acknowledged one as nothing")
        void lapsedAndAcknowledged() {
            try (InMemoryMailbox<String> m = standard("lapsed")) {
                m.sendBatch(List.of("a", "b"));
                List<Message<String>> got = m.receive(ALL.withVisibilityTimeout(Duration.ofSeconds(1)));
                got.get(0).acknowledge();
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::inFlight,
                        Inspection.Stats::delayed).containsExactly(0L, 1L, 0L);
                clock.advance(Duration.ofSeconds(1));
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::inFlight,
                        Inspection.Stats::delayed).containsExactly(1L, 0L, 0L);
            }
        }

        @Test
        @DisplayName("the counts add up to the mailbox's count with FIFO groups, set-aside tenants and late acknowledgements")
        void countsAddUp() {
            try (InMemoryMailbox<String> m = fifo("fifo-counts")) {
                m.sendBatch(List.of("a", "b"), group("g"));
                m.send("c", group("h"));
                m.receive(ReceiveOptions.defaults().withVisibilityTimeout(LONG));
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::inFlight,
                        Inspection.Stats::delayed).containsExactly(2L, 1L, 0L);
            }
            try (InMemoryMailbox<String> m = standard("late-counts")) {
                m.send("x");
                Message<String> x = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(1))).get(0);
                clock.advance(Duration.ofSeconds(1));
                m.send("y"); // x is visible again
                x.acknowledge();
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::inFlight,
                        Inspection.Stats::delayed).containsExactly(1L, 0L, 0L);
                assertThat(m.peek(10)).extracting(p -> new String(p.body(), StandardCharsets.UTF_8)).containsExactly("y");
            }
            try (InMemoryMailbox<String> m = standard("aside-counts")) {
                int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
                for (int i = 0; i < min + 2; i++) {
                    m.send("n" + i, group("noisy"));
                }
                int taken = 0;
                while (taken < min) {
                    taken += m.receive(ALL.withMaxMessages(Math.min(10, min - taken)).withVisibilityTimeout(LONG)).size();
                }
                m.send("q", group("quiet"));
                assertThat(m.receive(ReceiveOptions.defaults().withVisibilityTimeout(LONG)).get(0).body())
                        .as("the noisy tenant's two are set aside").isEqualTo("q");
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::inFlight,
                        Inspection.Stats::delayed).containsExactly(2L, (long) min + 1, 0L);
            }
        }

        @Test
        @DisplayName("a message is queued from the very nanosecond its delay ends, however many are due")
        void dueExactly() {
            try (InMemoryMailbox<String> m = standard("exactly")) {
                for (int s = 1; s <= 3; s++) {
                    m.send("d" + s, SendOptions.defaults().withDelay(Duration.ofSeconds(s)));
                }
                clock.advance(Duration.ofSeconds(1));
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::delayed)
                        .containsExactly(1L, 2L);
                assertThat(m.peek(10)).extracting(Inspection.Peeked::state).containsExactly(Inspection.State.QUEUED,
                        Inspection.State.DELAYED, Inspection.State.DELAYED);
                clock.advance(Duration.ofSeconds(2));
                assertThat(m.inspect()).extracting(Inspection.Stats::queued, Inspection.Stats::delayed)
                        .containsExactly(3L, 0L);
            }
        }

        @Test
        @DisplayName("a purge leaves nothing counted")
        void afterPurge() {
            try (InMemoryMailbox<String> m = standard("purged")) {
                m.sendBatch(List.of("a", "b", "c"));
                m.send("d", SendOptions.defaults().withDelay(Duration.ofSeconds(1)));
                m.receive();
                m.purge();
                assertThat(m.inspect().total()).isZero();
                assertThat(m.peek(10)).isEmpty();
            }
        }

        @Test
        @DisplayName("the oldest message's age looks at exactly the first 100,000 queued, wherever the oldest is among them")
        void oldestAgeScan() {
            int scan = 100_000;
            clock.advance(Duration.ofHours(1)); // no reading is zero
            try (InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("ages").timeSource(clock).build()) {
                m.send("old");
                clock.advance(Duration.ofSeconds(7));
                for (int i = 0; i < scan; i++) {
                    m.send("new");
                }
                clock.advance(Duration.ofSeconds(3));
                m.receive().get(0).nack(Duration.ZERO); // "old" goes to the back: position 100,000, not looked at
                assertThat(m.inspect().oldestAge()).isEqualTo(Duration.ofSeconds(3));

                m.receive().get(0).nack(Duration.ZERO); // a "new" goes behind it: "old" is at position 99,999
                assertThat(m.inspect().oldestAge()).isEqualTo(Duration.ofSeconds(10));
            }
        }

        @Test
        @DisplayName("peek stops at its maximum among queued messages, and lists timed ones soonest first")
        void peekOrder() {
            clock.advance(Duration.ofSeconds(10)); // readings far from zero
            try (InMemoryMailbox<String> m = standard("peek")) {
                m.sendBatch(List.of("q1", "q2", "q3"));
                assertThat(m.peek(2)).extracting(p -> new String(p.body(), StandardCharsets.UTF_8))
                        .containsExactly("q1", "q2");
            }
            // two heap shapes: the soonest of a parent's two children is its left one, then its right one
            for (List<Integer> delays : List.of(List.of(1, 2, 3), List.of(3, 1, 2))) {
                try (InMemoryMailbox<String> m = standard("timed")) {
                    for (int s : delays) {
                        m.send("in " + s, SendOptions.defaults().withDelay(Duration.ofSeconds(s)));
                    }
                    assertThat(m.peek(10)).as("sent with delays %s", delays)
                            .extracting(p -> new String(p.body(), StandardCharsets.UTF_8))
                            .containsExactly("in 1", "in 2", "in 3");
                }
            }
        }
    }

    @Nested
    @DisplayName("the builder")
    class Building {

        @Test
        @DisplayName("a dead-letter mailbox of the wrong codec mode is refused, saying which mailbox has a codec")
        void deadLetterCodecMessage() {
            try (InMemoryMailbox<String> refs = new InMemoryMailbox<>("refs");
                 InMemoryMailbox<String> coded = InMemoryMailbox.builder("coded", Codec.utf8()).build()) {
                assertThatThrownBy(() -> InMemoryMailbox.builder("m", Codec.utf8()).redrivePolicy(RedrivePolicy.of(3, refs)))
                        .hasMessage("dead-letter mailbox 'refs' must have a codec because mailbox 'm' has one");
                assertThatThrownBy(() -> InMemoryMailbox.builder("m").redrivePolicy(RedrivePolicy.of(3, coded)))
                        .hasMessage("dead-letter mailbox 'coded' must not have a codec because mailbox 'm' has none");
            }
        }
    }

    /** A manual clock that starts at any nanosecond reading and keeps its listeners where a test can see them. */
    private static final class ListeningClock implements TimeSource {
        final Set<Runnable> listeners = ConcurrentHashMap.newKeySet();
        private final long startNanos;
        private final ManualClock clock = new ManualClock();

        ListeningClock(long startNanos) {
            this.startNanos = startNanos;
        }

        @Override
        public long nanoTime() {
            return startNanos + clock.nanoTime();
        }

        @Override
        public Instant now() {
            return clock.now();
        }

        @Override
        public void addListener(Runnable listener) {
            listeners.add(listener);
        }

        @Override
        public void removeListener(Runnable listener) {
            listeners.remove(listener);
        }
    }
}
