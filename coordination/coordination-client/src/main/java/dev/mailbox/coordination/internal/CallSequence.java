package dev.mailbox.coordination.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Numbers this process's acquire calls in the order they are made, for the coordinator to tell a late copy
 * of an earlier call from a newer one ({@code AcquireLeaseRequest.sequence}). A holder that gave up on a
 * call (its answer did not come in time) and called again must not have the first call, landing later,
 * raise the epoch and fence the second.
 *
 * <p>The numbers are microseconds of the wall clock, raised by one where that would not move forward, so
 * they only grow in one process, and a process restarted with the same holder secret goes on from above its
 * predecessor's numbers unless the wall clock was set back in between. If it was, the coordinator refuses
 * the restarted holder's re-acquire of its own live lease as a late copy and grants it once that lease has
 * ended: a delay, never a second holder.
 */
final class CallSequence {

    private static final AtomicLong LAST = new AtomicLong();

    private CallSequence() {
    }

    /** @return a number above every one returned before in this process */
    static long next() {
        long now = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        return LAST.updateAndGet(last -> Math.max(last + 1, now));
    }
}
