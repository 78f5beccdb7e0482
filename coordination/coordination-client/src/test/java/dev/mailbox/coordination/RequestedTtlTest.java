package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A requested TTL is zero (the namespace's policy) or 1 s to 10 min. Anything else is refused with an
 * {@link IllegalArgumentException} before anything is sent: a positive TTL under a millisecond is not "zero",
 * and one too long for a long of milliseconds is not an {@link ArithmeticException}.
 */
class RequestedTtlTest {

    private static final LeaseHolder HOLDER = new LeaseHolder("r1", "node-a", "127.0.0.1:9");

    @Test
    @DisplayName("acquire refuses a sub-millisecond or overflowing TTL as an IllegalArgumentException, sending nothing")
    void acquireRefusesOddTtls() {
        // nothing listens there: a request that were sent would fail UNAVAILABLE instead
        try (CoordinationClient client = CoordinationClient.builder().endpoint("127.0.0.1:1").maxAttempts(1)
                .callTimeout(Duration.ofMillis(200)).build()) {
            for (Duration ttl : List.of(Duration.ofNanos(1), Duration.ofNanos(999_999), Duration.ofSeconds(Long.MAX_VALUE),
                    Duration.ofMillis(-1), Duration.ofNanos(-1))) {
                assertThatThrownBy(() -> client.leases().acquireAsync("orders@node-a", HOLDER, ttl))
                        .as(ttl.toString()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
            }
        }
    }

    @Test
    @DisplayName("a keeper's TTL too long for a long of milliseconds is an IllegalArgumentException")
    void keeperRefusesOverflowingTtl() {
        try (CoordinationClient client = CoordinationClient.builder().endpoint("127.0.0.1:1").build()) {
            assertThatThrownBy(() -> client.leases().keeper("orders@node-a", HOLDER).ttl(Duration.ofSeconds(Long.MAX_VALUE)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
        }
    }
}
