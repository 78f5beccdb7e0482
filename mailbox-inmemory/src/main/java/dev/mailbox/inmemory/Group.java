package dev.mailbox.inmemory;

import java.util.ArrayDeque;

/**
 * A message group of a FIFO mailbox, or a tenant of a fair standard mailbox: the messages sent with one
 * group id. It exists while it holds messages (the mailbox drops it when {@link #held} reaches zero, so the
 * groups never outnumber the messages). Guarded by the owning mailbox's lock.
 */
final class Group {
    final String id;
    /** Messages of this group not yet deleted: queued, waiting and in flight. */
    int held;
    /** Messages of this group in flight. */
    int inFlight;
    /**
     * FIFO: the group's messages that are not in flight, in send order (a nacked or lapsed one goes back
     * to its place by seq, which is always near the front, since only the front is ever in flight).
     * Standard: the tenant's visible messages set aside while it was noisy, in the order they were met.
     */
    final ArrayDeque<Entry> queue = new ArrayDeque<>(4);
    /** FIFO: whether the group is in the mailbox's queue of groups that can be delivered from. */
    boolean available;
    /** Standard: whether the tenant is in the mailbox's list of tenants with set-aside messages. */
    boolean parked;

    Group(String id) {
        this.id = id;
    }

    @Override
    public String toString() {
        return "Group[" + id + ", held=" + held + ", inFlight=" + inFlight + "]";
    }
}
