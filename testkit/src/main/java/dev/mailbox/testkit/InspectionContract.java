package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Inspection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
