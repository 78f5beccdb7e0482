package dev.mailbox.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * One delivery of a message, as returned by {@link Mailbox#receive(ReceiveOptions)}.
 *
 * <h2>The stale-handle rule (every backend)</h2>
 * Each delivery has its own {@link #receiptHandle()}. {@link #acknowledge()}, {@link #nack(Duration)}
 * and {@link #extendVisibility(Duration)} succeed only while that handle is current: the message is
 * in flight under this delivery and its visibility timeout has not ended. Otherwise they throw
 * {@link ReceiptHandleExpiredException} and change nothing. A handle becomes stale when:
 * <ul>
 *   <li>the visibility timeout ends, at that instant, whether or not the message has been delivered
 *       again yet;</li>
 *   <li>the message is nacked, or delivered again (to anyone);</li>
 *   <li>the message is deleted: acknowledged, purged or dead-lettered.</li>
 * </ul>
 * The single exception is declared by {@link MailboxCapabilities#detectsStaleAcknowledge()}: a backend
 * that cannot tell (SQS) lets a stale {@link #acknowledge()} return normally, but it still never
 * deletes a message that was delivered again.
 *
 * <p>Message objects are immutable snapshots of a delivery and safe to share between threads; the
 * state-changing methods are as thread-safe as the mailbox.
 *
 * @param <T> the body type
 */
public interface Message<T> {

    /** @return the message's id, the same for every delivery of the message */
    String id();

    /**
     * @return the decoded body
     * @throws SerializationException if the stored bytes cannot be decoded; the message itself is not
     *                                lost: it follows the normal redelivery rules and, with a
     *                                {@link RedrivePolicy}, ends in the dead-letter mailbox
     */
    T body();

    /** @return this delivery's receipt handle, unique per delivery */
    String receiptHandle();

    /** @return how many times the message has been delivered, counting this delivery (1 on the first) */
    int deliveryCount();

    /** @return when the message was sent (the backend's clock) */
    Instant enqueuedAt();

    /** @return the message's attributes, unmodifiable, empty if it has none */
    Map<String, String> attributes();

    /**
     * Deletes the message.
     *
     * @throws ReceiptHandleExpiredException if this delivery's handle is stale (see the class comment)
     * @throws MailboxUnavailableException   if the backend cannot be reached or the mailbox is closed
     */
    void acknowledge();

    /**
     * Returns the message to the mailbox at once, to be delivered again (with its delivery count
     * kept). Same as {@code nack(Duration.ZERO)}.
     *
     * @throws ReceiptHandleExpiredException if this delivery's handle is stale
     */
    default void nack() {
        nack(Duration.ZERO);
    }

    /**
     * Gives the message up: it becomes visible again after {@code visibilityTimeout} (at once for
     * zero), and this handle is stale from now on.
     *
     * @param visibilityTimeout 0 to 12 hours
     * @throws IllegalArgumentException      if out of range
     * @throws ReceiptHandleExpiredException if this delivery's handle is stale
     */
    void nack(Duration visibilityTimeout);

    /**
     * Keeps the message invisible for {@code timeout} from now (not from the receive), for work that
     * takes longer than the visibility timeout. The handle stays current.
     *
     * @param timeout 0 to 12 hours from now; zero makes the message visible at once (and the handle
     *                stale)
     * @throws IllegalArgumentException      if out of range
     * @throws ReceiptHandleExpiredException if this delivery's handle is stale
     */
    void extendVisibility(Duration timeout);
}
