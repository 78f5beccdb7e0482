package dev.mailbox.sqsendpoint;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A change to a {@link QueueRecord}, as plain data so that a directory can replicate it (apply it with
 * {@link QueueRecord#with(QueueUpdate)}): attributes to set, tags to set and tag keys to remove. The endpoint
 * makes one per SetQueueAttributes, TagQueue or UntagQueue call, after checking every value, so a directory
 * applies it as it is. Immutable.
 *
 * @param attributes  attributes to set by SQS name; an empty value removes the attribute (back to its default)
 * @param tags        tags to add or replace
 * @param removedTags tag keys to remove
 * @param at          when the change was made (the queue's new {@code lastModifiedAt} if attributes change)
 */
public record QueueUpdate(Map<String, String> attributes, Map<String, String> tags, Set<String> removedTags,
                          Instant at) {

    /**
     * @param attributes  attributes to set
     * @param tags        tags to set
     * @param removedTags tag keys to remove
     * @param at          when
     * @throws NullPointerException if anything is missing
     */
    public QueueUpdate {
        attributes = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(attributes, "attributes")));
        tags = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(tags, "tags")));
        removedTags = Collections.unmodifiableSet(new TreeSet<>(Objects.requireNonNull(removedTags, "removedTags")));
        Objects.requireNonNull(at, "at");
    }
}
