package dev.mailbox.console.internal;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * At most {@link #REQUESTS} requests per {@link #WINDOW_SECONDS}-second window from one client address: a page
 * polls one section every two seconds, so this leaves room for several tabs and catches a loop. The table holds
 * the addresses seen in the current window only, at most {@link #MAX_ADDRESSES}; past that, new addresses are
 * refused until the window turns (the listener's connection bounds keep real clients far below it).
 */
public final class RateLimit {

    /** Requests one address may make in a window. */
    public static final int REQUESTS = 300;
    /** The window, in seconds. */
    public static final int WINDOW_SECONDS = 10;
    /** The most addresses tracked in one window. */
    static final int MAX_ADDRESSES = 10_000;

    private volatile long window = currentWindow();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> counts = new ConcurrentHashMap<>();

    private static long currentWindow() {
        return System.nanoTime() / (WINDOW_SECONDS * 1_000_000_000L);
    }

    /**
     * @param client the client's address
     * @return whether it may make one more request now
     */
    public boolean tryAcquire(InetAddress client) {
        long now = currentWindow();
        if (now != window) {
            synchronized (this) {
                if (now != window) {
                    counts.clear();
                    window = now;
                }
            }
        }
        AtomicInteger n = counts.get(client);
        if (n == null) {
            if (counts.size() >= MAX_ADDRESSES) {
                return false;
            }
            n = counts.computeIfAbsent(client, a -> new AtomicInteger());
        }
        return n.incrementAndGet() <= REQUESTS;
    }
}
