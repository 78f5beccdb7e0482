package dev.mailbox.inmemory;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.testkit.InspectionContract;
import dev.mailbox.testkit.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;

/** The inspection contract on InMemoryMailbox, on a manual clock. */
@DisplayName("InMemoryMailbox meets the Inspection contract")
class InMemoryInspectionTest extends InspectionContract {

    private final ManualClock clock = new ManualClock();

    @Override
    protected Mailbox<byte[]> mailbox(String name) {
        return InMemoryMailbox.builder(name, Codec.bytes()).timeSource(clock).build();
    }

    @Override
    protected Mailbox<byte[]> mailbox(String name, RedrivePolicy policy) {
        return InMemoryMailbox.builder(name, Codec.bytes()).timeSource(clock).redrivePolicy(policy).build();
    }

    @Override
    protected Mailbox<byte[]> fifoMailbox(String name) {
        return InMemoryMailbox.builder(name, Codec.bytes()).timeSource(clock).fifo(FifoOptions.defaults()).build();
    }

    @Override
    protected void elapse(Duration duration) {
        clock.advance(duration);
    }
}
