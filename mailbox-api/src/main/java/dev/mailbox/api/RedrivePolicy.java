package dev.mailbox.api;

import java.util.Objects;

/**
 * When to give up on a message: after it has been delivered {@code maxReceiveCount} times without
 * being acknowledged, the next time it would be delivered it is moved to the dead-letter mailbox
 * instead, with its body bytes and attributes unchanged (a body that could not be decoded is moved as
 * it is).
 *
 * <p>The dead-letter mailbox must be of the same backend as the mailbox that uses the policy; each
 * backend's builder says what else it requires and whether the move is atomic (see
 * {@link MailboxCapabilities#atomicDeadLetter()}). Immutable.
 *
 * @param maxReceiveCount   deliveries allowed before dead-lettering, 1 to 1000
 * @param deadLetterMailbox where dead messages go
 */
public record RedrivePolicy(int maxReceiveCount, Mailbox<?> deadLetterMailbox) {

    /**
     * @param maxReceiveCount   deliveries allowed before dead-lettering, 1 to 1000
     * @param deadLetterMailbox where dead messages go
     * @throws IllegalArgumentException if {@code maxReceiveCount} is out of range
     */
    public RedrivePolicy {
        Objects.requireNonNull(deadLetterMailbox, "deadLetterMailbox");
        if (maxReceiveCount < 1 || maxReceiveCount > Limits.MAX_RECEIVE_COUNT) {
            throw new IllegalArgumentException("maxReceiveCount must be between 1 and "
                    + Limits.MAX_RECEIVE_COUNT + ", was " + maxReceiveCount);
        }
    }

    /**
     * @param maxReceiveCount   deliveries allowed before dead-lettering, 1 to 1000
     * @param deadLetterMailbox where dead messages go
     * @return the policy
     */
    public static RedrivePolicy of(int maxReceiveCount, Mailbox<?> deadLetterMailbox) {
        return new RedrivePolicy(maxReceiveCount, deadLetterMailbox);
    }

    @Override
    public String toString() {
        return "RedrivePolicy[maxReceiveCount=" + maxReceiveCount + ", deadLetterMailbox="
                + deadLetterMailbox.name() + "]";
    }
}
