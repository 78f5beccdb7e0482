package dev.mailbox.api;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The api's side of send deduplication and fencing: the id rule, the option, the exception, the flags. */
class DeduplicationAndFencingTest {

    private static final String PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

    @ParameterizedTest
    @ValueSource(strings = {"a", "Z", "0", "order-42", "batch/3", "tenant:acme#7", PUNCTUATION,
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"})
    @DisplayName("ids of A-Z, a-z, 0-9 and ASCII punctuation are accepted as they are")
    void goodIds(String id) {
        assertThat(Limits.requireDeduplicationId(id)).isSameAs(id);
        assertThat(SendOptions.defaults().withDeduplicationId(id).deduplicationId()).isEqualTo(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "has space", "tab\t", "new\nline", "nul\u0000", "ümlaut", "emoji\uD83D\uDCE8",
            "del\u007F"})
    @DisplayName("empty ids, spaces, control and non-ASCII characters are refused, naming the rule")
    void badIds(String id) {
        assertThatThrownBy(() -> Limits.requireDeduplicationId(id)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("deduplication id must be 1 to 128 characters")
                .hasMessageContaining("'" + id + "'");
        assertThatThrownBy(() -> SendOptions.defaults().withDeduplicationId(id))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("128 characters is the longest id; a longer one is refused with its start quoted, not all of it")
    void length() {
        assertThat(Limits.MAX_DEDUPLICATION_ID_LENGTH).isEqualTo(128);
        String longest = "x".repeat(128);
        assertThat(Limits.requireDeduplicationId(longest)).isEqualTo(longest);
        assertThatThrownBy(() -> Limits.requireDeduplicationId("y".repeat(129)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("128");
        String huge = "z".repeat(10_000);
        assertThatThrownBy(() -> Limits.requireDeduplicationId(huge)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("z".repeat(200) + "...")
                .hasMessageNotContaining("z".repeat(201));
    }

    @Test
    @DisplayName("a null id is refused with NullPointerException, naming it")
    void nullId() {
        assertThatThrownBy(() -> Limits.requireDeduplicationId(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("deduplicationId");
        assertThatThrownBy(() -> SendOptions.defaults().withDeduplicationId(null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    @DisplayName("the window is SQS's five minutes")
    void window() {
        assertThat(Limits.DEDUPLICATION_WINDOW).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    @DisplayName("sends are not deduplicated by default; the id survives the other with-methods and a refused one")
    void option() {
        assertThat(SendOptions.defaults().deduplicationId()).isNull();

        SendOptions o = SendOptions.defaults().withDeduplicationId("first")
                .withDelay(Duration.ofSeconds(3)).withAttribute("k", "v").withAttributes(Map.of("j", "w"));

        assertThat(o.deduplicationId()).isEqualTo("first");
        assertThat(o.delay()).isEqualTo(Duration.ofSeconds(3));
        assertThat(o.attributes()).containsEntry("k", "v").containsEntry("j", "w");
        assertThat(o.withDeduplicationId("second").deduplicationId()).isEqualTo("second");
        assertThatThrownBy(() -> o.withDeduplicationId("not valid")).isInstanceOf(IllegalArgumentException.class);
        assertThat(o.deduplicationId()).as("the original is untouched").isEqualTo("first");
    }

    @Test
    @DisplayName("the id takes part in equals, hashCode and toString")
    void optionIdentity() {
        SendOptions plain = SendOptions.defaults();
        SendOptions a = plain.withDeduplicationId("a");

        assertThat(a).isEqualTo(SendOptions.defaults().withDeduplicationId("a"))
                .hasSameHashCodeAs(SendOptions.defaults().withDeduplicationId("a"))
                .isNotEqualTo(plain)
                .isNotEqualTo(plain.withDeduplicationId("b"));
        assertThat(a.toString()).contains("deduplicationId=a");
        assertThat(plain.toString()).doesNotContain("deduplicationId");
    }

    @Test
    @DisplayName("FencedException is a non-retryable MailboxException carrying both epochs and naming them and the mailbox")
    void fencedException() {
        FencedException e = new FencedException("orders@n1", 3, 5);

        assertThat(e).isInstanceOf(MailboxException.class)
                .hasMessageContaining("'orders@n1'")
                .hasMessageContaining("epoch 3")
                .hasMessageContaining("epoch 5");
        assertThat(e.epoch()).isEqualTo(3);
        assertThat(e.fence()).isEqualTo(5);
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getCause()).isNull();
    }

    @Test
    @DisplayName("capabilities: fencing and deduplication default to the weak answer, are set by the builder and shown")
    void capabilities() {
        MailboxCapabilities weakest = MailboxCapabilities.builder().build();
        assertThat(weakest.atomicFencing()).isFalse();
        assertThat(weakest.durableDeduplication()).isFalse();
        assertThat(weakest.toString()).contains("atomicFencing=false").contains("durableDeduplication=false");

        MailboxCapabilities strong = MailboxCapabilities.builder().atomicFencing(true).durableDeduplication(true).build();
        assertThat(strong.atomicFencing()).isTrue();
        assertThat(strong.durableDeduplication()).isTrue();
        assertThat(strong.toString()).contains("atomicFencing=true").contains("durableDeduplication=true");

        MailboxCapabilities one = MailboxCapabilities.builder().atomicFencing(true).build();
        assertThat(one.durableDeduplication()).as("the flags are independent").isFalse();
        assertThat(MailboxCapabilities.builder().durableDeduplication(true).build().atomicFencing()).isFalse();
    }
}
