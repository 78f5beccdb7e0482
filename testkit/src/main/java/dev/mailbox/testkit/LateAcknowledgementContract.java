package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.RedrivePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The kit's late-acknowledgement group, on every backend that declares
 * {@link dev.mailbox.api.MailboxCapabilities#lateAcknowledge()}: the most recent delivery's handle deletes the
 * message after its visibility timeout ended, until the message is delivered again (as SQS); a superseded
 * handle is refused at once; nack and extend need the message in flight. Refusals of acknowledge are checked
 * where the backend {@link dev.mailbox.api.MailboxCapabilities#detectsStaleAcknowledge() detects} them; that
 * nothing was deleted is checked everywhere.
 */
abstract class LateAcknowledgementContract extends ContractGroup {

    LateAcknowledgementContract(MailboxContract kit) {
        super(kit);
    }

    private Mailbox<String> late(MailboxSpec<String> spec) {
        Mailbox<String> m = newMailbox(spec);
        assumeLate(m);
        return m;
    }

    private void assumeLate(Mailbox<?> m) {
        Assumptions.assumeTrue(m.capabilities().lateAcknowledge(), () -> kit.getClass().getSimpleName()
                + " does not declare MailboxCapabilities.lateAcknowledge(), so the late-acknowledgement tests are skipped");
    }

    private Mailbox<String> late() {
        return late(MailboxSpec.of(MailboxContract.uniqueName("late"), MailboxContract.TEXT));
    }

    /** A message received with a one-tick visibility timeout that has since ended. */
    private Message<String> lapsed(Mailbox<String> m) {
        Message<String> got = receiveOne(m, tick());
        kit.elapse(tick());
        return got;
    }

    private static void assertStale(Mailbox<?> m, Runnable acknowledge) {
        if (m.capabilities().detectsStaleAcknowledge()) {
            assertThatThrownBy(acknowledge::run).isInstanceOf(ReceiptHandleExpiredException.class);
        } else {
            try {
                acknowledge.run();
            } catch (ReceiptHandleExpiredException detected) {
                // allowed
            }
        }
    }

    @Test
    @DisplayName("after the visibility timeout ended, the most recent handle still deletes the message")
    void lateAcknowledgeDeletes() {
        Mailbox<String> m = late();
        m.send("slow");
        Message<String> got = lapsed(m);

        assertThatCode(got::acknowledge).doesNotThrowAnyException();
        assertCount(m, 0);
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("a late acknowledgement deletes the message also after the mailbox has put it back in its queue")
    void lateAcknowledgeAfterRequeue() {
        Mailbox<String> m = late();
        m.send("slow");
        Message<String> got = lapsed(m);
        m.send("next"); // a backend may move the lapsed message back to its queue on any call: a send is one

        got.acknowledge();
        assertCount(m, 1);
        Message<String> next = receiveOne(m);
        assertThat(next.body()).isEqualTo("next");
        next.acknowledge();
        assertNothingVisible(m);
        assertCount(m, 0);
    }

    @Test
    @DisplayName("a late acknowledgement works by handle too, also from another object on the same queue")
    void lateAcknowledgeByHandle() {
        MailboxSpec<String> spec = MailboxSpec.of(MailboxContract.uniqueName("late"), MailboxContract.TEXT);
        Mailbox<String> m = late(spec);
        Optional<Mailbox<String>> other = kit.secondObjectIfAny(spec);
        m.sendBatch(List.of("a", "b"));
        List<Message<String>> got = receiveAll(m, 2, tick());
        assertThat(got).hasSize(2);
        kit.elapse(tick());

        m.acknowledge(got.get(0).receiptHandle());
        other.orElse(m).acknowledge(got.get(1).receiptHandle());
        assertCount(m, 0);
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("a batch acknowledge deletes lapsed messages and reports none of them stale")
    void lateAcknowledgeBatch() {
        Mailbox<String> m = late();
        m.sendBatch(List.of("a", "b", "c"));
        List<Message<String>> got = receiveAll(m, 3, tick());
        assertThat(got).hasSize(3);
        kit.elapse(tick());

        assertThat(m.acknowledgeBatch(got)).isEmpty();
        assertCount(m, 0);
    }

    @Test
    @DisplayName("a handle superseded by a later delivery is refused at once and deletes nothing")
    void lateAcknowledgeSupersededRefused() {
        Mailbox<String> m = late();
        m.send("x");
        Message<String> first = lapsed(m);
        Message<String> second = receiveOne(m);
        assertThat(second.deliveryCount()).isEqualTo(2);

        assertStale(m, first::acknowledge);
        assertStale(m, () -> m.acknowledge(first.receiptHandle()));
        assertCount(m, 1);
        assertNothingVisible(m);
        assertThatCode(second::acknowledge).doesNotThrowAnyException();
        assertCount(m, 0);
    }

    @Test
    @DisplayName("after the visibility timeout ended, nack and extend are refused; acknowledge still works")
    void lateNackAndExtendRefused() {
        Mailbox<String> m = late();
        m.send("x");
        Message<String> got = lapsed(m);

        assertThatThrownBy(got::nack).isInstanceOf(ReceiptHandleExpiredException.class);
        assertThatThrownBy(() -> got.extendVisibility(LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
        assertThatThrownBy(() -> m.nack(got.receiptHandle(), Duration.ZERO)).isInstanceOf(ReceiptHandleExpiredException.class);
        assertThatThrownBy(() -> m.extendVisibility(got.receiptHandle(), LONG))
                .isInstanceOf(ReceiptHandleExpiredException.class);
        got.acknowledge();
        assertCount(m, 0);
    }

    @Test
    @DisplayName("extending the visibility by zero ends it as a lapse would: the handle still acknowledges")
    void lateAfterExtendZero() {
        Mailbox<String> m = late();
        m.send("x");
        Message<String> got = receiveOne(m);
        got.extendVisibility(Duration.ZERO);

        assertThatThrownBy(() -> got.nack()).isInstanceOf(ReceiptHandleExpiredException.class);
        got.acknowledge();
        assertCount(m, 0);
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("a nacked delivery's handle does not acknowledge, even before the message is delivered again")
    void lateNotAfterNack() {
        Mailbox<String> m = late();
        Assumptions.assumeTrue(m.capabilities().detectsStaleAcknowledge(),
                "a backend that cannot detect stale deletes may delete a nacked message (SQS does)");
        m.send("x");
        Message<String> got = receiveOne(m);
        got.nack();

        assertThatThrownBy(got::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
        assertCount(m, 1);
        assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
    }

    @Test
    @DisplayName("acknowledge-and-receive takes a lapsed message as acknowledged")
    void lateAcknowledgeAndReceive() {
        Mailbox<String> m = late();
        m.sendBatch(List.of("a", "b"));
        Message<String> a = lapsed(m);
        List<Message<String>> stale = new ArrayList<>();

        List<Message<String>> next = m.acknowledgeAndReceive(List.of(a), visibility(LONG).withMaxMessages(10)
                .withWaitTime(kit.patience()), stale::add);
        assertThat(stale).isEmpty();
        assertThat(bodies(next)).containsExactly(a.body().equals("a") ? "b" : "a");
        assertCount(m, 1);
    }

    @Test
    @DisplayName("a message dead-lettered after it lapsed cannot be acknowledged with its old handle")
    void lateNotAfterDeadLetter() {
        Mailbox<String> dlq = newMailbox(MailboxSpec.of(MailboxContract.uniqueName("dlq"), MailboxContract.TEXT));
        Mailbox<String> m = late(MailboxSpec.of(MailboxContract.uniqueName("late"), MailboxContract.TEXT)
                .withRedrivePolicy(RedrivePolicy.of(1, dlq)));
        m.send("x");
        Message<String> got = lapsed(m);
        assertNothingVisible(m); // this receive moves it

        assertStale(m, got::acknowledge);
        assertThat(receiveOne(dlq).body()).isEqualTo("x");
    }

    @Test
    @DisplayName("a late acknowledgement through a fenced view is fenced like any other")
    void lateAcknowledgeFenced() {
        Mailbox<String> m = late();
        m.sendBatch(List.of("a", "b"));
        Mailbox<String> view = m.fenced(1);
        List<Message<String>> got = new ArrayList<>();
        got.add(receiveOne(view, tick()));
        got.add(receiveOne(view, tick()));
        kit.elapse(tick());

        assertThatCode(() -> m.fenced(2).acknowledge(got.get(1).receiptHandle())).doesNotThrowAnyException();
        assertCount(m, 1);
        assertThatThrownBy(got.get(0)::acknowledge).isInstanceOf(FencedException.class);
        assertCount(m, 1);
    }

    @Test
    @DisplayName("on a FIFO mailbox, a message of a run acknowledged late while the rest of the run is in flight is gone when the group moves on")
    void lateAcknowledgeFifoInsideRun() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults());
        assumeLate(m);
        m.sendBatch(List.of("a1", "a2", "a3"), group("a"));
        List<Message<String>> run = receive(m, 2, LONG);
        run.get(0).extendVisibility(Duration.ZERO); // a1 lapses: back at the head, its group held by a2 where the run has it
        m.send("b1", group("b")); // a backend may put a1 back in its group on any call

        run.get(0).acknowledge(); // late
        if (run.size() > 1) {
            List<Message<String>> other = receive(m, 10, LONG);
            assertThat(bodies(other)).as("group a is held by a2").containsExactly("b1");
            other.get(0).acknowledge();
            run.get(1).acknowledge();
        }
        List<String> rest = new ArrayList<>();
        for (Message<String> x : receiveAll(m, run.size() > 1 ? 1 : 2, LONG)) {
            assertThat(x.deliveryCount()).isEqualTo(1);
            rest.add(x.body());
        }
        assertThat(rest).containsExactlyInAnyOrderElementsOf(run.size() > 1 ? List.of("a3") : List.of("a2", "b1"));
    }

    @Test
    @DisplayName("on a FIFO mailbox, a late acknowledgement of a lapsed head lets the group's next message through")
    void lateAcknowledgeFifoHead() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults());
        assumeLate(m);
        m.send("a1", group("a"));
        m.send("a2", group("a"));
        Message<String> a1 = lapsed(m);
        m.send("b1", group("b")); // a backend may put the lapsed a1 back at its group's head on any call

        a1.acknowledge();
        assertCount(m, 2);
        List<Message<String>> next = receiveAll(m, 2, LONG);
        assertThat(bodies(next)).containsExactlyInAnyOrder("a2", "b1");
        assertThat(next).allSatisfy(x -> assertThat(x.deliveryCount()).isEqualTo(1));
    }
}
