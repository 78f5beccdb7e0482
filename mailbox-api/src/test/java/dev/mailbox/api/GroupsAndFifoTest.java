package dev.mailbox.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The api's side of message groups: the group id rule, the FIFO send rules, FIFO options, fairness, flags. */
class GroupsAndFifoTest {

    private static final String PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

    @ParameterizedTest
    @ValueSource(strings = {"a", "customer-42", "tenant:acme#7", PUNCTUATION,
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
    @DisplayName("group ids of 1 to 128 characters from A-Z, a-z, 0-9 and ASCII punctuation are accepted")
    void goodGroupIds(String id) {
        assertThat(Limits.requireGroupId(id)).isSameAs(id);
        assertThat(SendOptions.defaults().withGroupId(id).groupId()).isEqualTo(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "has space", "tab\t", "ümlaut", "emoji\uD83D\uDCE8", "del\u007F"})
    @DisplayName("empty group ids, spaces, control and non-ASCII characters are refused, naming the rule")
    void badGroupIds(String id) {
        assertThatThrownBy(() -> SendOptions.defaults().withGroupId(id)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("message group id must be 1 to 128 characters")
                .hasMessageContaining("MessageGroupId");
    }

    @Test
    @DisplayName("a group id longer than 128 characters is refused with its start quoted; null is a NullPointerException")
    void groupIdLength() {
        assertThatThrownBy(() -> Limits.requireGroupId("y".repeat(129))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("128");
        assertThatThrownBy(() -> Limits.requireGroupId("z".repeat(10_000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("z".repeat(200) + "...(10000 characters)").hasMessageNotContaining("z".repeat(201));
        assertThatThrownBy(() -> SendOptions.defaults().withGroupId(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("groupId");
    }

    @Test
    @DisplayName("the group id is part of the options' value and survives the other with-methods")
    void groupIdInValue() {
        SendOptions grouped = SendOptions.defaults().withGroupId("g").withAttribute("k", "v")
                .withDeduplicationId("d").withDelay(Duration.ZERO);
        assertThat(grouped.groupId()).isEqualTo("g");
        assertThat(grouped).isEqualTo(SendOptions.defaults().withAttribute("k", "v").withGroupId("g").withDeduplicationId("d"));
        assertThat(grouped).isNotEqualTo(grouped.withGroupId("h"));
        assertThat(grouped.hashCode()).isNotEqualTo(grouped.withGroupId("h").hashCode());
        assertThat(grouped.toString()).contains("groupId=g");
        assertThat(SendOptions.defaults().groupId()).isNull();
    }

    @Test
    @DisplayName("a FIFO send needs a group id and no delay; each refusal names the mailbox and the rule")
    void fifoSendRules() {
        assertThatThrownBy(() -> Limits.requireFifoSend("orders", SendOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'orders'")
                .hasMessageContaining("FIFO").hasMessageContaining("group id");
        assertThatThrownBy(() -> Limits.requireFifoSend("orders",
                SendOptions.defaults().withGroupId("g").withDelay(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'orders'")
                .hasMessageContaining("delay").hasMessageContaining("PT1S");
        SendOptions good = SendOptions.defaults().withGroupId("g").withDelay(Duration.ZERO);
        assertThat(Limits.requireFifoSend("orders", good)).isSameAs(good);
    }

    @Test
    @DisplayName("a tenant is noisy with at least 30 in flight that are more than 10 % of all in flight")
    void noisyTenantRule() {
        assertThat(Limits.isNoisyTenant(29, 29)).isFalse();
        assertThat(Limits.isNoisyTenant(30, 30)).isTrue();
        assertThat(Limits.isNoisyTenant(30, 300)).as("exactly 10 %").isFalse();
        assertThat(Limits.isNoisyTenant(30, 299)).isTrue();
        assertThat(Limits.isNoisyTenant(1_000, 10_000)).isFalse();
        assertThat(Limits.isNoisyTenant(1_001, 10_000)).isTrue();
        assertThat(Limits.isNoisyTenant(0, 0)).isFalse();
    }

    @Test
    @DisplayName("FIFO options default to explicit ids in the mailbox scope, and are values")
    void fifoOptions() {
        FifoOptions d = FifoOptions.defaults();
        assertThat(d.contentBasedDeduplication()).isFalse();
        assertThat(d.deduplicationScope()).isEqualTo(FifoOptions.DeduplicationScope.MAILBOX);
        FifoOptions both = d.withContentBasedDeduplication(true).withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP);
        assertThat(both.contentBasedDeduplication()).isTrue();
        assertThat(both.deduplicationScope()).isEqualTo(FifoOptions.DeduplicationScope.GROUP);
        assertThat(d.contentBasedDeduplication()).as("immutable").isFalse();
        assertThat(both).isEqualTo(FifoOptions.defaults().withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP)
                .withContentBasedDeduplication(true)).hasSameHashCodeAs(both);
        assertThat(both).isNotEqualTo(d);
        assertThatThrownBy(() -> d.withDeduplicationScope(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    @DisplayName("the content deduplication id is the SHA-256 of the encoded body in lower-case hex, a valid deduplication id")
    void contentDeduplicationId() {
        String abc = FifoOptions.contentDeduplicationId("abc".getBytes(StandardCharsets.UTF_8));
        assertThat(abc).isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(FifoOptions.contentDeduplicationId(new byte[0]))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assertThat(Limits.requireDeduplicationId(abc)).isEqualTo(abc);
    }

    @Test
    @DisplayName("capabilities are values: equal with the same guarantees, each flag telling them apart")
    void capabilitiesAreValues() {
        MailboxCapabilities a = MailboxCapabilities.builder().exactCount(true).fifo(true).lateAcknowledge(true)
                .timeGranularity(java.time.Duration.ofNanos(1)).maxMessageBytes(1024).build();
        MailboxCapabilities same = MailboxCapabilities.builder().maxMessageBytes(1024).lateAcknowledge(true)
                .timeGranularity(java.time.Duration.ofNanos(1)).fifo(true).exactCount(true).build();
        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(a).isNotEqualTo(MailboxCapabilities.builder().exactCount(true).fifo(true)
                .timeGranularity(java.time.Duration.ofNanos(1)).maxMessageBytes(1024).build());
        assertThat(MailboxCapabilities.builder().fairness(true).build())
                .isNotEqualTo(MailboxCapabilities.builder().visibilityOrder(true).build())
                .isNotEqualTo(MailboxCapabilities.builder().build());
        assertThat(MailboxCapabilities.builder().timeGranularity(java.time.Duration.ofMillis(1)).build())
                .isNotEqualTo(MailboxCapabilities.builder().timeGranularity(java.time.Duration.ofMillis(2)).build());
        assertThat(MailboxCapabilities.builder().fifo(true).holdsRuns(true).build())
                .isNotEqualTo(MailboxCapabilities.builder().fifo(true).build());
        assertThat(MailboxCapabilities.builder().sharedDeliveryState(true).build())
                .isNotEqualTo(MailboxCapabilities.builder().build());
    }

    @Test
    @DisplayName("a peeked message is a value: its body compared by content, and shown by size, not content")
    void peekedIsValue() {
        java.time.Instant at = java.time.Instant.parse("2030-01-01T00:00:00Z");
        dev.mailbox.api.spi.Inspection.Peeked p = new dev.mailbox.api.spi.Inspection.Peeked("id", "secret".getBytes(
                StandardCharsets.UTF_8), java.util.Map.of("k", "v"), at, 1, dev.mailbox.api.spi.Inspection.State.QUEUED);
        dev.mailbox.api.spi.Inspection.Peeked same = new dev.mailbox.api.spi.Inspection.Peeked("id", "secret".getBytes(
                StandardCharsets.UTF_8), java.util.Map.of("k", "v"), at, 1, dev.mailbox.api.spi.Inspection.State.QUEUED);
        assertThat(p).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(p).isNotEqualTo(new dev.mailbox.api.spi.Inspection.Peeked("id", "other!".getBytes(StandardCharsets.UTF_8),
                java.util.Map.of("k", "v"), at, 1, dev.mailbox.api.spi.Inspection.State.QUEUED));
        assertThat(p.toString()).contains("id=id", "6 bytes", "QUEUED").doesNotContain("secret");
    }

    @Test
    @DisplayName("capabilities: a FIFO mailbox claims neither fairness nor visibility order; the new flags default to off")
    void capabilities() {
        MailboxCapabilities weakest = MailboxCapabilities.builder().build();
        assertThat(weakest.fifo()).isFalse();
        assertThat(weakest.fairness()).isFalse();
        assertThat(weakest.visibilityOrder()).isFalse();
        assertThat(weakest.lateAcknowledge()).isFalse();
        MailboxCapabilities fifo = MailboxCapabilities.builder().fifo(true).lateAcknowledge(true).build();
        assertThat(fifo.fifo()).isTrue();
        assertThat(fifo.lateAcknowledge()).isTrue();
        assertThat(fifo.toString()).contains("fifo=true", "lateAcknowledge=true", "fairness=false");
        assertThatThrownBy(() -> MailboxCapabilities.builder().fifo(true).fairness(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fairness");
        assertThatThrownBy(() -> MailboxCapabilities.builder().fifo(true).visibilityOrder(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("visibilityOrder");
        assertThat(weakest.contentBasedDeduplication()).isFalse();
        assertThat(MailboxCapabilities.builder().fifo(true).contentBasedDeduplication(true).build()
                .contentBasedDeduplication()).isTrue();
        assertThatThrownBy(() -> MailboxCapabilities.builder().contentBasedDeduplication(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FIFO");
    }

    @Test
    @DisplayName("capabilities: holding runs and shared delivery state default to off; only a FIFO mailbox holds runs")
    void runsAndSharedState() {
        MailboxCapabilities weakest = MailboxCapabilities.builder().build();
        assertThat(weakest.holdsRuns()).isFalse();
        assertThat(weakest.sharedDeliveryState()).isFalse();
        MailboxCapabilities strict = MailboxCapabilities.builder().fifo(true).holdsRuns(true).sharedDeliveryState(true)
                .build();
        assertThat(strict.holdsRuns()).isTrue();
        assertThat(strict.sharedDeliveryState()).isTrue();
        assertThat(strict.toString()).contains("holdsRuns=true", "sharedDeliveryState=true");
        assertThatThrownBy(() -> MailboxCapabilities.builder().holdsRuns(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdsRuns");
    }
}
