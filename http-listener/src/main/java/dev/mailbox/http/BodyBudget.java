package dev.mailbox.http;

import java.net.InetAddress;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of request bodies and of answers not yet sent may be held at once, by every listener that shares
 * the budget, and how much of that one client may hold.
 *
 * <ul>
 *   <li>A body's declared length is taken before the body is read (a chunked body's, as it arrives) and given back
 *       when its answer has been sent. A request that finds too little left is refused ({@code 503}) before its
 *       body is read, so N clients sending maximum-size bodies at once cost at most the budget, not N times the
 *       maximum.</li>
 *   <li>An answer exists before it is sent, so it is counted in full, even past the budget, from when it is handed
 *       to the listener until its last byte is written (or its connection closed): while answers that clients do
 *       not read fill the budget, no more bodies are taken, and handlers that make large answers can ask
 *       {@link #exhausted(InetAddress)} before they make one.</li>
 *   <li>One client (an IPv4 address, or the /64 of an IPv6 one: see {@link HttpRequest#client()}) may hold at most
 *       a quarter of the budget, or one body of any size if it holds nothing else: a client that announces bodies
 *       and never sends them, or reads no answers, is refused once it holds its share, and others are not.</li>
 * </ul>
 *
 * <p>The budget holds bodies as received; what a handler makes of them (parsed forms, decoded strings) is
 * proportional, so the default leaves room for that: one sixteenth of the JVM's maximum heap, and at least
 * 4 MiB. Thread-safe.
 */
public final class BodyBudget {

    private static final BodyBudget SHARED = new BodyBudget(Math.max(4L << 20, Runtime.getRuntime().maxMemory() / 16));

    private final long capacity;
    private final long share;
    private final AtomicLong available;
    /** Bytes held by each client holding any; an entry goes when its client holds nothing. */
    private final ConcurrentHashMap<InetAddress, Long> held = new ConcurrentHashMap<>();

    private BodyBudget(long capacity) {
        this.capacity = capacity;
        this.share = Math.max(1, capacity / 4);
        this.available = new AtomicLong(capacity);
    }

    /** @return the budget every listener of this JVM uses unless given another */
    public static BodyBudget shared() {
        return SHARED;
    }

    /**
     * @param bytes the most bytes of bodies and unsent answers held at once
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

    /** @return the most one client may hold besides its first body: a quarter of the capacity */
    public long share() {
        return share;
    }

    /** @return the bytes not taken right now; below zero while unsent answers hold more than the capacity */
    public long available() {
        return available.get();
    }

    /**
     * @param client a client, as {@link HttpRequest#client()} gives it
     * @return the bytes it holds now
     */
    public long held(InetAddress client) {
        return held.getOrDefault(client, 0L);
    }

    /**
     * @param client a client, as {@link HttpRequest#client()} gives it
     * @return whether a request of this client should make no large answer now: nothing is left, or the client
     *         holds more than its share (answers it has not read, say)
     */
    public boolean exhausted(InetAddress client) {
        return available.get() <= 0 || held(client) > share;
    }

    /**
     * Takes bytes for a body about to be read, if there are enough left and the client stays within its share (or
     * holds nothing yet).
     *
     * @param bytes  what to take
     * @param client who takes them, as {@link HttpRequest#client()} gives it
     * @return whether it was taken (all of it); false leaves the budget as it was
     */
    public boolean tryTake(long bytes, InetAddress client) {
        Objects.requireNonNull(client, "client");
        if (bytes <= 0) {
            return true;
        }
        boolean[] taken = {false};
        held.compute(client, (c, has) -> {
            long before = has == null ? 0 : has;
            if (before > 0 && before + bytes > share) {
                return has;
            }
            while (true) {
                long left = available.get();
                if (left < bytes) {
                    return has;
                }
                if (available.compareAndSet(left, left - bytes)) {
                    taken[0] = true;
                    return before + bytes;
                }
            }
        });
        return taken[0];
    }

    /**
     * Counts bytes that are held already (an answer made, waiting to be sent), even past the capacity or the
     * client's share: they leave less for bodies until given back.
     *
     * @param bytes  what to count
     * @param client whose they are, as {@link HttpRequest#client()} gives it
     */
    public void take(long bytes, InetAddress client) {
        Objects.requireNonNull(client, "client");
        if (bytes > 0) {
            held.merge(client, bytes, Long::sum);
            available.addAndGet(-bytes);
        }
    }

    /**
     * @param bytes  what to give back, as taken
     * @param client who took them
     */
    public void giveBack(long bytes, InetAddress client) {
        Objects.requireNonNull(client, "client");
        if (bytes > 0) {
            held.computeIfPresent(client, (c, has) -> has - bytes <= 0 ? null : has - bytes);
            available.addAndGet(bytes);
        }
    }

    @Override
    public String toString() {
        return "BodyBudget[" + available.get() + " of " + capacity + " bytes free, " + held.size() + " clients holding"
                + " some]";
    }
}
