package dev.mailbox.inmemory;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.ManualClock;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The whole contract on InMemoryMailbox, on a manual clock: no test here waits in real time. */
@DisplayName("InMemoryMailbox meets the Mailbox contract")
class InMemoryMailboxContractTest extends MailboxContract {

    private final ManualClock clock = new ManualClock();
    private final Map<String, InMemoryMailbox<?>> byName = new ConcurrentHashMap<>();

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        InMemoryMailbox.Builder<T> b = InMemoryMailbox.builder(spec.name(), spec.codec())
                .timeSource(clock)
                .capacity(spec.capacity())
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        if (spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        InMemoryMailbox<T> m = b.build();
        byName.put(spec.name(), m);
        return m;
    }

    /**
     * An InMemoryMailbox is its own queue, so the nearest thing to a second object on it is another
     * object that forwards to it. The testkit's CollectingMailbox is one, which also puts its forwarding
     * of handle calls and fenced views under the contract.
     */
    @Override
    @SuppressWarnings("unchecked")
    protected <T> Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        return Optional.of(CollectingMailbox.wrapping((Mailbox<T>) byName.get(spec.name())));
    }

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
