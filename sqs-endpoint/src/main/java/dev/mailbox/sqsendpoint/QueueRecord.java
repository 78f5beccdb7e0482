package dev.mailbox.sqsendpoint;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a {@link QueueDirectory} stores about one queue: its name, the queue attributes that were set on it, its
 * tags, and when it was created and last changed. The endpoint reads the attributes on every call that needs
 * them, so every node that shares a directory agrees on them.
 *
 * <p>Attributes are stored as SQS takes them, by SQS attribute name ({@code VisibilityTimeout},
 * {@code RedrivePolicy}, ...) with their text values, and only those that were set: defaults are not stored
 * (the endpoint knows them), so a directory never needs to understand an attribute. Immutable; the maps are
 * sorted copies.
 *
 * @param name           the queue's name, 1 to 80 characters of {@code A-Z a-z 0-9 _ -} (a FIFO queue's ending in
 *                       {@code .fifo}, within the 80)
 * @param attributes     the attributes that were set, by SQS name
 * @param tags           the queue's tags
 * @param createdAt      when the queue was created
 * @param lastModifiedAt when its attributes last changed (its creation, if never)
 */
public record QueueRecord(String name, Map<String, String> attributes, Map<String, String> tags, Instant createdAt,
                          Instant lastModifiedAt) {

    /**
     * @param name           the queue's name
     * @param attributes     the attributes that were set
     * @param tags           the tags
     * @param createdAt      when the queue was created
     * @param lastModifiedAt when its attributes last changed
     * @throws NullPointerException if anything is missing
     */
    public QueueRecord {
        Objects.requireNonNull(name, "name");
        attributes = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(attributes, "attributes")));
        tags = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(tags, "tags")));
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastModifiedAt, "lastModifiedAt");
    }

    /**
     * @return whether this is a FIFO queue (its attribute {@code FifoQueue} is {@code true}, which only
     *         CreateQueue sets)
     */
    public boolean fifo() {
        return "true".equals(attributes.get("FifoQueue"));
    }

    /**
     * @param change what to change
     * @return this record with the change applied: attributes set (an empty value removes one), tags set and
     *         removed, and {@code lastModifiedAt} moved to the change's time if any attribute changed
     */
    public QueueRecord with(QueueUpdate change) {
        Map<String, String> newAttributes = new TreeMap<>(attributes);
        change.attributes().forEach((k, v) -> {
            if (v.isEmpty()) {
                newAttributes.remove(k);
            } else {
                newAttributes.put(k, v);
            }
        });
        Map<String, String> newTags = new TreeMap<>(tags);
        newTags.putAll(change.tags());
        change.removedTags().forEach(newTags::remove);
        Instant modified = change.attributes().isEmpty() ? lastModifiedAt : change.at();
        return new QueueRecord(name, newAttributes, newTags, createdAt, modified);
    }
}
