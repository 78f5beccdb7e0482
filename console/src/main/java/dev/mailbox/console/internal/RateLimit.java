package dev.mailbox.console.internal;

import dev.mailbox.http.HttpRequest;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * At most {@link #REQUESTS} requests per {@link #WINDOW_SECONDS}-second window from one client (an IPv4 address, or
 * an IPv6 /64: {@link HttpRequest#clientOf}): a page polls one section every two seconds, so this leaves room for
 * several tabs and catches a loop. The table holds the clients seen in the current window only, at most
 * {@link #MAX_ADDRESSES}; past that, clients not in it go uncounted until the window turns. Refusing them instead
 * would let one host with ten thousand addresses (a /64 holds 2^64; loopback, 2^24) lock everyone else out of the
 * console every window; uncounted, what they cost is still bounded by the listener's connections and the console's
 * own threads.
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
     * @param client the client's address (an IPv6 one is counted with its /64)
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
        InetAddress key = HttpRequest.clientOf(client);
        AtomicInteger n = counts.get(key);
        if (n == null) {
            if (counts.size() >= MAX_ADDRESSES) {
                return true;
            }
            n = counts.computeIfAbsent(key, a -> new AtomicInteger());
        }
        return n.incrementAndGet() <= REQUESTS;
    }
}
