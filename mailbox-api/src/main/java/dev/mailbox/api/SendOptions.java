package dev.mailbox.api;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How to send a message: an optional delay, up to ten string attributes, an optional deduplication
 * id and an optional message group id. Immutable; every {@code with} method returns a new instance and
 * validates its argument at once, so an invalid option never reaches a backend.
 *
 * <pre>{@code
 * mailbox.send(order, SendOptions.defaults()
 *         .withDelay(Duration.ofSeconds(30))
 *         .withAttribute("tenant", "acme"));
 *
 * fifoMailbox.send(event, SendOptions.defaults().withGroupId("customer-42"));
 * }</pre>
 *
 * <p>What the mailbox does with a group id depends on its kind (see {@link #withGroupId(String)}): a
 * {@link MailboxCapabilities#fifo() FIFO} mailbox requires one and refuses a delay, a standard mailbox
 * takes both.
 */
public final class SendOptions {

    private static final SendOptions DEFAULTS = new SendOptions(Duration.ZERO, Map.of(), null, null);

    private final Duration delay;
    private final Map<String, String> attributes;
    private final @Nullable String deduplicationId;
    private final @Nullable String groupId;

    private SendOptions(Duration delay, Map<String, String> attributes, @Nullable String deduplicationId,
                        @Nullable String groupId) {
        this.delay = delay;
        this.attributes = attributes;
        this.deduplicationId = deduplicationId;
        this.groupId = groupId;
    }

    /** @return no delay, no attributes, no deduplication id and no group id */
    public static SendOptions defaults() {
        return DEFAULTS;
    }

    /**
     * A per-message delay. A {@link MailboxCapabilities#fifo() FIFO} mailbox refuses a send with a delay
     * other than zero ({@link IllegalArgumentException}), as SQS's FIFO queues do: a delayed message would
     * hold back its whole group.
     *
     * @param delay how long the message stays invisible after the send, 0 to 15 minutes
     * @return options with this delay
     * @throws IllegalArgumentException if the delay is out of range
     */
    public SendOptions withDelay(Duration delay) {
        return new SendOptions(Limits.requireDelay(delay), attributes, deduplicationId, groupId);
    }

    /**
     * @param name  the attribute name (see {@link Limits#requireAttribute(String, String)})
     * @param value a non-empty value
     * @return options with this attribute added or replaced
     * @throws IllegalArgumentException if the name or value is invalid or there would be more than ten
     */
    public SendOptions withAttribute(String name, String value) {
        Limits.requireAttribute(name, value);
        Map<String, String> copy = new LinkedHashMap<>(attributes);
        copy.put(name, value);
        return new SendOptions(delay, checkedCount(copy), deduplicationId, groupId);
    }

    /**
     * @param attributes attributes to add (or replace) on top of the current ones
     * @return options with these attributes
     * @throws IllegalArgumentException if any name or value is invalid or there would be more than ten
     */
    public SendOptions withAttributes(Map<String, String> attributes) {
        Objects.requireNonNull(attributes, "attributes");
        Map<String, String> copy = new LinkedHashMap<>(this.attributes);
        attributes.forEach((k, v) -> {
            Limits.requireAttribute(k, v);
            copy.put(k, v);
        });
        return new SendOptions(delay, checkedCount(copy), deduplicationId, groupId);
    }

    /**
     * Makes the send idempotent: a send with an id this mailbox has seen in the last
     * {@link Limits#DEDUPLICATION_WINDOW} stores nothing and returns the message id of the first send
     * with it, so a send retried after its reply was lost is stored once. The window counts from the first
     * send and is neither extended by duplicates nor ended by the message's deletion. In a batch, message
     * {@code i} (from 0) is deduplicated under {@code id + "/" + i}. Whether the ids outlive the mailbox
     * object (another process, a restart) is {@link MailboxCapabilities#durableDeduplication()}.
     *
     * <p>On a {@link MailboxCapabilities#fifo() FIFO} mailbox the id is remembered in the mailbox's
     * {@link FifoOptions#deduplicationScope() deduplication scope} (the whole mailbox, or the message's group),
     * and a FIFO mailbox with {@link FifoOptions#withContentBasedDeduplication content-based deduplication}
     * uses {@link FifoOptions#contentDeduplicationId(byte[])} of the encoded body for a send without an id.
     *
     * @param id 1 to {@link Limits#MAX_DEDUPLICATION_ID_LENGTH} characters from A-Z, a-z, 0-9 and
     *           {@code !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~} (SQS's rule)
     * @return options with this id
     * @throws IllegalArgumentException if the id breaks that rule
     */
    public SendOptions withDeduplicationId(String id) {
        return new SendOptions(delay, attributes, Limits.requireDeduplicationId(id), groupId);
    }

    /**
     * The message group the message belongs to (SQS's {@code MessageGroupId}); a batch's messages all go to
     * this group, in the batch's order. What a group means depends on the mailbox:
     * <ul>
     *   <li>On a {@link MailboxCapabilities#fifo() FIFO} mailbox every send needs one (a send without one is
     *       refused with {@link IllegalArgumentException}). The group's messages are delivered in send order,
     *       and none is delivered while an earlier one of its group is in flight; groups do not wait for each
     *       other. See {@link MailboxCapabilities#fifo()}.</li>
     *   <li>On a standard mailbox it names a tenant, for {@link MailboxCapabilities#fairness() fairness}:
     *       while one tenant holds a disproportionate share of the messages in flight, receives prefer the
     *       other tenants' messages. It promises no order. A message without a group id is a tenant of its
     *       own.</li>
     * </ul>
     * The id comes back as {@link Message#groupId()} on a mailbox that declares {@link
     * MailboxCapabilities#fifo()} or {@link MailboxCapabilities#fairness()}; a standard mailbox that declares
     * neither accepts it and ignores it.
     *
     * @param groupId 1 to {@link Limits#MAX_GROUP_ID_LENGTH} characters from A-Z, a-z, 0-9 and
     *                {@code !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~} (SQS's rule)
     * @return options with this group id
     * @throws IllegalArgumentException if the id breaks that rule
     */
    public SendOptions withGroupId(String groupId) {
        return new SendOptions(delay, attributes, deduplicationId, Limits.requireGroupId(groupId));
    }

    /** @return the deduplication id, or null when sends with these options are not deduplicated by id */
    public @Nullable String deduplicationId() {
        return deduplicationId;
    }

    /** @return the message group id, or null when none was given */
    public @Nullable String groupId() {
        return groupId;
    }

    /** @return the delay, zero when none */
    public Duration delay() {
        return delay;
    }

    /** @return the attributes, unmodifiable, in insertion order */
    public Map<String, String> attributes() {
        return attributes;
    }

    private static Map<String, String> checkedCount(Map<String, String> attributes) {
        if (attributes.size() > Limits.MAX_ATTRIBUTES) {
            throw new IllegalArgumentException("a message may have at most " + Limits.MAX_ATTRIBUTES
                    + " attributes, got " + attributes.size());
        }
        return Collections.unmodifiableMap(attributes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SendOptions other && delay.equals(other.delay)
                && attributes.equals(other.attributes) && Objects.equals(deduplicationId, other.deduplicationId)
                && Objects.equals(groupId, other.groupId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(delay, attributes, deduplicationId, groupId);
    }

    @Override
    public String toString() {
        return "SendOptions[delay=" + delay + ", attributes=" + attributes
                + (deduplicationId == null ? "" : ", deduplicationId=" + deduplicationId)
                + (groupId == null ? "" : ", groupId=" + groupId) + "]";
    }
}
