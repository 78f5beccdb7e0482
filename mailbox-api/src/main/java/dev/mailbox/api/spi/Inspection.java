package dev.mailbox.api.spi;

import dev.mailbox.api.Mailbox;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an operator's tool (the web console) may read of a mailbox without taking part in it: how many messages
 * are queued, in flight and delayed, how old the oldest is, and the messages themselves. A backend's mailbox may
 * implement it; {@link #of} finds it. Optional: a mailbox that does not implement it is shown by its
 * {@link Mailbox#approximateCount()} alone.
 *
 * <p><b>Nothing here changes state.</b> Reading is not receiving: no message becomes invisible, no delivery count
 * moves, no receipt handle is issued, no delay or visibility timeout is applied early. A message whose delay or
 * visibility has ended but that the backend has not moved back to its queue yet is counted and shown as queued,
 * as the next receive would find it.
 *
 * <p>Implementations are thread-safe, like the mailbox.
 */
public interface Inspection {

    /** The most messages one {@link #peek} returns. */
    int MAX_PEEK = 100;

    /**
     * @return the counts now (exact at one moment where {@link Stats#exact()} says so)
     * @throws dev.mailbox.api.MailboxUnavailableException if the backend cannot be reached
     */
    Stats inspect();

    /**
     * @return whether {@link #peek} can show messages; false where the backend has no way to read a message
     *         without receiving it (SQS)
     */
    default boolean canPeek() {
        return true;
    }

    /**
     * Reads messages without receiving them: queued ones first, in the order receives would take them, then
     * delayed and in-flight ones, soonest visible first.
     *
     * @param max 1 to {@link #MAX_PEEK}
     * @return up to {@code max} messages
     * @throws IllegalArgumentException      if {@code max} is out of range
     * @throws UnsupportedOperationException where {@link #canPeek()} is false
     */
    List<Peeked> peek(int max);

    /**
     * @param mailbox a mailbox
     * @return its inspection, or null if its backend offers none (or it is wrapped by something that hides it)
     */
    static @Nullable Inspection of(Mailbox<?> mailbox) {
        return mailbox instanceof Inspection i ? i : null;
    }

    /**
     * @param max a peek's size
     * @return it
     * @throws IllegalArgumentException unless 1 to {@link #MAX_PEEK}
     */
    static int requirePeekSize(int max) {
        if (max < 1 || max > MAX_PEEK) {
            throw new IllegalArgumentException("a peek shows 1 to " + MAX_PEEK + " messages, was " + max);
        }
        return max;
    }

    /**
     * A mailbox's counts.
     *
     * @param queued            messages a receive could take now; on a FIFO mailbox also those waiting behind
     *                          their group's messages in flight
     * @param inFlight          messages received and neither acknowledged nor back in the queue
     * @param delayed           messages waiting for a delay (or a nack's visibility timeout) to end
     * @param oldestAge         how long ago the oldest message was sent, or null when empty or unknown (SQS
     *                          keeps it only as a CloudWatch metric)
     * @param exact             whether the counts are exact at one moment (false on SQS: approximate, as
     *                          GetQueueAttributes says)
     * @param deadLetterMailbox the mailbox its redrive policy moves dead letters to, or null without one
     * @param maxReceiveCount   the deliveries its redrive policy allows, or 0 without one
     */
    record Stats(long queued, long inFlight, long delayed, @Nullable Duration oldestAge, boolean exact,
                 @Nullable String deadLetterMailbox, int maxReceiveCount) {

        /** Checks the fields. */
        public Stats {
            if (queued < 0 || inFlight < 0 || delayed < 0) {
                throw new IllegalArgumentException("counts are 0 or more, were " + queued + "/" + inFlight + "/"
                        + delayed);
            }
        }

        /** @return every message not deleted: queued, in flight and delayed */
        public long total() {
            return queued + inFlight + delayed;
        }
    }

    /** Where a peeked message is. */
    enum State {
        /** A receive could take it now. */
        QUEUED,
        /** Waiting for its delay, or a nack's visibility timeout, to end. */
        DELAYED,
        /** Received, and neither acknowledged nor back in the queue. */
        IN_FLIGHT
    }

    /**
     * A message as read by {@link #peek}.
     *
     * @param id            its id
     * @param body          its stored body (a mailbox that keeps bodies by reference gives their
     *                      {@code toString()} in UTF-8); not copied: do not change it
     * @param attributes    its attributes
     * @param enqueuedAt    when it was sent
     * @param deliveryCount how many times it was delivered
     * @param state         where it is
     */
    record Peeked(String id, byte[] body, Map<String, String> attributes, Instant enqueuedAt, int deliveryCount,
                  State state) {

        /** Checks the fields and copies the attributes. */
        public Peeked {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(body, "body");
            attributes = Map.copyOf(attributes);
            Objects.requireNonNull(enqueuedAt, "enqueuedAt");
            Objects.requireNonNull(state, "state");
        }

        /** Equal when every field is, the body compared by content (a record would compare the array's identity). */
        @Override
        public boolean equals(Object o) {
            return o instanceof Peeked p && id.equals(p.id) && java.util.Arrays.equals(body, p.body)
                    && attributes.equals(p.attributes) && enqueuedAt.equals(p.enqueuedAt)
                    && deliveryCount == p.deliveryCount && state == p.state;
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, java.util.Arrays.hashCode(body), attributes, enqueuedAt, deliveryCount, state);
        }

        /** Shows the body's size, not its content, which may be anything and is not for logs. */
        @Override
        public String toString() {
            return "Peeked[id=" + id + ", body=" + body.length + " bytes, attributes=" + attributes + ", enqueuedAt="
                    + enqueuedAt + ", deliveryCount=" + deliveryCount + ", state=" + state + "]";
        }
    }
}
