package dev.mailbox.inmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.testkit.ManualClock;
import dev.mailbox.testkit.NullMailbox;
import dev.mailbox.testkit.Threads;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** What the TCK cannot say about InMemoryMailbox: its two modes, its builder and its edge cases. */
class InMemoryMailboxTest {

    private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60));

    @Nested
    @DisplayName("without a codec")
    class ByReference {

        @Test
        @DisplayName("the receiver gets the very object that was sent")
        void sameObject() {
            try (InMemoryMailbox<List<String>> m = new InMemoryMailbox<>("refs")) {
                List<String> body = new ArrayList<>(List.of("a"));
                m.send(body);
                assertThat(m.receive().get(0).body()).isSameAs(body);
            }
        }

        @Test
        @DisplayName("no size limit applies, since there are no bytes to measure")
        void noSizeLimit() {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("refs")) {
                m.send("x".repeat(2 * 1024 * 1024));
                assertThat(m.receive().get(0).body()).hasSize(2 * 1024 * 1024);
            }
        }
    }

    @Nested
    @DisplayName("with a codec")
    class WithCodec {

        @Test
        @DisplayName("the receiver gets a copy, not the sender's object")
        void copy() {
            try (InMemoryMailbox<List<String>> m = InMemoryMailbox.builder("copies",
                    JsonCodec.of(new com.fasterxml.jackson.core.type.TypeReference<List<String>>() { })).build()) {
                List<String> body = new ArrayList<>(List.of("a"));
                m.send(body);
                body.add("changed after send");
                assertThat(m.receive().get(0).body()).containsExactly("a");
            }
        }

        @Test
        @DisplayName("a codec that fails with any exception, or returns null, refuses the send with nothing stored")
        void misbehavingCodec() {
            Codec<String> throwsIllegalState = new Codec<>() {
                @Override
                public byte[] encode(String value) {
                    throw new IllegalStateException("boom");
                }

                @Override
                public String decode(byte[] bytes) {
                    return "";
                }
            };
            Codec<String> returnsNull = new Codec<>() {
                @Override
                public byte[] encode(String value) {
                    return null;
                }

                @Override
                public String decode(byte[] bytes) {
                    return null;
                }
            };
            try (InMemoryMailbox<String> a = InMemoryMailbox.builder("a", throwsIllegalState).build();
                 InMemoryMailbox<String> b = InMemoryMailbox.builder("b", returnsNull).build()) {
                assertThatThrownBy(() -> a.send("x")).isInstanceOf(SerializationException.class)
                        .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("'a'");
                assertThatThrownBy(() -> b.send("x")).isInstanceOf(SerializationException.class)
                        .hasMessageContaining("null");
                assertThat(a.approximateCount()).isZero();
                assertThat(b.approximateCount()).isZero();
            }
        }

        @Test
        @DisplayName("a decoder that returns null makes body() throw instead of handing out null")
        void decoderReturningNull() {
            Codec<String> nullDecoder = new Codec<>() {
                @Override
                public byte[] encode(String value) {
                    return value.getBytes(StandardCharsets.UTF_8);
                }

                @Override
                public String decode(byte[] bytes) {
                    return null;
                }
            };
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("n", nullDecoder).build()) {
                m.send("x");
                Message<String> got = m.receive().get(0);
                assertThatThrownBy(got::body).isInstanceOf(SerializationException.class).hasMessageContaining("null");
            }
        }
    }

    @Nested
    @DisplayName("the builder")
    class Builder {

        @Test
        @DisplayName("refuses blank names, negative capacities and out-of-range sizes, naming the argument")
        void validation() {
            assertThatThrownBy(() -> InMemoryMailbox.builder(" ")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("name");
            assertThatThrownBy(() -> new InMemoryMailbox<String>(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> InMemoryMailbox.builder("m").capacity(-1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity");
            assertThatThrownBy(() -> InMemoryMailbox.builder("m", Codec.utf8()).maxMessageBytes(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxMessageBytes");
        }

        @Test
        @DisplayName("takes only an InMemoryMailbox as dead-letter mailbox, with the same codec mode")
        void deadLetterChecks() {
            try (NullMailbox<String> other = new NullMailbox<>("elsewhere");
                 InMemoryMailbox<String> refs = new InMemoryMailbox<>("refs");
                 InMemoryMailbox<String> coded = InMemoryMailbox.builder("coded", Codec.utf8()).build()) {
                assertThatThrownBy(() -> InMemoryMailbox.builder("m").redrivePolicy(RedrivePolicy.of(3, other)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be an InMemoryMailbox");
                assertThatThrownBy(() -> InMemoryMailbox.builder("m", Codec.utf8()).redrivePolicy(RedrivePolicy.of(3, refs)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must have a codec");
                assertThatThrownBy(() -> InMemoryMailbox.builder("m").redrivePolicy(RedrivePolicy.of(3, coded)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not have a codec");
            }
        }

        @Test
        @DisplayName("reports its capabilities: exact, ordered, fair, stale-detecting, late-acknowledging, bounded, atomic dead letters and fencing, kept ids")
        void capabilities() {
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("m", Codec.utf8()).maxMessageBytes(1000).build()) {
                assertThat(m.capabilities().exactCount()).isTrue();
                assertThat(m.capabilities().visibilityOrder()).isTrue();
                assertThat(m.capabilities().fairness()).isTrue();
                assertThat(m.capabilities().fifo()).isFalse();
                assertThat(m.capabilities().lateAcknowledge()).isTrue();
                assertThat(m.capabilities().detectsStaleAcknowledge()).isTrue();
                assertThat(m.capabilities().capacity()).isTrue();
                assertThat(m.capabilities().atomicDeadLetter()).isTrue();
                assertThat(m.capabilities().maxMessageBytes()).isEqualTo(1000);
                assertThat(m.capabilities().atomicFencing()).isTrue();
                assertThat(m.capabilities().durableDeduplication()).isTrue();
            }
        }
    }

    @Nested
    @DisplayName("handles, fences and deduplication ids")
    class HandlesFencesIds {

        private final ManualClock clock = new ManualClock();

        private InMemoryMailbox<String> mailbox(String name) {
            return InMemoryMailbox.builder(name, Codec.utf8()).timeSource(clock).build();
        }

        @Test
        @DisplayName("a handle is only good on the mailbox that issued it, and only in the exact form it was issued")
        void handlesBelongToOneMailbox() {
            try (InMemoryMailbox<String> one = mailbox("same-name"); InMemoryMailbox<String> two = mailbox("same-name")) {
                one.send("x");
                two.send("y");
                String handle = one.receive().get(0).receiptHandle();
                two.receive();

                assertThatThrownBy(() -> two.acknowledge(handle)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(handle).hasMessageContaining("only good on the mailbox that issued it");
                String[] parts = handle.split(":");
                for (String forged : List.of(parts[0] + ":0" + parts[1] + ":" + parts[2], parts[0] + ":" + parts[1] + ":+1",
                        parts[0] + ":" + parts[1] + ":0", parts[0] + ":" + parts[1], handle + ":1", " " + handle)) {
                    assertThatThrownBy(() -> one.acknowledge(forged)).as("'%s'", forged)
                            .isInstanceOf(IllegalArgumentException.class);
                }
                assertThatThrownBy(() -> one.acknowledge(parts[0] + ":ff:1")).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("no such message was ever sent");
                assertThatThrownBy(() -> one.acknowledge(parts[0] + ":" + parts[1] + ":2"))
                        .isInstanceOf(ReceiptHandleExpiredException.class);

                one.acknowledge(handle);
                assertThat(one.approximateCount()).isZero();
                assertThat(two.approximateCount()).isEqualTo(1);
            }
        }

        @Test
        @DisplayName("deliveries leave the handle index when acknowledged, nacked or purged; a lapsed one stays until delivered again")
        void handleIndexEmpties() {
            try (InMemoryMailbox<String> m = mailbox("index")) {
                m.sendBatch(List.of("a", "b", "c", "d"));
                List<Message<String>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(4)
                        .withVisibilityTimeout(Duration.ofSeconds(10)));
                assertThat(m.deliveriesByHandle()).isEqualTo(4);

                m.acknowledge(got.get(0).receiptHandle());
                got.get(1).nack(Duration.ofSeconds(5));
                m.nack(got.get(2).receiptHandle(), Duration.ZERO);
                assertThat(m.deliveriesByHandle()).isEqualTo(1);
                clock.advance(Duration.ofSeconds(10));
                m.send("e"); // touching the mailbox applies the expiry
                assertThat(m.deliveriesByHandle()).as("d lapsed: its handle still acknowledges").isEqualTo(1);

                List<Message<String>> again = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
                assertThat(again).hasSize(4);
                assertThat(m.deliveriesByHandle()).as("d's new delivery replaced its old one").isEqualTo(4);
                m.purge();
                assertThat(m.deliveriesByHandle()).isZero();
            }
        }

        @Test
        @DisplayName("deduplication ids are forgotten once their window ends, so memory stays bounded")
        void idsExpire() {
            try (InMemoryMailbox<String> m = mailbox("ids")) {
                for (int i = 0; i < 1000; i++) {
                    m.send("x", SendOptions.defaults().withDeduplicationId("id-" + i));
                }
                m.sendBatch(List.of("a", "b"), SendOptions.defaults().withDeduplicationId("batch"));
                assertThat(m.rememberedDeduplicationIds()).isEqualTo(1002);

                clock.advance(Limits.DEDUPLICATION_WINDOW.minusSeconds(1));
                m.send("later", SendOptions.defaults().withDeduplicationId("later"));
                assertThat(m.rememberedDeduplicationIds()).isEqualTo(1003);
                clock.advance(Duration.ofSeconds(1));
                m.send("y", SendOptions.defaults().withDeduplicationId("id-0"));

                assertThat(m.rememberedDeduplicationIds()).as("'later' and the new 'id-0'").isEqualTo(2);
                assertThat(m.approximateCount()).isEqualTo(1004);
            }
        }

        @Test
        @DisplayName("a receive waiting under an overtaken epoch is refused as soon as the fence rises, without waiting for a message")
        void waitingReceiveWokenByFence() throws Exception {
            try (InMemoryMailbox<String> m = mailbox("fence")) {
                CompletableFuture<List<Message<String>>> waiting = receiveParked(m.fenced(1), WAIT);

                assertThat(m.fenced(2).receive()).isEmpty();

                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
                assertThat(clock.nanoTime()).as("no time passed").isZero();
            }
        }

        @Test
        @DisplayName("a view says which epoch it is for, and is a view of the same mailbox")
        void viewToString() {
            try (InMemoryMailbox<String> m = mailbox("shown")) {
                Mailbox<String> view = m.fenced(7);
                assertThat(view).hasToString("InMemoryMailbox[shown] fenced at epoch 7");
                assertThat(view.fenced(8)).hasToString("InMemoryMailbox[shown] fenced at epoch 8");
                assertThat(view.capabilities()).isSameAs(m.capabilities());
            }
        }

        @Test
        @DisplayName("a fenced view's batch acknowledge refuses a message of another mailbox before acknowledging any")
        void batchOfForeignMessages() {
            try (InMemoryMailbox<String> m = mailbox("batch"); InMemoryMailbox<String> other = mailbox("other")) {
                m.send("mine");
                other.send("theirs");
                Message<String> mine = m.receive().get(0);
                Message<String> theirs = other.receive().get(0);

                assertThatThrownBy(() -> m.fenced(1).acknowledgeBatch(List.of(mine, theirs)))
                        .isInstanceOf(IllegalArgumentException.class);

                assertThat(m.approximateCount()).isEqualTo(1);
                assertThat(m.fenced(1).acknowledgeBatch(List.of(mine))).isEmpty();
                assertThat(m.approximateCount()).isZero();
            }
        }
    }

    @Nested
    @DisplayName("dead letters")
    class DeadLetters {

        @Test
        @DisplayName("keep the id, body and attributes they were sent with")
        void keepIdentity() {
            try (InMemoryMailbox<String> dlq = new InMemoryMailbox<>("dlq");
                 InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("m").redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                String id = m.send("x");
                m.receive().get(0).nack();
                assertThat(m.receive()).isEmpty();
                Message<String> dead = dlq.receive().get(0);
                assertThat(dead.id()).isEqualTo(id);
                assertThat(dead.deliveryCount()).isEqualTo(1);
            }
        }

        @Test
        @DisplayName("follow a chain of redrive policies")
        void chain() {
            try (InMemoryMailbox<String> last = new InMemoryMailbox<>("last");
                 InMemoryMailbox<String> middle = InMemoryMailbox.<String>builder("middle").redrivePolicy(RedrivePolicy.of(1, last)).build();
                 InMemoryMailbox<String> first = InMemoryMailbox.<String>builder("first").redrivePolicy(RedrivePolicy.of(1, middle)).build()) {
                first.send("x");
                first.receive().get(0).nack();
                assertThat(first.receive()).isEmpty();
                middle.receive().get(0).nack();
                assertThat(middle.receive()).isEmpty();
                assertThat(last.receive().get(0).body()).isEqualTo("x");
            }
        }

        @Test
        @DisplayName("are kept in the source, not lost, when the dead-letter mailbox is closed")
        void closedDeadLetterMailbox() {
            InMemoryMailbox<String> dlq = new InMemoryMailbox<>("dlq");
            try (InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("m").redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                m.send("x");
                m.receive().get(0).nack();
                dlq.close();

                assertThatThrownBy(m::receive).isInstanceOf(MailboxClosedException.class).hasMessageContaining("'dlq'");
                assertThat(m.approximateCount()).isEqualTo(1);
            }
        }

        @Test
        @DisplayName("a receive that meets one it cannot dead-letter (mailbox closed) still returns the messages it took before it")
        void closedDeadLetterMailboxMidReceive() {
            InMemoryMailbox<String> dlq = new InMemoryMailbox<>("dlq");
            try (InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("m").redrivePolicy(RedrivePolicy.of(2, dlq)).build()) {
                m.sendBatch(List.of("fresh", "poison"));
                List<Message<String>> both = m.receive(ReceiveOptions.defaults().withMaxMessages(2));
                both.get(1).nack();
                Message<String> last = m.receive().get(0); // the poison's second delivery: the last it may have
                both.get(0).nack();
                last.nack();               // ready in order: fresh (1 delivery), poison (2)
                dlq.close();

                assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10))).extracting(Message::body)
                        .containsExactly("fresh");
                assertThatThrownBy(m::receive).isInstanceOf(MailboxClosedException.class).hasMessageContaining("'dlq'");
                assertThat(m.approximateCount()).isEqualTo(2);
            }
        }

        @Test
        @DisplayName("ignore the dead-letter mailbox's capacity rather than lose a message")
        void ignoreCapacity() {
            try (InMemoryMailbox<String> dlq = InMemoryMailbox.<String>builder("dlq").capacity(1).build();
                 InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("m").redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
                dlq.send("already full");
                m.send("x");
                m.receive().get(0).nack();
                assertThat(m.receive()).isEmpty();
                assertThat(dlq.approximateCount()).isEqualTo(2);
            }
        }
    }

    @Nested
    @DisplayName("waiting receivers")
    class Waiting {

        @Test
        @DisplayName("an interrupted receive throws MailboxUnavailableException and keeps the interrupt flag")
        void interrupted() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("m")) {
                AtomicReference<Throwable> thrown = new AtomicReference<>();
                AtomicReference<Boolean> flag = new AtomicReference<>();
                Thread t = new Thread(() -> {
                    try {
                        m.receive(WAIT);
                    } catch (Throwable e) {
                        thrown.set(e);
                        flag.set(Thread.currentThread().isInterrupted());
                    }
                });
                t.start();
                awaitParked(t);
                t.interrupt();
                t.join(10_000);

                assertThat(thrown.get()).isInstanceOf(MailboxUnavailableException.class)
                        .hasMessageContaining("interrupted");
                assertThat(flag.get()).isTrue();
            }
        }

        @Test
        @DisplayName("a receive sleeping until a far deadline re-times itself when an extend brings it closer")
        void reTimesOnEarlierDeadline() throws Exception {
            try (InMemoryMailbox<String> m = new InMemoryMailbox<>("m")) {
                m.send("x");
                Message<String> held = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(10))).get(0);
                CompletableFuture<List<Message<String>>> waiter = receiveParked(m, WAIT);

                held.extendVisibility(Duration.ofMillis(50));

                // with the system clock the waiter must wake after ~50 ms, not at the 10-minute deadline
                List<Message<String>> got = waiter.get(10, TimeUnit.SECONDS);
                assertThat(got).hasSize(1);
                assertThat(got.get(0).deliveryCount()).isEqualTo(2);
            }
        }

        @Test
        @DisplayName("on a manual clock a waiting receive returns only when the clock reaches its deadline")
        void manualClockDeadline() throws Exception {
            ManualClock clock = new ManualClock();
            try (InMemoryMailbox<String> m = InMemoryMailbox.<String>builder("m").timeSource(clock).build()) {
                CompletableFuture<List<Message<String>>> waiter =
                        receiveParked(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
                clock.advance(Duration.ofSeconds(4));
                assertThat(waiter).isNotDone();
                clock.advance(Duration.ofSeconds(1));
                assertThat(waiter.get(10, TimeUnit.SECONDS)).isEmpty();
            }
        }

        @Test
        @DisplayName("closing wakes every waiting receiver")
        void closeWakesAll() throws Exception {
            InMemoryMailbox<String> m = new InMemoryMailbox<>("m");
            List<CompletableFuture<List<Message<String>>>> waiters = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                waiters.add(receiveParked(m, WAIT));
            }
            m.close();
            for (CompletableFuture<List<Message<String>>> f : waiters) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("half a million messages go through in order and leave nothing behind")
    void volume() {
        try (InMemoryMailbox<String> m = InMemoryMailbox.builder("volume", Codec.utf8()).build()) {
            int n = 500_000;
            for (int i = 0; i < n; i++) {
                m.send(Integer.toString(i));
            }
            ReceiveOptions ten = ReceiveOptions.defaults().withMaxMessages(10);
            int expected = 0;
            while (expected < n) {
                for (Message<String> msg : m.receive(ten)) {
                    assertThat(msg.body()).isEqualTo(Integer.toString(expected++));
                    msg.acknowledge();
                }
            }
            assertThat(m.approximateCount()).isZero();
            assertThat(m.receive()).isEmpty();
        }
    }

    /** Starts a receive on its own thread and returns once that thread is blocked in it. */
    static <T> CompletableFuture<List<Message<T>>> receiveParked(Mailbox<T> m, ReceiveOptions options) {
        CompletableFuture<List<Message<T>>> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(m.receive(options));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        t.setDaemon(true);
        t.start();
        awaitParked(t);
        return result;
    }

    @Nested
    @DisplayName("groups, tenants and late acknowledgements")
    class Groups {

        private final ManualClock clock = new ManualClock();

        private InMemoryMailbox<String> fifo(String name) {
            return InMemoryMailbox.builder(name, Codec.utf8()).timeSource(clock).fifo(FifoOptions.defaults()).build();
        }

        @Test
        @DisplayName("content-based deduplication needs a codec, and dead letters go to a mailbox of the same kind")
        void builderRefusals() {
            assertThatThrownBy(() -> InMemoryMailbox.<String>builder("refs").fifo(FifoOptions.defaults()
                    .withContentBasedDeduplication(true))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'refs'").hasMessageContaining("no codec");
            try (InMemoryMailbox<String> standard = InMemoryMailbox.builder("s", Codec.utf8()).build();
                 InMemoryMailbox<String> fifoDlq = fifo("f")) {
                assertThatThrownBy(() -> InMemoryMailbox.builder("m", Codec.utf8()).fifo(FifoOptions.defaults())
                        .redrivePolicy(RedrivePolicy.of(2, standard)).build()).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("dead-letter mailbox 's' must be a FIFO mailbox");
                assertThatThrownBy(() -> InMemoryMailbox.builder("m", Codec.utf8())
                        .redrivePolicy(RedrivePolicy.of(2, fifoDlq)).build()).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("dead-letter mailbox 'f' must be a standard mailbox");
                assertThat(InMemoryMailbox.<String>builder("refs").fifo(FifoOptions.defaults()).build().capabilities().fifo())
                        .isTrue();
                assertThat(InMemoryMailbox.builder("content", Codec.utf8()).fifo(FifoOptions.defaults()
                        .withContentBasedDeduplication(true)).build().capabilities().contentBasedDeduplication()).isTrue();
            }
        }

        @Test
        @DisplayName("a FIFO mailbox reports FIFO, not fairness nor visibility order, and numbers messages in 20 digits")
        void fifoCapabilities() {
            try (InMemoryMailbox<String> m = fifo("caps")) {
                assertThat(m.capabilities().fifo()).isTrue();
                assertThat(m.capabilities().fairness()).isFalse();
                assertThat(m.capabilities().visibilityOrder()).isFalse();
                assertThat(m.capabilities().lateAcknowledge()).isTrue();
                assertThat(m.capabilities().contentBasedDeduplication()).isFalse();
                m.send("x", SendOptions.defaults().withGroupId("g"));
                assertThat(m.receive().get(0).sequenceNumber()).isEqualTo("00000000000000000000");
            }
        }

        @Test
        @DisplayName("groups and tenants are dropped once their messages are gone, so a stream of new group ids holds no memory")
        void groupsDropped() {
            try (InMemoryMailbox<String> f = fifo("groups"); InMemoryMailbox<String> s = InMemoryMailbox.builder("tenants",
                    Codec.utf8()).timeSource(clock).build()) {
                for (InMemoryMailbox<String> m : List.of(f, s)) {
                    for (int i = 0; i < 500; i++) {
                        m.send("x" + i, SendOptions.defaults().withGroupId("g" + i));
                    }
                    assertThat(m.groupsHeld()).isEqualTo(500);
                    for (int i = 0; i < 250; i++) {
                        m.receive(ReceiveOptions.defaults().withMaxMessages(2)).forEach(Message::acknowledge);
                    }
                    assertThat(m.approximateCount()).isZero();
                    assertThat(m.groupsHeld()).as("groups of %s", m).isZero();
                    m.send("y", SendOptions.defaults().withGroupId("g1"));
                    m.purge();
                    assertThat(m.groupsHeld()).isZero();
                }
            }
        }

        @Test
        @DisplayName("a message late-acknowledged while visible again is never delivered, from a FIFO group or the standard queue")
        void lateAcknowledgedNotDelivered() {
            try (InMemoryMailbox<String> f = fifo("late-fifo"); InMemoryMailbox<String> s = InMemoryMailbox.builder("late",
                    Codec.utf8()).timeSource(clock).build()) {
                for (InMemoryMailbox<String> m : List.of(f, s)) {
                    m.sendBatch(List.of("a", "b"), SendOptions.defaults().withGroupId("g"));
                    Message<String> a = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(1))).get(0);
                    clock.advance(Duration.ofSeconds(1));
                    m.send("c", SendOptions.defaults().withGroupId("g")); // applies the lapse: a is visible again
                    a.acknowledge();

                    List<String> rest = new ArrayList<>();
                    List<Message<String>> got;
                    while (!(got = m.receive(ReceiveOptions.defaults().withMaxMessages(10))).isEmpty()) {
                        got.forEach(x -> {
                            rest.add(x.body());
                            x.acknowledge();
                        });
                    }
                    assertThat(rest).as("%s", m).containsExactly("b", "c");
                    assertThat(m.approximateCount()).isZero();
                    assertThat(m.deliveriesByHandle()).isZero();
                }
            }
        }

        @Test
        @DisplayName("a noisy tenant's set-aside messages are neither lost nor duplicated when purged or taken")
        void setAsideKept() {
            try (InMemoryMailbox<String> m = InMemoryMailbox.builder("aside", Codec.utf8()).timeSource(clock).build()) {
                for (int i = 0; i < 60; i++) {
                    m.send("n" + i, SendOptions.defaults().withGroupId("noisy"));
                }
                List<Message<String>> inFlight = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    inFlight.addAll(m.receive(ReceiveOptions.defaults().withMaxMessages(10)));
                }
                m.send("q", SendOptions.defaults().withGroupId("quiet"));
                assertThat(m.receive().get(0).body()).isEqualTo("q"); // the receive set the noisy ones aside
                List<String> rest = new ArrayList<>();
                List<Message<String>> got;
                while (!(got = m.receive(ReceiveOptions.defaults().withMaxMessages(10))).isEmpty()) {
                    got.forEach(x -> rest.add(x.body()));
                }
                assertThat(rest).hasSize(30).doesNotHaveDuplicates().allMatch(b -> b.startsWith("n"));
                assertThat(m.approximateCount()).isEqualTo(61);
                assertThat(m.purge()).isEqualTo(61);
                m.send("after", SendOptions.defaults().withGroupId("noisy"));
                assertThat(m.receive().get(0).body()).isEqualTo("after");
            }
        }
    }

    static void awaitParked(Thread t) {
        Threads.awaitParked(t, Duration.ofSeconds(10));
    }
}
