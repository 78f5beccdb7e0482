package dev.mailbox.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of request bodies may be held at once, by every listener that shares the budget: a body's
 * declared length is taken from it before the body is read (a chunked body's, as it arrives) and given back when
 * its answer has been sent, so N clients sending maximum-size bodies at once cost at most the budget, not N times
 * the maximum. A request that finds too little left is refused ({@code 503}) before its body is read.
 *
 * <p>The budget holds bodies as received; what a handler makes of them (parsed forms, decoded strings) is
 * proportional, so the default leaves room for that: one sixteenth of the JVM's maximum heap, and at least
 * 4 MiB.
 */
public final class BodyBudget {

    private static final BodyBudget SHARED = new BodyBudget(Math.max(4L << 20, Runtime.getRuntime().maxMemory() / 16));

    private final long capacity;
    private final AtomicLong available;

    private BodyBudget(long capacity) {
        this.capacity = capacity;
        this.available = new AtomicLong(capacity);
    }

    /** @return the budget every listener of this JVM uses unless given another */
    public static BodyBudget shared() {
        return SHARED;
    }

    /**
     * @param bytes the most bytes of bodies held at once
     * @return a budget of its own
     */
    public static BodyBudget of(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("a body budget is at least 1 byte, was " + bytes);
        }
        return new BodyBudget(bytes);
    }

    /** @return the most bytes held at once */
    public long capacity() {
        return capacity;
    }

    /** @return the bytes not taken right now */
    public long available() {
        return available.get();
    }

    /**
     * @param bytes what to take
     * @return whether it was taken (all of it); false leaves the budget as it was
     */
    public boolean tryTake(long bytes) {
        if (bytes <= 0) {
            return true;
        }
        while (true) {
            long left = available.get();
            if (left < bytes) {
                return false;
            }
            if (available.compareAndSet(left, left - bytes)) {
                return true;
            }
        }
    }

    /** @param bytes what to give back, as taken */
    public void giveBack(long bytes) {
        if (bytes > 0) {
            available.addAndGet(bytes);
        }
    }

    @Override
    public String toString() {
        return "BodyBudget[" + available.get() + " of " + capacity + " bytes free]";
    }
}
