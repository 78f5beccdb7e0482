package dev.mailbox.coordination;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A change to a queue record, sent whole and applied by the coordinators' state machine to the record as it is
 * when the change is applied: concurrent changes of one queue (two nodes tagging it at once) never lose each
 * other, which a read-modify-write by the caller would. Attributes and tags are set, then removed; a key may
 * not be both. Immutable.
 *
 * @param setAttributes     attributes to set, by name (values non-empty)
 * @param removedAttributes attribute names to remove (back to their defaults)
 * @param setTags           tags to add or replace
 * @param removedTags       tag keys to remove
 * @param modifiedAtMillis  the record's new last-modified time when an attribute is set or removed (epoch
 *                          millis), or 0 for the coordinator's time
 */
public record QueueChange(Map<String, String> setAttributes, Set<String> removedAttributes,
                          Map<String, String> setTags, Set<String> removedTags, long modifiedAtMillis) {

    /** Copies the collections. */
    public QueueChange {
        setAttributes = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(setAttributes, "setAttributes")));
        removedAttributes = Collections.unmodifiableSet(new TreeSet<>(Objects.requireNonNull(removedAttributes,
                "removedAttributes")));
        setTags = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(setTags, "setTags")));
        removedTags = Collections.unmodifiableSet(new TreeSet<>(Objects.requireNonNull(removedTags, "removedTags")));
    }
}
