package dev.mailbox.inmemory;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.ManualClock;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.time.Instant;

/** The whole contract on InMemoryMailbox, on a manual clock: no test here waits in real time. */
@DisplayName("InMemoryMailbox meets the Mailbox contract")
class InMemoryMailboxContractTest extends MailboxContract {

    private final ManualClock clock = new ManualClock();

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        InMemoryMailbox.Builder<T> b = InMemoryMailbox.builder(spec.name(), spec.codec())
                .timeSource(clock)
                .capacity(spec.capacity())
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        return b.build();
    }

    @Override
    protected void elapse(Duration duration) {
        clock.advance(duration);
    }

    @Override
    protected Duration patience() {
        return Duration.ZERO;
    }

    @Override
    protected Instant backendNow() {
        return clock.now();
    }
}
