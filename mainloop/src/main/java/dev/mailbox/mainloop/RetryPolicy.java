package dev.mailbox.mainloop;

import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Which failures a {@link MainLoop} tries again, how long it waits before each new attempt, and after
 * how many deliveries it gives a request up. Immutable.
 *
 * <p>A retried request is nacked with the backoff for its delivery count, so that it comes back after
 * that long (to this runner or any other). A request that fails for a reason the policy does not retry
 * is answered with its error at once. When a retryable failure happens on the last allowed delivery,
 * or a request arrives after it (a handler that keeps killing its runner, say), the request is
 * dead-lettered: answered with its error and, if the loop has a dead-letter mailbox, kept there.
 *
 * <p>Defaults: retry {@link MailboxException}s that say they are retryable, 5 deliveries at most, backoff
 * 1 s doubling up to 5 min.
 */
public final class RetryPolicy {

    private static final RetryPolicy DEFAULTS = new RetryPolicy(
            e -> e instanceof MailboxException m && m.isRetryable(), 5, Duration.ofSeconds(1), 2.0,
            Duration.ofMinutes(5));

    private final Predicate<? super Throwable> retryable;
    private final int maxDeliveries;
    private final Duration initialBackoff;
    private final double multiplier;
    private final Duration maxBackoff;

    private RetryPolicy(Predicate<? super Throwable> retryable, int maxDeliveries, Duration initialBackoff,
                        double multiplier, Duration maxBackoff) {
        this.retryable = retryable;
        this.maxDeliveries = maxDeliveries;
        this.initialBackoff = initialBackoff;
        this.multiplier = multiplier;
        this.maxBackoff = maxBackoff;
    }

    /**
     * @return the default policy
     */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /**
     * A policy that never retries a handler failure (but still retries a result it could not send).
     *
     * @return the policy
     */
    public static RetryPolicy never() {
        return DEFAULTS.retryOn(e -> false);
    }

    /**
     * @param retryable which handler exceptions are worth another attempt
     * @return a copy that retries those
     */
    public RetryPolicy retryOn(Predicate<? super Throwable> retryable) {
        return new RetryPolicy(Objects.requireNonNull(retryable, "retryable"), maxDeliveries, initialBackoff,
                multiplier, maxBackoff);
    }

    /**
     * @param maxDeliveries how many deliveries a request gets before it is dead-lettered, 1 to
     *                      {@value Limits#MAX_RECEIVE_COUNT}
     * @return a copy with that limit
     */
    public RetryPolicy withMaxDeliveries(int maxDeliveries) {
        if (maxDeliveries < 1 || maxDeliveries > Limits.MAX_RECEIVE_COUNT) {
            throw new IllegalArgumentException("maxDeliveries must be between 1 and " + Limits.MAX_RECEIVE_COUNT
                    + ", was " + maxDeliveries);
        }
        return new RetryPolicy(retryable, maxDeliveries, initialBackoff, multiplier, maxBackoff);
    }

    /**
     * @param initial    the wait after the first failed delivery (0 to the maximum)
     * @param multiplier how much each further failure multiplies it (1 or more)
     * @param max        the longest wait, at most the longest visibility timeout a mailbox accepts
     * @return a copy with that backoff
     */
    public RetryPolicy withBackoff(Duration initial, double multiplier, Duration max) {
        Limits.requireVisibilityTimeout(max, "max backoff");
        Limits.requireVisibilityTimeout(initial, "initial backoff");
        if (initial.compareTo(max) > 0) {
            throw new IllegalArgumentException("initial backoff " + initial + " is longer than the max " + max);
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("backoff multiplier must be a finite number of 1 or more, was "
                    + multiplier);
        }
        return new RetryPolicy(retryable, maxDeliveries, initial, multiplier, max);
    }

    /**
     * @param failure what the handler threw
     * @return whether it is worth another attempt
     */
    public boolean isRetryable(Throwable failure) {
        return retryable.test(failure);
    }

    /**
     * @return how many deliveries a request gets
     */
    public int maxDeliveries() {
        return maxDeliveries;
    }

    /**
     * @param deliveryCount the delivery that failed (1 for the first)
     * @return how long to wait before the next attempt
     */
    public Duration backoff(int deliveryCount) {
        // in nanoseconds: a sub-millisecond initial backoff would truncate to 0 in milliseconds and stay 0
        double nanos = initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, deliveryCount - 1));
        return nanos >= maxBackoff.toNanos() ? maxBackoff : Duration.ofNanos((long) nanos);
    }

    /**
     * @return the longest backoff
     */
    public Duration maxBackoff() {
        return maxBackoff;
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxDeliveries=" + maxDeliveries + ", backoff=" + initialBackoff + " x" + multiplier
                + " up to " + maxBackoff + "]";
    }
}
