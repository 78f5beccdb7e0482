package dev.mailbox.inmemory;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.FaultInjectingMailbox;
import dev.mailbox.testkit.FaultInjectingMailbox.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The testkit's fault injector and collector, in front of a real InMemoryMailbox. */
class FaultInjectingMailboxTest {

    private final InMemoryMailbox<String> real = InMemoryMailbox.builder("real", Codec.utf8()).build();
    private final FaultInjectingMailbox<String> faulty = FaultInjectingMailbox.wrap(real);

    @AfterEach
    void close() {
        real.close();
    }

    @Test
    @DisplayName("failNext fails exactly N calls before they reach the mailbox, as retryable")
    void failBefore() {
        faulty.failNext(Operation.SEND, 2);

        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> faulty.send("x")).isInstanceOf(MailboxUnavailableException.class)
                    .matches(e -> ((MailboxUnavailableException) e).isRetryable());
        }
        assertThat(real.approximateCount()).isZero();
        faulty.send("x");
        assertThat(real.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("failNextAfterForwarding lets the call take effect but reports a failure, as a lost reply")
    void failAfter() {
        faulty.failNextAfterForwarding(Operation.SEND, 1);
        assertThatThrownBy(() -> faulty.send("x")).isInstanceOf(MailboxUnavailableException.class)
                .hasMessageContaining("took effect");
        assertThat(real.approximateCount()).isEqualTo(1);

        Message<String> m = faulty.receive().get(0);
        faulty.failNextAfterForwarding(Operation.ACKNOWLEDGE, 1);
        assertThatThrownBy(m::acknowledge).isInstanceOf(MailboxUnavailableException.class);
        assertThat(real.approximateCount()).isZero();
    }

    @Test
    @DisplayName("faults target only the operation named")
    void targeted() {
        faulty.failNext(Operation.RECEIVE, 1);
        faulty.send("x");
        assertThat(faulty.approximateCount()).isEqualTo(1);
        assertThatThrownBy(faulty::receive).isInstanceOf(MailboxUnavailableException.class);
        assertThat(faulty.receive()).hasSize(1);
    }

    @Test
    @DisplayName("expire lapses the delivery at once: visible again, no nack or extend; once delivered again, no acknowledge either")
    void expire() {
        faulty.send("x");
        Message<String> first = faulty.receive().get(0);

        faulty.expire(first);

        assertThatThrownBy(first::nack).isInstanceOf(ReceiptHandleExpiredException.class);
        assertThatThrownBy(() -> first.extendVisibility(Duration.ofMinutes(1)))
                .isInstanceOf(ReceiptHandleExpiredException.class);
        Message<String> again = faulty.receive().get(0);
        assertThat(again.deliveryCount()).isEqualTo(2);
        assertThatThrownBy(first::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
        assertThat(real.approximateCount()).isEqualTo(1);
        again.acknowledge();
        assertThat(real.approximateCount()).isZero();
    }

    @Test
    @DisplayName("an expired handle still acknowledges while the message has not been delivered again, where the real mailbox allows late acknowledgement")
    void expireThenLateAcknowledge() {
        faulty.sendBatch(List.of("a", "b"), SendOptions.defaults().withGroupId("tenant"));
        List<Message<String>> got = faulty.receive(ReceiveOptions.defaults().withMaxMessages(2));
        assertThat(got).extracting(Message::groupId).containsOnly("tenant");

        faulty.expire(got.get(0));
        faulty.expire(got.get(1));
        got.get(0).acknowledge();
        faulty.acknowledge(got.get(1).receiptHandle());

        assertThat(real.approximateCount()).isZero();
        assertThat(faulty.receive()).isEmpty();
    }

    @Test
    @DisplayName("on a mailbox without late acknowledgement an expired handle is stale for every call")
    void expireWithoutLateAcknowledge() {
        try (InMemoryMailbox<String> inner = InMemoryMailbox.builder("inner", Codec.utf8()).build()) {
            FaultInjectingMailbox<String> noLate = FaultInjectingMailbox.wrap(new dev.mailbox.testkit.ForwardingMailbox<>(inner) {
                @Override
                public dev.mailbox.api.MailboxCapabilities capabilities() {
                    return dev.mailbox.api.MailboxCapabilities.builder().exactCount(true).detectsStaleAcknowledge(true)
                            .build();
                }

                @Override
                public Mailbox<String> fenced(long epoch) {
                    return inner.fenced(epoch);
                }
            });
            noLate.send("x");
            Message<String> got = noLate.receive().get(0);
            noLate.expire(got);
            assertThatThrownBy(got::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThat(inner.approximateCount()).isEqualTo(1);
        }
    }

    @Test
    @DisplayName("messages through the wrapper keep the real group id and sequence number")
    void groupsForwarded() {
        try (InMemoryMailbox<String> fifo = InMemoryMailbox.builder("fifo", Codec.utf8())
                .fifo(dev.mailbox.api.FifoOptions.defaults()).build()) {
            FaultInjectingMailbox<String> wrapped = FaultInjectingMailbox.wrap(fifo);
            assertThatThrownBy(() -> wrapped.send("x")).isInstanceOf(IllegalArgumentException.class);
            wrapped.send("x", SendOptions.defaults().withGroupId("g"));
            Message<String> got = wrapped.receive().get(0);
            assertThat(got.groupId()).isEqualTo("g");
            assertThat(got.sequenceNumber()).isEqualTo("00000000000000000000");
            assertThat(wrapped.capabilities().fifo()).isTrue();
        }
    }

    @Test
    @DisplayName("duplicateNextDelivery hands the same message out twice; only one acknowledge succeeds")
    void duplicate() {
        faulty.send("x");
        faulty.duplicateNextDelivery();

        Message<String> first = faulty.receive().get(0);
        Message<String> dup = faulty.receive().get(0);

        assertThat(dup.id()).isEqualTo(first.id());
        assertThat(dup.receiptHandle()).isNotEqualTo(first.receiptHandle());
        first.acknowledge();
        assertThatThrownBy(dup::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
    }

    @Test
    @DisplayName("injected messages come first and record what was done to them")
    void inject() {
        faulty.send("real one");
        FaultInjectingMailbox.InjectedMessage<String> fake = faulty.inject("fake");
        FaultInjectingMailbox.InjectedMessage<String> poison = faulty.injectUndecodable("bad bytes");

        List<Message<String>> got = faulty.receive(ReceiveOptions.defaults().withMaxMessages(10));

        assertThat(got).hasSize(3);
        assertThat(got.get(0).body()).isEqualTo("fake");
        assertThatThrownBy(got.get(1)::body).isInstanceOf(SerializationException.class).hasMessageContaining("bad bytes");
        assertThat(got.get(2).body()).isEqualTo("real one");
        got.get(0).acknowledge();
        got.get(1).nack();
        assertThat(fake.acknowledged()).isTrue();
        assertThat(poison.nacks()).isEqualTo(1);
        assertThat(real.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("a CollectingMailbox in front of a real one forwards and records")
    void collectingWrapper() {
        CollectingMailbox<String> collecting = CollectingMailbox.wrapping(real);
        String id = collecting.send("x");

        assertThat(collecting.sent()).singleElement().satisfies(s -> assertThat(s.id()).isEqualTo(id));
        Message<String> m = collecting.receive().get(0);
        assertThat(m.id()).isEqualTo(id);
        m.acknowledge();
        assertThat(collecting.approximateCount()).isZero();
    }

    @Test
    @DisplayName("the handle calls take the wrapper's handles, meet the same faults, and reach the real delivery")
    void handleCalls() {
        faulty.sendBatch(List.of("a", "b", "c"));
        List<Message<String>> got = faulty.receive(ReceiveOptions.defaults().withMaxMessages(3));

        faulty.failNext(Operation.ACKNOWLEDGE, 1);
        assertThatThrownBy(() -> faulty.acknowledge(got.get(0).receiptHandle()))
                .isInstanceOf(MailboxUnavailableException.class);
        assertThat(real.approximateCount()).isEqualTo(3);
        faulty.acknowledge(got.get(0).receiptHandle());
        assertThat(real.approximateCount()).isEqualTo(2);

        faulty.nack(got.get(1).receiptHandle(), Duration.ZERO);
        faulty.extendVisibility(got.get(2).receiptHandle(), Duration.ofMinutes(5));
        Message<String> again = faulty.receive().get(0);
        assertThat(again.body()).isEqualTo("b");
        assertThat(again.deliveryCount()).isEqualTo(2);

        faulty.expire(again);
        assertThatThrownBy(() -> faulty.nack(again.receiptHandle(), Duration.ZERO))
                .isInstanceOf(ReceiptHandleExpiredException.class).hasMessageContaining("fault injector");
        assertThatThrownBy(() -> faulty.acknowledge("not a receipt handle")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("an injected message can be acknowledged and nacked by its handle too")
    void injectedByHandle() {
        FaultInjectingMailbox.InjectedMessage<String> fake = faulty.inject("fake");
        Message<String> got = faulty.receive().get(0);

        faulty.nack(got.receiptHandle(), Duration.ZERO);
        faulty.acknowledge(got.receiptHandle());

        assertThat(fake.nacks()).isEqualTo(1);
        assertThat(fake.acknowledged()).isTrue();
        assertThat(real.approximateCount()).isZero();
    }

    @Test
    @DisplayName("a fenced view shares the faults, and is fenced by the real mailbox")
    void fencedView() {
        FaultInjectingMailbox<String> old = faulty.fenced(1);
        faulty.failNext(Operation.RECEIVE, 1);
        faulty.send("x");
        assertThatThrownBy(old::receive).isInstanceOf(MailboxUnavailableException.class);
        Message<String> held = old.receive().get(0);

        assertThat(faulty.fenced(2).receive()).isEmpty();

        assertThatThrownBy(held::acknowledge).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> old.acknowledge(held.receiptHandle())).isInstanceOf(FencedException.class);
        assertThatThrownBy(old::receive).isInstanceOf(FencedException.class);
        old.close(); // closes nothing
        faulty.fenced(2).acknowledge(held.receiptHandle());
        assertThat(real.approximateCount()).isZero();
    }

    @Test
    @DisplayName("a CollectingMailbox records a deduplicated send once, and its fenced views record into the same list")
    void collectingDeduplicatedAndFenced() {
        CollectingMailbox<String> collecting = CollectingMailbox.wrapping(real);
        SendOptions once = SendOptions.defaults().withDeduplicationId("once");
        String id = collecting.send("x", once);
        assertThat(collecting.send("x", once)).isEqualTo(id);

        CollectingMailbox<String> view = collecting.fenced(3);
        view.send("y");

        assertThat(collecting.bodies()).containsExactly("x", "y");
        assertThat(view.bodies()).containsExactly("x", "y");
        Message<String> got = view.receive().get(0);
        assertThat(collecting.fenced(4).receive()).hasSize(1);
        assertThatThrownBy(got::acknowledge).isInstanceOf(FencedException.class);
        view.close();
        assertThat(real.approximateCount()).isEqualTo(2);
        collecting.acknowledge(got.receiptHandle());
        assertThat(real.approximateCount()).isEqualTo(1);
    }
}
