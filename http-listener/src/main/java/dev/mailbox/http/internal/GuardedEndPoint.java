package dev.mailbox.http.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * A connection's socket, knowing whether a request is being served on it and, if not, when the bytes of the next
 * one (with TLS, of the handshake first) began to arrive: what the header deadline is measured from. Jetty's idle
 * timeout alone cannot stop a client that sends one byte every few seconds.
 *
 * <p>While a handler works on a request whose body is read, Jetty reads nothing from the socket, so it would not
 * notice the client leave until it wrote the answer (a long poll of a client long gone would still take messages).
 * {@link #probe()} reads instead, a little: the end of the stream (or a reset) means the client has gone; bytes it
 * sent meanwhile (a pipelined request, a TLS alert) are kept and given to Jetty's next {@link #fill} first.
 */
final class GuardedEndPoint extends SocketChannelEndPoint {

    /** Bytes kept from probes at most: a client that pipelines more is plainly there, and is not probed further. */
    private static final int MAX_KEPT = 16 * 1024;

    private final GuardedConnector.Slot slot;
    private final Executor executor;
    /** When the first byte of a request not yet being served arrived (System.nanoTime), 0 while none has. */
    private volatile long waitingSince;
    private volatile boolean serving;
    /** Since when no request has been served on it (System.nanoTime): accepted, or its last answer sent. */
    private volatile long freeSince = System.nanoTime();
    /** Told when a probe finds the client gone; set while a handler works with the request read whole. */
    private volatile @Nullable Runnable whenGone;
    // guarded by itself: probes and fills take turns, so kept bytes keep their order
    private final Object reading = new Object();
    /** Bytes a probe read and Jetty has not, in flush mode; null when none. */
    private @Nullable ByteBuffer kept;

    GuardedEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler,
                    GuardedConnector.Slot slot, Executor executor) {
        super(channel, selector, key, scheduler);
        this.slot = slot;
        this.executor = executor;
    }

    GuardedConnector.Slot slot() {
        return slot;
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException {
        int n;
        synchronized (reading) {
            ByteBuffer k = kept;
            if (k != null) {
                n = BufferUtil.append(buffer, k);
                if (!k.hasRemaining()) {
                    kept = null;
                }
            } else {
                n = super.fill(buffer);
            }
        }
        if (n > 0 && !serving && waitingSince == 0) {
            long now = System.nanoTime();
            waitingSince = now == 0 ? 1 : now;
        }
        return n;
    }

    @Override
    protected void needsFillInterest() {
        boolean ready;
        synchronized (reading) {
            ready = kept != null;
        }
        if (ready) {
            // the bytes are out of the socket already: the selector would never say they are there
            executor.execute(() -> getFillInterest().fillable());
        } else {
            super.needsFillInterest();
        }
    }

    /** The request's headers are in: from now on its handler's own deadlines apply. */
    void serving() {
        serving = true;
    }

    /** The answer is sent: the next request's clock starts with its first byte. */
    void served() {
        waitingSince = 0;
        freeSince = System.nanoTime();
        serving = false;
    }

    /** @return whether no request is being served on it: it may be closed to make room */
    boolean free() {
        return !serving;
    }

    /** @return since when no request has been served on it (System.nanoTime) */
    long freeSince() {
        return freeSince;
    }

    /** @return whether a request has been arriving for longer than allowed without its headers being complete */
    boolean overdue(long now, long headerTimeoutNanos) {
        long since = waitingSince;
        return !serving && since != 0 && now - since > headerTimeoutNanos;
    }

    /**
     * A handler works on this connection's request, read whole, and nothing reads the socket until it answers.
     *
     * @param action what to do if the client goes meanwhile, or null when the answer is on its way
     */
    void whenGone(@Nullable Runnable action) {
        whenGone = action;
    }

    /**
     * Looks whether the client of a request being handled has gone, without waiting.
     *
     * @return what to run because it has (then the connection is closed), or null
     */
    @Nullable Runnable probe() {
        Runnable action = whenGone;
        if (action == null || !isOpen()) {
            return null;
        }
        synchronized (reading) {
            ByteBuffer k = kept;
            if (k != null && k.remaining() >= MAX_KEPT) {
                return null;
            }
            ByteBuffer into = ByteBuffer.allocate(1024);
            int n;
            try {
                n = getChannel().read(into);
            } catch (IOException reset) {
                n = -1;
            }
            if (n > 0) {
                into.flip();
                if (k == null) {
                    kept = into;
                } else {
                    ByteBuffer joined = ByteBuffer.allocate(k.remaining() + into.remaining());
                    joined.put(k).put(into).flip();
                    kept = joined;
                }
                return null;
            }
            if (n == 0) {
                return null;
            }
        }
        whenGone = null;
        return action;
    }
}
