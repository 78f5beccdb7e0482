package dev.mailbox.coordination;

import java.time.Duration;
import java.util.Objects;

/**
 * How leases behave in one namespace: how long they last without a renewal, how often holders should
 * renew, and how much longer the coordinator waits before it expires one. The ranges are
 * {@link CoordinationLimits#policyProblem}'s.
 *
 * @param ttl               lease lifetime without a renewal, {@link CoordinationLimits#MIN_TTL} to
 *                          {@link CoordinationLimits#MAX_TTL}
 * @param heartbeatInterval how often holders renew; at most half the TTL
 * @param grace             extra time after the TTL before expiry, 0 up to the TTL
 */
public record LeasePolicy(Duration ttl, Duration heartbeatInterval, Duration grace) {

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
        CoordinationLimits.require(CoordinationLimits.policyProblem(ttl, heartbeatInterval, grace));
    }

    /**
     * @param ttlMillis       lease lifetime
     * @param heartbeatMillis renewal interval
     * @param graceMillis     grace after the TTL
     * @return the policy
     * @throws IllegalArgumentException naming the figure out of range
     */
    public static LeasePolicy ofMillis(long ttlMillis, long heartbeatMillis, long graceMillis) {
        return new LeasePolicy(Duration.ofMillis(ttlMillis), Duration.ofMillis(heartbeatMillis),
                Duration.ofMillis(graceMillis));
    }
}
