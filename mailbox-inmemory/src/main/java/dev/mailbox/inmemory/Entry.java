package dev.mailbox.inmemory;

import org.jspecify.annotations.Nullable;

import java.util.Map;

/**
 * One stored message. Kept small on purpose (about 64 bytes with compressed oops): the id and the
 * receipt handles are derived from {@code seq} when asked for instead of being stored.
 * Guarded by the owning mailbox's lock.
 */
class Entry {
    static final byte READY = 0;
    static final byte WAITING = 1;   // invisible (delay or nack with timeout), not in flight
    static final byte IN_FLIGHT = 2;
    static final byte DELETED = 3;

    /** Position in this mailbox: FIFO tie-break and the basis of ids and handles. */
    final long seq;
    /** The encoded bytes, or the body itself when the mailbox has no codec. */
    final Object payload;
    final Map<String, String> attributes;
    final long enqueuedAtMillis;

    /** When a WAITING entry becomes visible, or when an IN_FLIGHT entry's visibility ends. */
    long dueNanos;
    int heapIndex = -1;
    int deliveryCount;
    byte state;

    Entry(long seq, Object payload, Map<String, String> attributes, long enqueuedAtMillis) {
        this.seq = seq;
        this.payload = payload;
        this.attributes = attributes;
        this.enqueuedAtMillis = enqueuedAtMillis;
    }

    /** @return the id this message had before it was dead-lettered here, or null */
    @Nullable String originalId() {
        return null;
    }

    /** A message moved here from another mailbox keeps the id it was sent with. */
    static final class DeadLettered extends Entry {
        private final String originalId;

        DeadLettered(long seq, Entry from, String originalId) {
            super(seq, from.payload, from.attributes, from.enqueuedAtMillis);
            this.originalId = originalId;
        }

        @Override
        String originalId() {
            return originalId;
        }
    }
}
