package dev.mailbox.inmemory;

import org.jspecify.annotations.Nullable;

import java.util.Map;

/**
 * One stored message. Kept small on purpose (about 64 bytes with compressed oops): the id, the receipt
 * handles and the sequence number are derived from {@code seq} when asked for instead of being stored.
 * Guarded by the owning mailbox's lock.
 */
class Entry {
    static final byte READY = 0;
    static final byte WAITING = 1;   // invisible (delay or nack with timeout), not in flight
    static final byte IN_FLIGHT = 2;
    static final byte DELETED = 3;

    /** Position in this mailbox: FIFO tie-break and the basis of ids, handles and sequence numbers. */
    final long seq;
    /** The encoded bytes, or the body itself when the mailbox has no codec. */
    final Object payload;
    final Map<String, String> attributes;
    final long enqueuedAtMillis;
    /** The message's group (FIFO) or tenant (standard), or null when it was sent without a group id. */
    final @Nullable Group group;

    /** When a WAITING entry becomes visible, or when an IN_FLIGHT entry's visibility ends. */
    long dueNanos;
    int heapIndex = -1;
    int deliveryCount;
    byte state;
    /**
     * Set when the current delivery was nacked, cleared by the next delivery: the one thing that tells a
     * nacked message (its handle is stale for acknowledge too) from a lapsed one (its handle still
     * acknowledges until the next delivery).
     */
    boolean released;

    Entry(long seq, Object payload, Map<String, String> attributes, long enqueuedAtMillis, @Nullable Group group) {
        this.seq = seq;
        this.payload = payload;
        this.attributes = attributes;
        this.enqueuedAtMillis = enqueuedAtMillis;
        this.group = group;
    }

    /** @return the id this message had before it was dead-lettered here, or null */
    @Nullable String originalId() {
        return null;
    }

    /** A message moved here from another mailbox keeps the id it was sent with, and its group id. */
    static final class DeadLettered extends Entry {
        private final String originalId;

        DeadLettered(long seq, Entry from, String originalId, @Nullable Group group) {
            super(seq, from.payload, from.attributes, from.enqueuedAtMillis, group);
            this.originalId = originalId;
        }

        @Override
        String originalId() {
            return originalId;
        }
    }
}
