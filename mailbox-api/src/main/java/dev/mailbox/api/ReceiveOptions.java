package dev.mailbox.api;

import java.time.Duration;
import java.util.Objects;

/**
 * How to receive: how many messages at most (1 to 10), for how long they stay invisible to other
 * consumers (0 to 12 hours) and how long to wait for the first one (0 to 15 minutes). Immutable;
 * every {@code with} method returns a new instance and validates its argument at once.
 *
 * <p>The defaults are 1 message, a 30 second visibility timeout and no wait.
 *
 * <pre>{@code
 * List<Message<Order>> batch = mailbox.receive(ReceiveOptions.defaults()
 *         .withMaxMessages(10)
 *         .withWaitTime(Duration.ofSeconds(20)));
 * }</pre>
 */
public final class ReceiveOptions {

    /** The default visibility timeout: 30 seconds. */
    public static final Duration DEFAULT_VISIBILITY_TIMEOUT = Duration.ofSeconds(30);

    private static final ReceiveOptions DEFAULTS =
            new ReceiveOptions(1, DEFAULT_VISIBILITY_TIMEOUT, Duration.ZERO);

    private final int maxMessages;
    private final Duration visibilityTimeout;
    private final Duration waitTime;

    private ReceiveOptions(int maxMessages, Duration visibilityTimeout, Duration waitTime) {
        this.maxMessages = maxMessages;
        this.visibilityTimeout = visibilityTimeout;
        this.waitTime = waitTime;
    }

    /** @return 1 message, 30 second visibility timeout, no wait */
    public static ReceiveOptions defaults() {
        return DEFAULTS;
    }

    /**
     * @param maxMessages the most messages to return, 1 to 10
     * @return options with this maximum
     * @throws IllegalArgumentException if out of range
     */
    public ReceiveOptions withMaxMessages(int maxMessages) {
        return new ReceiveOptions(Limits.requireBatchSize(maxMessages, "maxMessages"),
                visibilityTimeout, waitTime);
    }

    /**
     * @param visibilityTimeout how long received messages stay invisible, 0 to 12 hours; a message
     *                          not acknowledged within it is delivered again
     * @return options with this visibility timeout
     * @throws IllegalArgumentException if out of range
     */
    public ReceiveOptions withVisibilityTimeout(Duration visibilityTimeout) {
        return new ReceiveOptions(maxMessages,
                Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout"), waitTime);
    }

    /**
     * @param waitTime how long to wait for a message when none is available, 0 to 15 minutes; zero
     *                 returns at once
     * @return options with this wait time
     * @throws IllegalArgumentException if out of range
     */
    public ReceiveOptions withWaitTime(Duration waitTime) {
        return new ReceiveOptions(maxMessages, visibilityTimeout, Limits.requireWaitTime(waitTime));
    }

    /** @return the most messages one receive returns */
    public int maxMessages() {
        return maxMessages;
    }

    /** @return how long received messages stay invisible */
    public Duration visibilityTimeout() {
        return visibilityTimeout;
    }

    /** @return how long a receive waits for a first message */
    public Duration waitTime() {
        return waitTime;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceiveOptions other && maxMessages == other.maxMessages
                && visibilityTimeout.equals(other.visibilityTimeout) && waitTime.equals(other.waitTime);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxMessages, visibilityTimeout, waitTime);
    }

    @Override
    public String toString() {
        return "ReceiveOptions[maxMessages=" + maxMessages + ", visibilityTimeout=" + visibilityTimeout
                + ", waitTime=" + waitTime + "]";
    }
}
