package dev.mailbox.coordination;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A queue record as the coordinators hold it (see {@link Queues}): what an SQS endpoint keeps about one queue.
 * The coordinators do not interpret attributes; they hold them by SQS attribute name as text, and only those
 * that were set. Immutable; the maps are sorted copies.
 *
 * @param name                 the queue's name (see {@link CoordinationLimits#queueNameProblem})
 * @param attributes           the attributes that were set, by name
 * @param tags                 the queue's tags
 * @param createdAtMillis      when it was created (epoch millis; 0 in a create: the coordinator's time)
 * @param lastModifiedAtMillis when its attributes last changed (its creation, if never; 0 in a create: the
 *                             creation time)
 */
public record QueueInfo(String name, Map<String, String> attributes, Map<String, String> tags, long createdAtMillis,
                        long lastModifiedAtMillis) {

    /** Copies the maps. */
    public QueueInfo {
        Objects.requireNonNull(name, "name");
        attributes = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(attributes, "attributes")));
        tags = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(tags, "tags")));
    }
}
