package dev.mailbox.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One delivery of a message, as returned by {@link Mailbox#receive(ReceiveOptions)}.
 *
 * <h2>The stale-handle rule (every backend)</h2>
 * Each delivery has its own {@link #receiptHandle()}. {@link #nack(Duration)} and
 * {@link #extendVisibility(Duration)} succeed only while that handle is current: the message is in flight
 * under this delivery and its visibility timeout has not ended. {@link #acknowledge()} succeeds then too and,
 * where {@link MailboxCapabilities#lateAcknowledge()} (as on SQS), also after the visibility timeout ended, as
 * long as the message has not been delivered again, nacked or deleted since: the handle of the most recent
 * delivery still deletes it, so a consumer slower than its visibility timeout does not cause a duplicate
 * when nobody else has taken the message yet. Otherwise each of them throws
 * {@link ReceiptHandleExpiredException} and changes nothing. A handle becomes stale:
 * <ul>
 *   <li>for nack and extend, when the visibility timeout ends (at that instant, whether or not the message
 *       has been delivered again yet, and also when it is ended early by {@code extendVisibility(ZERO)});
 *       for acknowledge too where the backend does not declare {@code lateAcknowledge};</li>
 *   <li>for all three, when the message is nacked, or delivered again (to anyone): a handle superseded by a
 *       later delivery is refused at once, even if no reaper has run yet;</li>
 *   <li>for all three, when the message is deleted: acknowledged, purged or dead-lettered.</li>
 * </ul>
 * The single exception is declared by {@link MailboxCapabilities#detectsStaleAcknowledge()}: a backend
 * that cannot tell (SQS) lets a stale {@link #acknowledge()} return normally, but it still never
 * deletes a message that was delivered again.
 *
 * <h2>Groups and sequence numbers</h2>
 * {@link #groupId()} is the group the message was sent with ({@link SendOptions#withGroupId}); on a
 * {@link MailboxCapabilities#fifo() FIFO} mailbox {@link #sequenceNumber()} orders the messages of a group.
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

    /**
     * @return the message's plain string attributes (those of type {@code String}), unmodifiable, empty if it has
     *         none; {@link #typedAttributes()} has every attribute
     */
    Map<String, String> attributes();

    /**
     * Every attribute of the message with its type ({@link AttributeValue}: String, Number, Binary, with custom
     * labels), as it was sent. The default, for implementations that keep only strings, shows
     * {@link #attributes()} as values of type {@code String}.
     *
     * @return the attributes, unmodifiable, empty if it has none
     */
    default Map<String, AttributeValue> typedAttributes() {
        Map<String, String> plain = attributes();
        if (plain.isEmpty()) {
            return Map.of();
        }
        Map<String, AttributeValue> typed = new java.util.LinkedHashMap<>();
        plain.forEach((k, v) -> typed.put(k, AttributeValue.string(v)));
        return java.util.Collections.unmodifiableMap(typed);
    }

    /**
     * The system attributes the message was sent with ({@link SendOptions#withSystemAttribute}), apart from its
     * attributes. The default returns none, for implementations that keep none.
     *
     * @return the system attributes, unmodifiable, empty if none
     */
    default Map<String, String> systemAttributes() {
        return Map.of();
    }

    /**
     * The message group the message was sent with ({@link SendOptions#withGroupId}). Always set on a
     * {@link MailboxCapabilities#fifo() FIFO} mailbox; on a standard mailbox set where the send gave one and
     * the mailbox declares {@link MailboxCapabilities#fairness()}, otherwise null. A dead-lettered message
     * keeps its group id.
     *
     * <p>The default returns null, for implementations that keep no groups.
     *
     * @return the group id, or null
     */
    default @Nullable String groupId() {
        return null;
    }

    /**
     * The message's sequence number in its mailbox, on a {@link MailboxCapabilities#fifo() FIFO} mailbox
     * (SQS's {@code SequenceNumber}): a string of decimal digits, at most 128 bits as a number, fixed when the
     * message is stored and the same for every delivery. Within a group a later send has a larger number, so
     * two messages of one group compare by {@code new BigInteger(a).compareTo(new BigInteger(b))}; the numbers
     * are not consecutive, and across groups they promise nothing (SQS numbers each group on its own). The
     * in-memory and Redis backends number the whole mailbox with 20 digits, zero-padded, so there their text
     * order is their numeric order. A message moved to a dead-letter mailbox gets a number there.
     *
     * <p>On a standard mailbox it is null on every backend, as on SQS, even where the backend counts its
     * messages: code that relied on it would not run on SQS. The default returns null.
     *
     * @return the sequence number on a FIFO mailbox, null on a standard one
     */
    default @Nullable String sequenceNumber() {
        return null;
    }

    /**
     * Deletes the message: while this delivery is in flight, or, where
     * {@link MailboxCapabilities#lateAcknowledge()}, after its visibility timeout ended if the message has
     * not been delivered again, nacked or deleted since (see the class comment).
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
     * zero), and this handle is stale from now on, for acknowledge too. On a
     * {@link MailboxCapabilities#fifo() FIFO} mailbox it goes back to the head of its group: the group's
     * later messages wait for it, for {@code visibilityTimeout} too.
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
     * @param timeout 0 to 12 hours from now; zero ends the visibility timeout at once: the message is
     *                visible again and the handle stale for nack and extend, as when the timeout lapses
     *                (so where {@link MailboxCapabilities#lateAcknowledge()} it still acknowledges until the
     *                message is delivered again)
     * @throws IllegalArgumentException      if out of range
     * @throws ReceiptHandleExpiredException if this delivery's handle is stale
     */
    void extendVisibility(Duration timeout);
}
