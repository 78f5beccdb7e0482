package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Inspection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What the web console reads of an SQS queue: GetQueueAttributes' approximate counts, and no peek. */
@DisplayName("SqsMailbox as an Inspection (ElasticMQ)")
class SqsInspectionTest {

    private static String fresh(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("counts visible, not visible and delayed messages as SQS does, and names the dead-letter queue")
    void counts() {
        try (SqsMailbox<byte[]> dlq = SqsMailbox.builder(fresh("dlq"), Codec.bytes()).client(SharedElasticMq.client())
                .createIfMissing(true).build();
             SqsMailbox<byte[]> m = SqsMailbox.builder(fresh("inspected"), Codec.bytes())
                     .client(SharedElasticMq.client()).createIfMissing(true).redrivePolicy(RedrivePolicy.of(4, dlq))
                     .build()) {
            m.sendBatch(List.of(new byte[] {1}, new byte[] {2}, new byte[] {3}));
            m.send(new byte[] {4}, SendOptions.defaults().withDelay(Duration.ofMinutes(1)));
            assertThat(m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(1)))).hasSize(1);

            Inspection.Stats s = m.inspect();

            assertThat(s.queued()).isEqualTo(2);
            assertThat(s.inFlight()).isEqualTo(1);
            assertThat(s.delayed()).isEqualTo(1);
            assertThat(s.exact()).isFalse();
            assertThat(s.oldestAge()).isNull();
            assertThat(s.deadLetterMailbox()).isEqualTo(dlq.name());
            assertThat(s.maxReceiveCount()).isEqualTo(4);
        }
    }

    @Test
    @DisplayName("cannot peek, and says why")
    void noPeek() {
        try (SqsMailbox<byte[]> m = SqsMailbox.builder(fresh("nopeek"), Codec.bytes()).client(SharedElasticMq.client())
                .createIfMissing(true).build()) {
            assertThat(m.canPeek()).isFalse();
            assertThatThrownBy(() -> m.peek(1)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("without receiving");
        }
    }
}
