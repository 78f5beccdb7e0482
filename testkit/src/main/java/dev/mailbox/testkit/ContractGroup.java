package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * What the kit's groups kept in files of their own share: the kit they run in (its backend hooks and its
 * clean-up) and the small helpers every group uses. A group is composed into {@link MailboxContract} as a
 * {@code @Nested} inner class that extends it, so a backend's one subclass of the kit runs it too.
 */
abstract class ContractGroup {

    /** A timeout that must not lapse during a test. */
    static final Duration LONG = Duration.ofMinutes(10);

    /** The kit this group runs in. */
    final MailboxContract kit;

    ContractGroup(MailboxContract kit) {
        this.kit = kit;
    }

    Duration tick() {
        return kit.tick();
    }

    Duration ticks(long n) {
        return kit.tick().multipliedBy(n);
    }

    <T> Mailbox<T> newMailbox(MailboxSpec<T> spec) {
        return kit.newMailbox(spec);
    }

    /** @return a standard mailbox of strings */
    Mailbox<String> standardMailbox(String hint) {
        return kit.newMailbox(MailboxSpec.of(MailboxContract.uniqueName(hint), MailboxContract.TEXT));
    }

    /** @return a FIFO mailbox of strings; the test is skipped, saying why, if the backend makes none */
    Mailbox<String> fifoMailbox(FifoOptions options) {
        return assumeFifo(kit.newMailbox(MailboxSpec.of(MailboxContract.uniqueName("fifo"), MailboxContract.TEXT)
                .withFifo(options)));
    }

    <T> Mailbox<T> assumeFifo(Mailbox<T> m) {
        Assumptions.assumeTrue(m.capabilities().fifo(), () -> kit.getClass().getSimpleName() + " made a mailbox"
                + " for a MailboxSpec with FIFO options that does not declare MailboxCapabilities.fifo(): this"
                + " backend has no FIFO mailboxes (yet), so the FIFO tests are skipped");
        return m;
    }

    static SendOptions group(String groupId) {
        return SendOptions.defaults().withGroupId(groupId);
    }

    static ReceiveOptions visibility(Duration timeout) {
        return ReceiveOptions.defaults().withVisibilityTimeout(timeout);
    }

    /** One receive of up to {@code max}, waiting the kit's patience for the first message. */
    <T> List<Message<T>> receive(Mailbox<T> m, int max, Duration visibilityTimeout) {
        return m.receive(visibility(visibilityTimeout).withMaxMessages(max).withWaitTime(kit.patience()));
    }

    <T> Message<T> receiveOne(Mailbox<T> m, Duration visibilityTimeout) {
        List<Message<T>> got = receive(m, 1, visibilityTimeout);
        assertThat(got).as("one message received from %s", m.name()).hasSize(1);
        return got.get(0);
    }

    <T> Message<T> receiveOne(Mailbox<T> m) {
        return receiveOne(m, LONG);
    }

    /** Receives until {@code n} messages arrived (or nothing more comes within patience), in arrival order. */
    <T> List<Message<T>> receiveAll(Mailbox<T> m, int n, Duration visibilityTimeout) {
        List<Message<T>> all = new ArrayList<>();
        long deadline = System.nanoTime() + kit.patience().toNanos();
        Duration wait = kit.patience().isZero() ? Duration.ZERO : Duration.ofSeconds(1);
        while (all.size() < n) {
            int want = Math.min(Limits.MAX_BATCH, n - all.size());
            List<Message<T>> batch = m.receive(visibility(visibilityTimeout).withMaxMessages(want).withWaitTime(wait));
            if (batch.isEmpty() && System.nanoTime() - deadline >= 0) {
                break;
            }
            all.addAll(batch);
        }
        return all;
    }

    static void assertNothingVisible(Mailbox<?> m) {
        assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10)))
                .as("messages visible in %s", m.name()).isEmpty();
    }

    void assertCount(Mailbox<?> m, long expected) {
        if (m.capabilities().exactCount()) {
            assertThat(m.approximateCount()).as("count of %s", m.name()).isEqualTo(expected);
            return;
        }
        long deadline = System.nanoTime() + kit.patience().plusSeconds(60).toNanos();
        long last;
        while ((last = m.approximateCount()) != expected && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        assertThat(last).as("count of %s (eventually)", m.name()).isEqualTo(expected);
    }

    static List<String> bodies(List<? extends Message<String>> messages) {
        return messages.stream().map(Message::body).toList();
    }
}
