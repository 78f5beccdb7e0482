package dev.mailbox.coordination.server;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;

/**
 * The contract through a node ({@link NodeMailboxContract}) on in-memory mailboxes, FIFO ones for the kit's FIFO
 * group (so the FIFO, fairness and late-acknowledgement groups all run, none skipped). The hosted mailboxes run
 * on a manual clock, so no test waits in real time.
 */
@DisplayName("RemoteMailbox through a node that does not own the mailbox meets the Mailbox contract")
class RemoteMailboxContractTest extends NodeMailboxContract {

    private static final ManualClock CLOCK = new ManualClock();

    @Override
    protected Mailbox<byte[]> hostedMailbox(MailboxSpec<?> spec, @Nullable Mailbox<byte[]> deadLetters) {
        InMemoryMailbox.Builder<byte[]> b = InMemoryMailbox.builder(spec.name(), Codec.bytes()).timeSource(CLOCK)
                .capacity(spec.capacity()).maxMessageBytes(spec.maxMessageBytes());
        if (spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        RedrivePolicy redrive = spec.redrivePolicy();
        if (redrive != null) {
            b.redrivePolicy(RedrivePolicy.of(redrive.maxReceiveCount(), deadLetters));
        }
        return b.build();
    }

    @Override
    protected boolean hasManualClock() {
        return true;
    }

    @Override
    protected void elapse(Duration duration) {
        CLOCK.advance(duration);
    }

    @Override
    protected Duration patience() {
        return Duration.ZERO;
    }

    @Override
    protected Instant backendNow() {
        return CLOCK.now();
    }
}
