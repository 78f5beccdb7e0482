package dev.mailbox.api;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How to send a message: an optional delay and up to ten string attributes. Immutable; every
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

    private static final SendOptions DEFAULTS = new SendOptions(Duration.ZERO, Map.of());

    private final Duration delay;
    private final Map<String, String> attributes;

    private SendOptions(Duration delay, Map<String, String> attributes) {
        this.delay = delay;
        this.attributes = attributes;
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
        return new SendOptions(Limits.requireDelay(delay), attributes);
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
        return new SendOptions(delay, checkedCount(copy));
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
        return new SendOptions(delay, checkedCount(copy));
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
                && attributes.equals(other.attributes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(delay, attributes);
    }

    @Override
    public String toString() {
        return "SendOptions[delay=" + delay + ", attributes=" + attributes + "]";
    }
}
