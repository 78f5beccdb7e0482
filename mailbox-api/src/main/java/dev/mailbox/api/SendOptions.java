package dev.mailbox.api;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How to send a message: an optional delay, up to ten string attributes and an optional deduplication
 * id. Immutable; every
 * {@code with} method returns a new instance and validates its argument at once, so an invalid
 * option never reaches a backend.
 *
 * <pre>{@code
 * mailbox.send(order, SendOptions.defaults()
 *         .withDelay(Duration.ofSeconds(30))
 *         .withAttribute("tenant", "acme"));
 * }</pre>
 */
public final class SendOptions {

    private static final SendOptions DEFAULTS = new SendOptions(Duration.ZERO, Map.of(), null);

    private final Duration delay;
    private final Map<String, String> attributes;
    private final @org.jspecify.annotations.Nullable String deduplicationId;

    private SendOptions(Duration delay, Map<String, String> attributes,
                        @org.jspecify.annotations.Nullable String deduplicationId) {
        this.delay = delay;
        this.attributes = attributes;
        this.deduplicationId = deduplicationId;
    }

    /** @return no delay and no attributes */
    public static SendOptions defaults() {
        return DEFAULTS;
    }

    /**
     * @param delay how long the message stays invisible after the send, 0 to 15 minutes
     * @return options with this delay
     * @throws IllegalArgumentException if the delay is out of range
     */
    public SendOptions withDelay(Duration delay) {
        return new SendOptions(Limits.requireDelay(delay), attributes, deduplicationId);
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
        return new SendOptions(delay, checkedCount(copy), deduplicationId);
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
        return new SendOptions(delay, checkedCount(copy), deduplicationId);
    }

    /**
     * Makes the send idempotent: a send with an id this mailbox has seen in the last
     * {@link Limits#DEDUPLICATION_WINDOW} stores nothing and returns the message id of the first send
     * with it, so a send retried after its reply was lost is stored once. In a batch, message {@code i}
     * (from 0) is deduplicated under {@code id + "/" + i}. Whether the ids outlive the mailbox object
     * (another process, a restart) is {@link MailboxCapabilities#durableDeduplication()}.
     *
     * @param id 1 to {@link Limits#MAX_DEDUPLICATION_ID_LENGTH} characters from A-Z, a-z, 0-9 and
     *           {@code !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~} (SQS's rule)
     * @return options with this id
     * @throws IllegalArgumentException if the id breaks that rule
     */
    public SendOptions withDeduplicationId(String id) {
        return new SendOptions(delay, attributes, Limits.requireDeduplicationId(id));
    }

    /** @return the deduplication id, or null when sends with these options are not deduplicated */
    public @org.jspecify.annotations.Nullable String deduplicationId() {
        return deduplicationId;
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
                && attributes.equals(other.attributes) && Objects.equals(deduplicationId, other.deduplicationId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(delay, attributes, deduplicationId);
    }

    @Override
    public String toString() {
        return "SendOptions[delay=" + delay + ", attributes=" + attributes
                + (deduplicationId == null ? "" : ", deduplicationId=" + deduplicationId) + "]";
    }
}
