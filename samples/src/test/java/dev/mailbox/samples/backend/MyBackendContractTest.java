package dev.mailbox.samples.backend;

import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;

/** The whole Mailbox contract against a backend: here InMemoryMailbox stands in for yours. */
class MyBackendContractTest extends MailboxContract {

    private final ManualClock clock = new ManualClock();

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        InMemoryMailbox.Builder<T> mailbox = InMemoryMailbox.builder(spec.name(), spec.codec())
                .timeSource(clock)
                .capacity(spec.capacity())
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.redrivePolicy() != null) {
            mailbox.redrivePolicy(spec.redrivePolicy());
        }
        return mailbox.build();
    }

    // With a clock the test can move, the kit never sleeps: these four tell it so.
    @Override
    protected boolean hasManualClock() {
        return true;
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
