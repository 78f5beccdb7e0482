package dev.mailbox.api;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How to send a message: an optional delay, up to ten attributes, an optional deduplication id, an optional
 * message group id and optional system attributes. Immutable; every {@code with} method returns a new instance
 * and validates its argument at once, so an invalid option never reaches a backend.
 *
 * <pre>{@code
 * mailbox.send(order, SendOptions.defaults()
 *         .withDelay(Duration.ofSeconds(30))
 *         .withAttribute("tenant", "acme")
 *         .withAttribute("total", AttributeValue.number("12.50")));
 *
 * fifoMailbox.send(event, SendOptions.defaults().withGroupId("customer-42"));
 * }</pre>
 *
 * <p>Attributes are typed ({@link AttributeValue}: String, Number or Binary, with custom labels); a plain
 * string attribute is one of type {@code String}. {@link #attributes()} shows the plain ones, as text,
 * {@link #typedAttributes()} all of them. Ten at most, counted together, as SQS counts them.
 *
 * <p>What the mailbox does with a group id depends on its kind (see {@link #withGroupId(String)}): a
 * {@link MailboxCapabilities#fifo() FIFO} mailbox requires one and refuses a delay, a standard mailbox
 * takes both.
 */
public final class SendOptions {

    /** Most system attributes on one message. */
    public static final int MAX_SYSTEM_ATTRIBUTES = 10;
    /** Longest system attribute value, in characters. */
    public static final int MAX_SYSTEM_ATTRIBUTE_LENGTH = 1024;
    private static final java.util.regex.Pattern SYSTEM_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9]{1,64}");

    private static final SendOptions DEFAULTS = new SendOptions(Duration.ZERO, Map.of(), Map.of(), null, null);

    private final Duration delay;
    private final Map<String, AttributeValue> attributes;
    private final Map<String, String> plain;
    private final Map<String, String> system;
    private final @Nullable String deduplicationId;
    private final @Nullable String groupId;

    private SendOptions(Duration delay, Map<String, AttributeValue> attributes, Map<String, String> system,
                        @Nullable String deduplicationId, @Nullable String groupId) {
        this.delay = delay;
        this.attributes = attributes;
        this.system = system;
        this.deduplicationId = deduplicationId;
        this.groupId = groupId;
        Map<String, String> p = new LinkedHashMap<>();
        attributes.forEach((k, v) -> {
            if (v.isPlainString()) {
                p.put(k, Objects.requireNonNull(v.stringValue()));
            }
        });
        this.plain = p.isEmpty() ? Map.of() : Collections.unmodifiableMap(p);
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
        return new SendOptions(Limits.requireDelay(delay), attributes, system, deduplicationId, groupId);
    }

    /**
     * @param name  the attribute name (see {@link Limits#requireAttribute(String, String)})
     * @param value a non-empty value
     * @return options with this plain string attribute (of type {@code String}) added or replaced
     * @throws IllegalArgumentException if the name or value is invalid or there would be more than ten
     */
    public SendOptions withAttribute(String name, String value) {
        Limits.requireAttribute(name, value);
        return withChecked(name, AttributeValue.string(value));
    }

    /**
     * @param name  the attribute name (see {@link Limits#requireAttribute(String, String)})
     * @param value a typed value
     * @return options with this attribute added or replaced
     * @throws IllegalArgumentException if the name is invalid or there would be more than ten
     */
    public SendOptions withAttribute(String name, AttributeValue value) {
        Objects.requireNonNull(value, () -> "value of attribute '" + name + "'");
        Limits.requireAttributeName(name);
        return withChecked(name, value);
    }

    private SendOptions withChecked(String name, AttributeValue value) {
        Map<String, AttributeValue> copy = new LinkedHashMap<>(attributes);
        copy.put(name, value);
        return new SendOptions(delay, checkedCount(copy), system, deduplicationId, groupId);
    }

    /**
     * @param attributes plain string attributes to add (or replace) on top of the current ones
     * @return options with these attributes
     * @throws IllegalArgumentException if any name or value is invalid or there would be more than ten
     */
    public SendOptions withAttributes(Map<String, String> attributes) {
        Objects.requireNonNull(attributes, "attributes");
        Map<String, AttributeValue> copy = new LinkedHashMap<>(this.attributes);
        attributes.forEach((k, v) -> {
            Limits.requireAttribute(k, v);
            copy.put(k, AttributeValue.string(v));
        });
        return new SendOptions(delay, checkedCount(copy), system, deduplicationId, groupId);
    }

    /**
     * @param attributes typed attributes to add (or replace) on top of the current ones, such as a received
     *                   message's {@link Message#typedAttributes()}
     * @return options with these attributes
     * @throws IllegalArgumentException if any name is invalid or there would be more than ten
     */
    public SendOptions withTypedAttributes(Map<String, AttributeValue> attributes) {
        Objects.requireNonNull(attributes, "attributes");
        Map<String, AttributeValue> copy = new LinkedHashMap<>(this.attributes);
        attributes.forEach((k, v) -> {
            Limits.requireAttributeName(k);
            copy.put(k, Objects.requireNonNull(v, () -> "value of attribute '" + k + "'"));
        });
        return new SendOptions(delay, checkedCount(copy), system, deduplicationId, groupId);
    }

    /**
     * A system attribute: data that a service layered over the mailbox keeps with the message beside the
     * application's attributes, such as the SQS endpoint's {@code SenderId} or {@code AWSTraceHeader}. System
     * attributes have names of their own (they never collide with an attribute of the same name), do not count
     * toward the ten attributes or the message size (as SQS's system attributes do not), and come back as
     * {@link Message#systemAttributes()}. The in-memory, Redis and node backends keep them; on SQS a message's
     * system attributes are SQS's own, so {@code SqsMailbox} sends only {@code AWSTraceHeader} (as SQS's system
     * attribute) and ignores the others.
     *
     * @param name  1 to 64 letters and digits
     * @param value a non-empty value of at most {@value #MAX_SYSTEM_ATTRIBUTE_LENGTH} characters SQS allows
     * @return options with this system attribute added or replaced
     * @throws IllegalArgumentException if the name or value breaks those rules, or there would be more than
     *                                  {@value #MAX_SYSTEM_ATTRIBUTES}
     */
    public SendOptions withSystemAttribute(String name, String value) {
        Objects.requireNonNull(name, "system attribute name");
        Objects.requireNonNull(value, () -> "value of system attribute '" + name + "'");
        if (!SYSTEM_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a system attribute name is 1 to 64 letters and digits, was '"
                    + (name.length() > 100 ? name.substring(0, 100) + "..." : name) + "'");
        }
        if (value.isEmpty() || value.length() > MAX_SYSTEM_ATTRIBUTE_LENGTH) {
            throw new IllegalArgumentException("the value of system attribute '" + name + "' must be 1 to "
                    + MAX_SYSTEM_ATTRIBUTE_LENGTH + " characters, was " + value.length());
        }
        Limits.requireSqsText(value, "value of system attribute '" + name + "'");
        Map<String, String> copy = new LinkedHashMap<>(system);
        copy.put(name, value);
        if (copy.size() > MAX_SYSTEM_ATTRIBUTES) {
            throw new IllegalArgumentException("a message may have at most " + MAX_SYSTEM_ATTRIBUTES
                    + " system attributes, got " + copy.size());
        }
        return new SendOptions(delay, attributes, Collections.unmodifiableMap(copy), deduplicationId, groupId);
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
        return new SendOptions(delay, attributes, system, Limits.requireDeduplicationId(id), groupId);
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
        return new SendOptions(delay, attributes, system, deduplicationId, Limits.requireGroupId(groupId));
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

    /** @return the plain string attributes (those of type {@code String}), unmodifiable, in insertion order */
    public Map<String, String> attributes() {
        return plain;
    }

    /** @return every attribute with its type (plain strings as type {@code String}), unmodifiable, in insertion order */
    public Map<String, AttributeValue> typedAttributes() {
        return attributes;
    }

    /** @return the system attributes, unmodifiable, empty if none (see {@link #withSystemAttribute}) */
    public Map<String, String> systemAttributes() {
        return system;
    }

    private static Map<String, AttributeValue> checkedCount(Map<String, AttributeValue> attributes) {
        if (attributes.size() > Limits.MAX_ATTRIBUTES) {
            throw new IllegalArgumentException("a message may have at most " + Limits.MAX_ATTRIBUTES
                    + " attributes, got " + attributes.size());
        }
        return Collections.unmodifiableMap(attributes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SendOptions other && delay.equals(other.delay)
                && attributes.equals(other.attributes) && system.equals(other.system)
                && Objects.equals(deduplicationId, other.deduplicationId)
                && Objects.equals(groupId, other.groupId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(delay, attributes, system, deduplicationId, groupId);
    }

    @Override
    public String toString() {
        return "SendOptions[delay=" + delay + ", attributes=" + attributes.keySet()
                + (system.isEmpty() ? "" : ", systemAttributes=" + system.keySet())
                + (deduplicationId == null ? "" : ", deduplicationId=" + deduplicationId)
                + (groupId == null ? "" : ", groupId=" + groupId) + "]";
    }
}
