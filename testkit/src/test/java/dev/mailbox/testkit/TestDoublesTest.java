package dev.mailbox.testkit;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TestDoublesTest {

    @Nested
    @DisplayName("ManualClock")
    class Clock {

        @Test
        @DisplayName("moves only when advanced, both readings together, and tells its listeners")
        void advance() {
            ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
            AtomicInteger calls = new AtomicInteger();
            Runnable listener = calls::incrementAndGet;
            clock.addListener(listener);
            long n0 = clock.nanoTime();

            clock.advance(Duration.ofMillis(1500));

            assertThat(clock.nanoTime() - n0).isEqualTo(1_500_000_000L);
            assertThat(clock.now()).isEqualTo(Instant.parse("2026-01-01T00:00:01.500Z"));
            assertThat(clock.currentTimeMillis()).isEqualTo(clock.now().toEpochMilli());
            assertThat(calls).hasValue(1);

            clock.removeListener(listener);
            clock.advanceMillis(1);
            assertThat(calls).hasValue(1);
        }

        @Test
        @DisplayName("refuses to go back")
        void noTimeTravel() {
            assertThatThrownBy(() -> new ManualClock().advance(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot go back");
        }
    }

    @Nested
    @DisplayName("NullMailbox")
    class Null {

        @Test
        @DisplayName("accepts sends with fresh ids, receives nothing and counts zero")
        void dropsEverything() {
            try (NullMailbox<String> m = new NullMailbox<>("null")) {
                assertThat(m.send("a")).isNotEqualTo(m.send("a"));
                assertThat(m.sendBatch(List.of("a", "b"))).hasSize(2).doesNotHaveDuplicates();
                assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10))).isEmpty();
                assertThat(m.approximateCount()).isZero();
                assertThat(m.purge()).isZero();
                assertThat(m.name()).isEqualTo("null");
            }
        }

        @Test
        @DisplayName("validates arguments like any mailbox")
        void validates() {
            try (NullMailbox<String> m = new NullMailbox<>("null")) {
                assertThatThrownBy(() -> m.send(null)).isInstanceOf(NullPointerException.class);
                assertThatThrownBy(() -> m.sendBatch(List.of())).isInstanceOf(IllegalArgumentException.class);
            }
        }

        @Test
        @DisplayName("a waiting receive waits, returns empty when closed, and later calls fail")
        void waitsUntilClosed() throws Exception {
            NullMailbox<String> m = new NullMailbox<>("null");
            CompletableFuture<List<Message<String>>> waiter = new CompletableFuture<>();
            Thread t = new Thread(() -> waiter.complete(m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMinutes(5)))));
            t.start();
            while (t.getState() != Thread.State.TIMED_WAITING) {
                assertThat(t.isAlive()).as("receiver still running").isTrue();
                Thread.onSpinWait();
            }
            assertThat(waiter).isNotDone();
            m.close();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEmpty();
            assertThatThrownBy(() -> m.send("x")).isInstanceOf(MailboxClosedException.class);
        }

        @Test
        @DisplayName("deduplicates sends within the window, batches under id/i, and forgets ids after it")
        void deduplicates() {
            ManualClock clock = new ManualClock();
            try (NullMailbox<String> m = new NullMailbox<>("null", clock)) {
                SendOptions once = SendOptions.defaults().withDeduplicationId("once");
                String id = m.send("a", once);
                assertThat(m.send("b", once)).isEqualTo(id);
                List<String> batch = m.sendBatch(List.of("a", "b"), once);
                assertThat(batch).doesNotContain(id).doesNotHaveDuplicates();
                assertThat(m.sendBatch(List.of("a", "b"), once)).isEqualTo(batch);
                assertThat(m.send("c", SendOptions.defaults().withDeduplicationId("once/1"))).isEqualTo(batch.get(1));

                clock.advance(Limits.DEDUPLICATION_WINDOW);

                assertThat(m.send("a", once)).isNotEqualTo(id);
            }
        }

        @Test
        @DisplayName("no handle is ever current: handle calls validate, then throw ReceiptHandleExpiredException")
        void handleCalls() {
            try (NullMailbox<String> m = new NullMailbox<>("null")) {
                assertThatThrownBy(() -> m.acknowledge("h")).isInstanceOf(ReceiptHandleExpiredException.class)
                        .hasMessageContaining("keeps no messages");
                assertThatThrownBy(() -> m.nack("h", Duration.ZERO)).isInstanceOf(ReceiptHandleExpiredException.class);
                assertThatThrownBy(() -> m.extendVisibility("h", Duration.ofSeconds(1)))
                        .isInstanceOf(ReceiptHandleExpiredException.class);
                assertThatThrownBy(() -> m.nack("h", Duration.ofHours(13))).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> m.acknowledge(null)).isInstanceOf(NullPointerException.class);
                m.close();
                assertThatThrownBy(() -> m.acknowledge("h")).isInstanceOf(MailboxClosedException.class);
            }
        }

        @Test
        @DisplayName("fenced views keep a real fence; sends through an overtaken view still work")
        void fenced() {
            try (NullMailbox<String> m = new NullMailbox<>("null")) {
                Mailbox<String> old = m.fenced(1);
                assertThat(old.receive()).isEmpty();
                assertThat(m.fenced(2).receive()).isEmpty();

                assertThatThrownBy(old::receive).isInstanceOf(FencedException.class)
                        .satisfies(e -> assertThat(((FencedException) e).fence()).isEqualTo(2));
                assertThatThrownBy(() -> old.acknowledge("h")).isInstanceOf(FencedException.class);
                assertThatThrownBy(() -> m.fenced(2).acknowledge("h")).isInstanceOf(ReceiptHandleExpiredException.class);
                assertThat(old.send("x")).isNotBlank();
                assertThat(m.receive()).isEmpty();
                assertThatThrownBy(() -> m.fenced(0)).isInstanceOf(IllegalArgumentException.class);
                old.close();
                assertThat(m.approximateCount()).isZero();
            }
        }
    }

    @Nested
    @DisplayName("CollectingMailbox")
    class Collecting {

        @Test
        @DisplayName("records bodies, ids, delays and attributes of every send, in order")
        void records() {
            try (CollectingMailbox<String> m = new CollectingMailbox<>("replies")) {
                String id = m.send("a", SendOptions.defaults().withDelay(Duration.ofSeconds(2)).withAttribute("k", "v"));
                List<String> batch = m.sendBatch(List.of("b", "c"));

                assertThat(m.bodies()).containsExactly("a", "b", "c");
                assertThat(m.sentCount()).isEqualTo(3);
                assertThat(m.lastBody()).isEqualTo("c");
                CollectingMailbox.Sent<String> first = m.sent().get(0);
                assertThat(first.id()).isEqualTo(id);
                assertThat(first.delay()).isEqualTo(Duration.ofSeconds(2));
                assertThat(first.attributes()).containsEntry("k", "v");
                assertThat(m.sent().subList(1, 3)).extracting(CollectingMailbox.Sent::id).isEqualTo(batch);

                m.clear();
                assertThat(m.bodies()).isEmpty();
                assertThatThrownBy(m::lastBody).isInstanceOf(AssertionError.class).hasMessageContaining("nothing was sent");
            }
        }

        @Test
        @DisplayName("records a deduplicated send once; a fenced view records into the same list")
        void deduplicatedAndFenced() {
            try (CollectingMailbox<String> m = new CollectingMailbox<>("replies")) {
                SendOptions once = SendOptions.defaults().withDeduplicationId("reply-1");
                String id = m.send("a", once);
                m.send("a", once);
                m.fenced(1).sendBatch(List.of("b", "c"));

                assertThat(m.bodies()).containsExactly("a", "b", "c");
                assertThat(m.sent().get(0).id()).isEqualTo(id);
                assertThat(m.fenced(2).receive()).isEmpty();
                assertThatThrownBy(() -> m.fenced(1).receive()).isInstanceOf(FencedException.class);
            }
        }

        @Test
        @DisplayName("records each send's group id; in front of a FIFO mailbox a send it refuses is not recorded")
        void groups() {
            try (CollectingMailbox<String> m = new CollectingMailbox<>("tenants")) {
                m.send("a", SendOptions.defaults().withGroupId("t1"));
                m.sendBatch(List.of("b", "c"), SendOptions.defaults().withGroupId("t2"));
                m.send("d");
                assertThat(m.sent()).extracting(CollectingMailbox.Sent::groupId).containsExactly("t1", "t2", "t2", null);
            }
            try (CollectingMailbox<String> m = CollectingMailbox.wrapping(NullMailbox.fifo("fifo", FifoOptions.defaults()))) {
                assertThatThrownBy(() -> m.send("no group")).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("group id");
                m.send("ok", SendOptions.defaults().withGroupId("g"));
                assertThat(m.bodies()).containsExactly("ok");
                assertThat(m.capabilities().fifo()).isTrue();
            }
        }

        @Test
        @DisplayName("does not record a send that failed")
        void failedSendNotRecorded() {
            try (CollectingMailbox<String> m = new CollectingMailbox<>("replies")) {
                assertThatThrownBy(() -> m.send(null)).isInstanceOf(NullPointerException.class);
                assertThat(m.sentCount()).isZero();
            }
        }

        @Test
        @DisplayName("awaitSent returns once enough sends arrive from another thread, and fails listing them otherwise")
        void awaitSent() throws Exception {
            try (CollectingMailbox<String> m = new CollectingMailbox<>("replies")) {
                CompletableFuture<List<String>> waiting = CompletableFuture.supplyAsync(
                        () -> m.awaitSent(2, Duration.ofSeconds(30)));
                m.send("one");
                m.send("two");
                assertThat(waiting.get(10, TimeUnit.SECONDS)).containsExactly("one", "two");

                assertThatThrownBy(() -> m.awaitSent(3, Duration.ZERO)).isInstanceOf(AssertionError.class)
                        .hasMessageContaining("expected 3 sends").hasMessageContaining("[one, two]");
            }
        }
    }

    @Nested
    @DisplayName("NullMailbox as a FIFO mailbox")
    class NullFifo {

        @Test
        @DisplayName("refuses a send without a group id or with a delay, as every FIFO mailbox, and says it is FIFO")
        void refusals() {
            try (NullMailbox<String> m = NullMailbox.fifo("fifo", FifoOptions.defaults())) {
                assertThat(m.capabilities().fifo()).isTrue();
                assertThat(m.capabilities().visibilityOrder()).isFalse();
                assertThatThrownBy(() -> m.send("x")).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("'fifo'").hasMessageContaining("group id");
                assertThatThrownBy(() -> m.sendBatch(List.of("x"), SendOptions.defaults().withGroupId("g")
                        .withDelay(Duration.ofSeconds(1)))).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("delay");
                assertThat(m.send("x", SendOptions.defaults().withGroupId("g"))).isNotBlank();
            }
            assertThat(new NullMailbox<String>("standard").capabilities().fifo()).isFalse();
            assertThatThrownBy(() -> NullMailbox.fifo("f", FifoOptions.defaults().withContentBasedDeduplication(true)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("content");
        }

        @Test
        @DisplayName("remembers deduplication ids per group in the group scope, across the mailbox otherwise")
        void deduplicationScope() {
            try (NullMailbox<String> mailboxScope = NullMailbox.fifo("m", FifoOptions.defaults());
                 NullMailbox<String> groupScope = NullMailbox.fifo("g", FifoOptions.defaults()
                         .withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP))) {
                SendOptions a = SendOptions.defaults().withGroupId("a").withDeduplicationId("d");
                SendOptions b = SendOptions.defaults().withGroupId("b").withDeduplicationId("d");
                assertThat(mailboxScope.send("x", b)).isEqualTo(mailboxScope.send("x", a));
                String inA = groupScope.send("x", a);
                assertThat(groupScope.send("x", b)).isNotEqualTo(inA);
                assertThat(groupScope.send("y", a)).isEqualTo(inA);
                assertThat(groupScope.sendBatch(List.of("p", "q"), b)).doesNotContain(inA);
            }
        }
    }
}
