package dev.mailbox.redis;

import dev.mailbox.api.spi.Delivery;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One delivery of a Redis message. Its receipt handle is {@code <message id>:<delivery token>}, for
 * example {@code 00000000002a:5f3c9e01d2a4b7c8-1}: the id is the message's (12 or more hex digits) and
 * the token is the one the receive script stored in the message's meta for this delivery (the
 * receive's random nonce, a dash, and the message's place in the receive). Those two are all a script
 * needs to act on the delivery, so any mailbox object of the same queue, in any process, can use the
 * handle while it is current; nothing of the delivery lives in this object's memory. The format has
 * not changed since the first release, so handles issued by earlier versions are accepted as they are.
 * A dead letter in a FIFO mailbox keeps its first id ({@link #id()}), while its handle names the key it
 * has in the dead-letter mailbox.
 *
 * <p>A message received through a {@link RedisMailbox#fenced fenced} view carries the view's epoch,
 * and its acknowledge, nack and extend are fenced under it.
 */
final class RedisMessage<T> extends Delivery<T> {

    private static final Pattern HANDLE = Pattern.compile("([0-9a-f]{12,16}):([0-9a-f]{1,16}-[0-9]{1,9})");

    private final RedisMailbox<T> mailbox;
    final String id;
    final String token;
    /** The fencing epoch of the view it was received through; 0 when received from the mailbox itself. */
    final long epoch;

    /**
     * @param id             the message's key in the mailbox, which the handle names
     * @param shownId        the id {@link #id()} reports: {@code id}, or the id a FIFO dead letter had in
     *                       its source
     * @param groupId        its group (FIFO) or tenant (fair standard mailbox), or null
     * @param sequenceNumber its sequence number on a FIFO mailbox, or null
     */
    RedisMessage(RedisMailbox<T> mailbox, String id, String shownId, String token, long epoch, int deliveryCount,
                 long enqueuedAtMillis, Map<String, String> attributes, Object body, @Nullable String groupId,
                 @Nullable String sequenceNumber) {
        super(mailbox.name(), shownId, handle(id, token), deliveryCount, Instant.ofEpochMilli(enqueuedAtMillis),
                attributes, body, groupId, sequenceNumber);
        this.mailbox = mailbox;
        this.id = id;
        this.token = token;
        this.epoch = epoch;
    }

    static String handle(String id, String token) {
        return id + ":" + token;
    }

    /**
     * @param handle a receipt handle
     * @return its message id and delivery token, or null if it is not a handle this backend issues
     */
    static String @Nullable [] parse(String handle) {
        Matcher m = HANDLE.matcher(handle);
        return m.matches() ? new String[] {m.group(1), m.group(2)} : null;
    }

    @Override
    public void acknowledge() {
        mailbox.acknowledge(id, token, receiptHandle(), epoch);
    }

    @Override
    public void nack(Duration visibilityTimeout) {
        mailbox.changeVisibility(id, token, receiptHandle(), epoch, visibilityTimeout, true);
    }

    @Override
    public void extendVisibility(Duration timeout) {
        mailbox.changeVisibility(id, token, receiptHandle(), epoch, timeout, false);
    }

    boolean belongsTo(RedisMailbox<?> m) {
        return mailbox == m;
    }
}
