package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import java.util.ArrayList;
import dev.mailbox.api.spi.Inspection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link Inspection} for backends that can read a mailbox without taking part in it (memory,
 * Redis): exact counts by state, peeks in the order receives would take the messages, the dead-letter mailbox
 * named, and above all that inspecting changes nothing. A backend runs it by extending this class.
 */
public abstract class InspectionContract {

    /**
     * @param name a fresh name
     * @return a new, empty mailbox of bytes that implements {@link Inspection}
     */
    protected abstract Mailbox<byte[]> mailbox(String name);

    /**
     * @param name   a fresh name
     * @param policy its redrive policy (the dead-letter mailbox made by {@link #mailbox})
     * @return a new, empty mailbox of bytes with the policy
     */
    protected abstract Mailbox<byte[]> mailbox(String name, RedrivePolicy policy);

    /**
     * A FIFO mailbox for the FIFO tests of this contract; the default makes none, and those tests are then skipped,
     * saying so. A backend with FIFO mailboxes overrides it.
     *
     * @param name a fresh name
     * @return a new, empty FIFO mailbox of bytes (default {@link dev.mailbox.api.FifoOptions}) that implements
     *         {@link Inspection}, or null if the backend has no FIFO mailboxes
     */
    protected Mailbox<byte[]> fifoMailbox(String name) {
        return null;
    }

    /**
     * Lets this much time pass for the mailboxes made here: a manual clock moves, or the test waits.
     *
     * @param duration how long
     */
    protected abstract void elapse(Duration duration);

    /** @return a visibility timeout or delay that {@link #elapse} can outlast cheaply */
    protected Duration shortTime() {
        return Duration.ofMillis(300);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static String fresh(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static Inspection inspection(Mailbox<?> m) {
        Inspection i = Inspection.of(m);
        assertThat(i).as("%s implements Inspection", m).isNotNull();
        return i;
    }

    @Test
    @DisplayName("counts queued, in-flight and delayed messages apart, and their sum is the count")
    void countsByState() {
        try (Mailbox<byte[]> m = mailbox(fresh("counts"))) {
            m.sendBatch(List.of(bytes("a"), bytes("b"), bytes("c")));
            m.sendBatch(List.of(bytes("d"), bytes("e")), SendOptions.defaults().withDelay(Duration.ofMinutes(1)));
            assertThat(m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(1)))).hasSize(1);

            Inspection.Stats s = inspection(m).inspect();

            assertThat(s.queued()).isEqualTo(2);
            assertThat(s.inFlight()).isEqualTo(1);
            assertThat(s.delayed()).isEqualTo(2);
            assertThat(s.total()).isEqualTo(m.approximateCount()).isEqualTo(5);
            assertThat(s.exact()).isTrue();
            assertThat(s.oldestAge()).isNotNull().isGreaterThanOrEqualTo(Duration.ZERO);
            assertThat(s.deadLetterMailbox()).isNull();
            assertThat(s.maxReceiveCount()).isZero();
        }
    }

