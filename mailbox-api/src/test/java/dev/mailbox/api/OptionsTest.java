package dev.mailbox.api;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OptionsTest {

    @Test
    @DisplayName("receive defaults are 1 message, 30 s visibility and no wait")
    void receiveDefaults() {
        ReceiveOptions d = ReceiveOptions.defaults();
        assertThat(d.maxMessages()).isEqualTo(1);
        assertThat(d.visibilityTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.waitTime()).isZero();
    }

    @Test
    @DisplayName("with-methods return new instances and leave the original alone")
    void immutable() {
        ReceiveOptions d = ReceiveOptions.defaults();
        ReceiveOptions ten = d.withMaxMessages(10).withWaitTime(Duration.ofSeconds(20));
        assertThat(d.maxMessages()).isEqualTo(1);
        assertThat(ten.maxMessages()).isEqualTo(10);
        assertThat(ten.waitTime()).isEqualTo(Duration.ofSeconds(20));
        assertThat(ten).isEqualTo(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20)).withMaxMessages(10))
                .hasSameHashCodeAs(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20)).withMaxMessages(10));

        SendOptions s = SendOptions.defaults();
        SendOptions withA = s.withAttribute("a", "1");
        assertThat(s.attributes()).isEmpty();
        assertThat(withA.attributes()).containsExactly(Map.entry("a", "1"));
    }

    @Test
    @DisplayName("the limits themselves are accepted: 10 messages, 12 h visibility, 15 min delay and wait")
    void boundariesAccepted() {
        ReceiveOptions max = ReceiveOptions.defaults().withMaxMessages(10)
                .withVisibilityTimeout(Duration.ofHours(12)).withWaitTime(Duration.ofMinutes(15));
        assertThat(max.visibilityTimeout()).isEqualTo(Duration.ofHours(12));
        assertThat(SendOptions.defaults().withDelay(Duration.ofMinutes(15)).delay()).isEqualTo(Duration.ofMinutes(15));
        assertThat(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ZERO).visibilityTimeout()).isZero();
    }

    @Test
    @DisplayName("attributes keep insertion order, replace on the same name and cannot be modified")
    void attributes() {
        Map<String, String> in = new LinkedHashMap<>();
        in.put("b", "2");
        in.put("a", "1");
        SendOptions o = SendOptions.defaults().withAttributes(in).withAttribute("b", "3");
        assertThat(o.attributes()).containsExactly(Map.entry("b", "3"), Map.entry("a", "1"));
        assertThatThrownBy(() -> o.attributes().put("c", "x")).isInstanceOf(UnsupportedOperationException.class);
        in.put("c", "later");
        assertThat(o.attributes()).doesNotContainKey("c");
    }

    @Test
    @DisplayName("exactly ten attributes are fine; an eleventh is refused")
    void tenAttributes() {
        SendOptions o = SendOptions.defaults();
        for (int i = 0; i < 10; i++) {
            o = o.withAttribute("a" + i, "v");
        }
        SendOptions ten = o;
        assertThat(ten.attributes()).hasSize(10);
        assertThatThrownBy(() -> ten.withAttribute("eleventh", "v"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 10");
        assertThat(ten.withAttribute("a3", "replaced").attributes()).hasSize(10);
    }

    @Test
    @DisplayName("a redrive policy's maxReceiveCount must be 1 to 1000")
    void redriveRange() {
        Mailbox<?> dlq = new StubMailbox("dlq");
        assertThat(RedrivePolicy.of(1, dlq).maxReceiveCount()).isEqualTo(1);
        assertThat(RedrivePolicy.of(1000, dlq).maxReceiveCount()).isEqualTo(1000);
        assertThatThrownBy(() -> RedrivePolicy.of(0, dlq)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and 1000");
        assertThatThrownBy(() -> RedrivePolicy.of(1001, dlq)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedrivePolicy.of(3, null)).isInstanceOf(NullPointerException.class);
        assertThat(RedrivePolicy.of(3, dlq).toString()).contains("dlq");
    }

    @Test
    @DisplayName("only unavailability can be retryable")
    void retryable() {
        assertThat(new MailboxException("x").isRetryable()).isFalse();
        assertThat(new MailboxFullException("m", 3, 1).isRetryable()).isFalse();
        assertThat(new MailboxUnavailableException("down", true, null).isRetryable()).isTrue();
        assertThat(new MailboxUnavailableException("bad credentials", false, null).isRetryable()).isFalse();
        assertThat(new MailboxClosedException("m").isRetryable()).isFalse();
        assertThat(new MailboxFullException("m", 3, 2)).hasMessageContaining("'m'").hasMessageContaining("capacity 3");
        assertThat(new MessageTooLargeException("m", 300, 256)).hasMessageContaining("300").hasMessageContaining("256");
    }

    @Test
    @DisplayName("capabilities default to the weakest guarantees and validate their arguments")
    void capabilities() {
        MailboxCapabilities weakest = MailboxCapabilities.builder().build();
        assertThat(weakest.fifo()).isFalse();
        assertThat(weakest.exactCount()).isFalse();
        assertThat(weakest.detectsStaleAcknowledge()).isFalse();
        assertThat(weakest.maxMessageBytes()).isEqualTo(Limits.DEFAULT_MAX_MESSAGE_BYTES);
        assertThatThrownBy(() -> MailboxCapabilities.builder().maxMessageBytes(Limits.MAX_MESSAGE_BYTES + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 MiB");
        assertThatThrownBy(() -> MailboxCapabilities.builder().timeGranularity(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Only its name is used. */
    private record StubMailbox(String name) implements Mailbox<String> {
        @Override
        public String send(String body, SendOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.List<String> sendBatch(java.util.List<? extends String> bodies, SendOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.List<Message<String>> receive(ReceiveOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void acknowledge(String receiptHandle) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void nack(String receiptHandle, Duration visibilityTimeout) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void extendVisibility(String receiptHandle, Duration timeout) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Mailbox<String> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long purge() {
            return 0;
        }

        @Override
        public long approximateCount() {
            return 0;
        }

        @Override
        public MailboxCapabilities capabilities() {
            return MailboxCapabilities.builder().build();
        }

        @Override
        public void close() {
        }
    }
}
