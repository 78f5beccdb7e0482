package dev.mailbox.http.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * A connection's socket, knowing whether a request is being served on it and, if not, when the bytes of the next
 * one (with TLS, of the handshake first) began to arrive: what the header deadline is measured from. Jetty's idle
 * timeout alone cannot stop a client that sends one byte every few seconds.
 */
final class GuardedEndPoint extends SocketChannelEndPoint {

    private final GuardedConnector.Slot slot;
    /** When the first byte of a request not yet being served arrived (System.nanoTime), 0 while none has. */
    private volatile long waitingSince;
    private volatile boolean serving;

    GuardedEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
                    GuardedConnector.Slot slot) {
        super(channel, selector, key, scheduler);
        this.slot = slot;
    }

    GuardedConnector.Slot slot() {
        return slot;
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException {
        int n = super.fill(buffer);
        if (n > 0 && !serving && waitingSince == 0) {
            long now = System.nanoTime();
            waitingSince = now == 0 ? 1 : now;
        }
        return n;
    }

    /** The request's headers are in: from now on its handler's own deadlines apply. */
    void serving() {
        serving = true;
    }

    /** The answer is sent: the next request's clock starts with its first byte. */
    void served() {
        waitingSince = 0;
        serving = false;
    }

    /** @return whether a request has been arriving for longer than allowed without its headers being complete */
    boolean overdue(long now, long headerTimeoutNanos) {
        long since = waitingSince;
        return !serving && since != 0 && now - since > headerTimeoutNanos;
    }
}