    @Test
    @DisplayName("an empty mailbox has no oldest message")
    void empty() {
        try (Mailbox<byte[]> m = mailbox(fresh("empty"))) {
            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.total()).isZero();
            assertThat(s.oldestAge()).isNull();
            assertThat(inspection(m).peek(10)).isEmpty();
        }
    }

    @Test
    @DisplayName("peeks queued messages in receive order with bodies and attributes, then the timed ones")
    void peekOrder() {
        try (Mailbox<byte[]> m = mailbox(fresh("peek"))) {
            m.send(bytes("first"), SendOptions.defaults().withAttribute("k", "v"));
            m.send(bytes("second"));
            m.send(bytes("later"), SendOptions.defaults().withDelay(Duration.ofMinutes(1)));

            List<Inspection.Peeked> seen = inspection(m).peek(10);

            assertThat(seen).extracting(p -> text(p.body())).containsExactly("first", "second", "later");
            assertThat(seen).extracting(Inspection.Peeked::state).containsExactly(Inspection.State.QUEUED,
                    Inspection.State.QUEUED, Inspection.State.DELAYED);
            assertThat(seen.get(0).attributes()).isEqualTo(Map.of("k", "v"));
            assertThat(seen.get(0).deliveryCount()).isZero();
            assertThat(inspection(m).peek(2)).extracting(p -> text(p.body())).containsExactly("first", "second");
        }
    }

    @Test
    @DisplayName("inspecting and peeking change nothing: no delivery, no hidden message, handles stay good")
    void changesNothing() {
        try (Mailbox<byte[]> m = mailbox(fresh("untouched"))) {
            String id = m.send(bytes("x"));
            m.send(bytes("y"));
            Message<byte[]> taken = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(1)))
                    .get(0);
            for (int i = 0; i < 3; i++) {
                inspection(m).inspect();
                assertThat(inspection(m).peek(Inspection.MAX_PEEK)).hasSize(2);
            }
            List<Inspection.Peeked> seen = inspection(m).peek(10);
            assertThat(seen).extracting(Inspection.Peeked::state).containsExactly(Inspection.State.QUEUED,
                    Inspection.State.IN_FLIGHT);
            assertThat(seen.get(1).id()).isEqualTo(id);
            assertThat(seen.get(1).deliveryCount()).isEqualTo(1);

            List<Message<byte[]>> next = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
            assertThat(next).extracting(n -> text(n.body())).containsExactly("y");
            assertThat(next.get(0).deliveryCount()).isEqualTo(1);
            taken.acknowledge(); // the handle taken before the peeks is still the current one
            next.get(0).acknowledge();
            assertThat(m.approximateCount()).isZero();
        }
    }

    @Test
    @DisplayName("a message whose visibility lapsed counts as queued before any receive moves it back")
    void lapsedIsQueued() {
        try (Mailbox<byte[]> m = mailbox(fresh("lapsed"))) {
            m.send(bytes("x"));
            m.send(bytes("later"), SendOptions.defaults().withDelay(shortTime()));
            m.receive(ReceiveOptions.defaults().withVisibilityTimeout(shortTime()));
            assertThat(inspection(m).inspect().inFlight()).isEqualTo(1);

            elapse(shortTime().multipliedBy(2));

            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.queued()).isEqualTo(2);
            assertThat(s.inFlight()).isZero();
            assertThat(s.delayed()).isZero();
            assertThat(inspection(m).peek(10)).extracting(Inspection.Peeked::state)
                    .containsOnly(Inspection.State.QUEUED).hasSize(2);
        }
    }

    @Test
    @DisplayName("names the dead-letter mailbox and the deliveries its policy allows")
    void deadLetters() {
        try (Mailbox<byte[]> dlq = mailbox(fresh("dlq"));
             Mailbox<byte[]> m = mailbox(fresh("source"), RedrivePolicy.of(3, dlq))) {
            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.deadLetterMailbox()).isEqualTo(dlq.name());
            assertThat(s.maxReceiveCount()).isEqualTo(3);
        }
    }

    /** Receives exactly {@code n} messages with a long visibility timeout, in as many receives as it takes. */
    private static List<Message<byte[]>> take(Mailbox<byte[]> m, int n) {
        List<Message<byte[]>> got = new ArrayList<>();
        for (int i = 0; i < 100 && got.size() < n; i++) {
            got.addAll(m.receive(ReceiveOptions.defaults().withMaxMessages(Math.min(10, n - got.size()))
                    .withVisibilityTimeout(Duration.ofMinutes(1)).withWaitTime(Duration.ofSeconds(1))));
        }
        assertThat(got).as("messages received").hasSize(n);
        return got;
    }

    @Test
    @DisplayName("a message acknowledged late, after it was visible again, is neither counted nor peeked")
    void lateAcknowledgedGone() {
        try (Mailbox<byte[]> m = mailbox(fresh("late"))) {
            Assumptions.assumeTrue(m.capabilities().lateAcknowledge(), "the backend has no late acknowledgement");
            m.send(bytes("x"));
            Message<byte[]> x = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(shortTime())).get(0);
            elapse(shortTime().multipliedBy(2));
            m.send(bytes("y")); // a backend may move the lapsed x back to its queue now
            x.acknowledge();

            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.queued()).isEqualTo(1);
            assertThat(s.inFlight()).isZero();
            assertThat(s.total()).isEqualTo(m.approximateCount()).isEqualTo(1);
            assertThat(inspection(m).peek(10)).extracting(p -> text(p.body())).containsExactly("y");
        }
    }

    @Test
    @DisplayName("a tenant's queued messages count as queued while it has many in flight (whatever fairness does with them)")
    void noisyTenantCounted() {
        try (Mailbox<byte[]> m = mailbox(fresh("tenants"))) {
            SendOptions noisy = SendOptions.defaults().withGroupId("noisy");
            for (int i = 0; i < 4; i++) {
                m.sendBatch(List.of(bytes("n"), bytes("n"), bytes("n"), bytes("n"), bytes("n"), bytes("n"), bytes("n"),
                        bytes("n"), bytes("n"), bytes("n")), noisy);
            }
            take(m, 30);
            m.send(bytes("q"), SendOptions.defaults().withGroupId("quiet"));
            take(m, 1); // on a fair mailbox this sets the noisy tenant's queued messages aside

            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.inFlight()).isEqualTo(31);
            assertThat(s.queued()).isEqualTo(10);
            assertThat(s.total()).isEqualTo(m.approximateCount()).isEqualTo(41);
            assertThat(inspection(m).peek(100)).hasSize(41).filteredOn(p -> p.state() == Inspection.State.QUEUED)
                    .hasSize(10);
        }
    }

    @Test
    @DisplayName("FIFO: a message behind its group's message in flight counts as queued, one nacked with a timeout as delayed")
    void fifoCounts() {
        Mailbox<byte[]> made = fifoMailbox(fresh("fifo"));
        Assumptions.assumeTrue(made != null, () -> getClass().getSimpleName() + " makes no FIFO mailboxes");
        try (Mailbox<byte[]> m = made) {
            m.sendBatch(List.of(bytes("a1"), bytes("a2")), SendOptions.defaults().withGroupId("a"));
            Message<byte[]> a1 = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(1))).get(0);
            assertThat(text(a1.body())).isEqualTo("a1");
            m.send(bytes("b1"), SendOptions.defaults().withGroupId("b"));

            Inspection.Stats s = inspection(m).inspect();
            assertThat(s.queued()).as("a2, held back by a1, and b1").isEqualTo(2);
            assertThat(s.inFlight()).isEqualTo(1);
            assertThat(s.delayed()).isZero();
            assertThat(s.total()).isEqualTo(m.approximateCount()).isEqualTo(3);
            List<Inspection.Peeked> seen = inspection(m).peek(10);
            assertThat(seen).extracting(p -> text(p.body()) + "/" + p.state()).containsExactlyInAnyOrder("a1/IN_FLIGHT",
                    "a2/QUEUED", "b1/QUEUED");
            assertThat(seen.get(2).state()).as("queued ones first").isEqualTo(Inspection.State.IN_FLIGHT);

            a1.nack(Duration.ofMinutes(1));
            s = inspection(m).inspect();
            assertThat(s.queued()).isEqualTo(2);
            assertThat(s.inFlight()).isZero();
            assertThat(s.delayed()).isEqualTo(1);
            assertThat(inspection(m).peek(10)).extracting(p -> text(p.body()) + "/" + p.state())
                    .containsExactlyInAnyOrder("a1/DELAYED", "a2/QUEUED", "b1/QUEUED");

            List<Message<byte[]>> next = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
            assertThat(next).as("group a waits for a1's nack timeout").extracting(x -> text(x.body())).containsExactly("b1");
        }
    }

    @Test
    @DisplayName("a peek of 0 or more than 100 messages is refused")
    void peekBounds() {
        try (Mailbox<byte[]> m = mailbox(fresh("bounds"))) {
            assertThatThrownBy(() -> inspection(m).peek(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("1 to 100");
            assertThatThrownBy(() -> inspection(m).peek(101)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
