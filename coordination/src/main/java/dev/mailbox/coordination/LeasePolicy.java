package dev.mailbox.coordination;

import java.time.Duration;
import java.util.Objects;

/**
 * How leases behave in one namespace: how long they last without a renewal, how often holders should
 * renew, and how much longer the coordinator waits before it expires one.
 *
 * @param ttl               lease lifetime without a renewal, 1 s to 10 min
 * @param heartbeatInterval how often holders renew; shorter than the TTL
 * @param grace             extra time after the TTL before expiry, 0 up to the TTL
 */
public record LeasePolicy(Duration ttl, Duration heartbeatInterval, Duration grace) {

    /** Shortest TTL a lease may have. */
    public static final Duration MIN_TTL = Duration.ofSeconds(1);
    /** Longest TTL a lease may have. */
    public static final Duration MAX_TTL = Duration.ofMinutes(10);
    /** 10 s TTL, 3 s heartbeats, 2 s grace. */
    public static final LeasePolicy DEFAULT = new LeasePolicy(Duration.ofSeconds(10), Duration.ofSeconds(3),
            Duration.ofSeconds(2));

    /**
     * Checks the durations.
     *
     * @throws IllegalArgumentException naming the one out of range
     */
    public LeasePolicy {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        Objects.requireNonNull(grace, "grace");
        requireTtl(ttl);
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero() || heartbeatInterval.compareTo(ttl) >= 0) {
            throw new IllegalArgumentException("heartbeatInterval must be positive and shorter than the ttl " + ttl
                    + ", was " + heartbeatInterval);
        }
        if (grace.isNegative() || grace.compareTo(ttl) > 0) {
            throw new IllegalArgumentException("grace must be between 0 and the ttl " + ttl + ", was " + grace);
        }
    }

    /**
     * @param ttl a lease TTL
     * @return the TTL
     * @throws IllegalArgumentException if it is outside {@link #MIN_TTL}..{@link #MAX_TTL}
     */
    public static Duration requireTtl(Duration ttl) {
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("ttl must be between " + MIN_TTL + " and " + MAX_TTL + ", was " + ttl);
        }
        return ttl;
    }
}
