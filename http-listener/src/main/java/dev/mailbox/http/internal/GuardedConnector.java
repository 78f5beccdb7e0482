package dev.mailbox.http.internal;

import dev.mailbox.http.HttpLimits;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server connector that counts its connections, overall and per client address, and refuses one past either
 * cap as it is accepted: before a byte is read, before a TLS handshake. A plaintext client is told why (a 503 with
 * {@code Connection: close}); a TLS client, which could not read a plaintext answer, sees the connection closed.
 * Accepting happens on the selector thread (no acceptor threads), which is where the refusal is decided.
 */
final class GuardedConnector extends ServerConnector {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedConnector.class);
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;

    private final String name;
    private final HttpLimits limits;
    private final boolean secure;
    private final AtomicInteger open = new AtomicInteger();
    private final Map<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
    private final Map<SelectableChannel, Slot> slots = new ConcurrentHashMap<>();
    private final Set<GuardedEndPoint> endPoints = ConcurrentHashMap.newKeySet();
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong refused = new AtomicLong();

    GuardedConnector(Server server, String name, HttpLimits limits, boolean secure, ConnectionFactory... factories) {
        // 0 acceptors: the selector accepts, through the manager below; 1 selector is plenty for these listeners
        super(server, null, null, null, 0, 1, factories);
        this.name = name;
        this.limits = limits;
        this.secure = secure;
    }

    /** One accepted connection's place under the caps; given back once, when it closes. */
    final class Slot {
        private final InetAddress address;
        private final AtomicBoolean released = new AtomicBoolean();

        Slot(InetAddress address) {
            this.address = address;
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                open.decrementAndGet();
                perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
            }
        }
    }

    /** @return the connections open now */
    int openConnections() {
        return open.get();
    }

    /** @return the connections open now with no request being served on them (those at hand to make room) */
    int freeConnections() {
        int n = 0;
        for (GuardedEndPoint e : endPoints) {
            if (e.isOpen() && e.free()) {
                n++;
            }
        }
        return n;
    }

    /** @return the connections refused so far */
    long refusedConnections() {
        return refused.get();
    }

    /**
     * Closes every connection whose request headers are overdue; forgets closed ones; with {@code probe}, looks
     * whether the clients of requests being handled are still there, and closes the connections of those that
     * have gone, after telling their handlers.
     */
    void sweep(long headerTimeoutNanos, boolean probe) {
        long now = System.nanoTime();
        for (GuardedEndPoint e : endPoints) {
            if (!e.isOpen()) {
                endPoints.remove(e);
            } else if (e.overdue(now, headerTimeoutNanos)) {
                LOG.debug("{} listener: closing {}: its request's headers took longer than {} ms", name,
                        e.getRemoteSocketAddress(), headerTimeoutNanos / 1_000_000);
                e.close(new TimeoutException("request headers not received within "
                        + headerTimeoutNanos / 1_000_000 + " ms"));
            } else if (probe) {
                Runnable gone = e.probe();
                if (gone != null) {
                    LOG.debug("{} listener: {} went away while its request was handled", name,
                            e.getRemoteSocketAddress());
                    try {
                        gone.run();
                    } catch (RuntimeException failed) {
                        LOG.warn("{} listener: telling a handler that its client went away failed", name, failed);
                    }
                    e.close(new java.io.EOFException("the client went away while its request was handled"));
                }
            }
        }
    }

    private @Nullable Slot take(InetAddress from) {
        // a client at its own cap is refused before it can cost anyone else a connection to make room
        if (perAddress.getOrDefault(from, 0) >= limits.maxConnectionsPerAddress()) {
            return null;
        }
        if (open.incrementAndGet() > limits.maxConnections()) {
            open.decrementAndGet();
            if (!makeRoom()) {
                return null;
            }
            open.incrementAndGet();
        }
        boolean[] ok = {false};
        perAddress.compute(from, (a, n) -> {
            int count = n == null ? 0 : n;
            if (count >= limits.maxConnectionsPerAddress()) {
                return n;
            }
            ok[0] = true;
            return count + 1;
        });
        if (!ok[0]) {
            open.decrementAndGet();
            return null;
        }
        return new Slot(from);
    }

    /**
     * At the cap on all connections, closes the connection that has gone longest without a request being served on
     * it (idle, trickling headers, or in a TLS handshake), of the client holding the most connections, so that
     * connections which cost their clients nothing to hold cannot lock everyone else out. A connection serving a
     * request is never taken. The new connection's own client is not spared: when it holds the most, it trades its
     * own oldest connection for the new one and takes nothing from anyone else. Runs on the selector, which accepts
     * one connection at a time.
     *
     * @return whether a place was freed (given to the caller)
     */
    private boolean makeRoom() {
        GuardedEndPoint victim = null;
        int victimHolds = 0;
        long victimSince = 0;
        for (GuardedEndPoint e : endPoints) {
            if (!e.isOpen() || !e.free()) {
                continue;
            }
            int holds = perAddress.getOrDefault(e.slot().address, 0);
            long since = e.freeSince();
            if (victim == null || holds > victimHolds || (holds == victimHolds && since - victimSince < 0)) {
                victim = e;
                victimHolds = holds;
                victimSince = since;
            }
        }
        if (victim == null) {
            return false;
        }
        LOG.debug("{} listener: at {} connections, closing {}, which has waited longest without a request, for a new"
                + " one", name, limits.maxConnections(), victim.getRemoteSocketAddress());
        // its place goes to the new connection now; the close gives it back again, which is a no-op
        victim.slot().release();
        victim.close(new java.util.concurrent.TimeoutException("closed for a new connection: the server is at its"
                + " most connections and this one had no request"));
        return true;
    }

    private void refuse(SocketChannel socket, InetAddress from) {
        refused.incrementAndGet();
        // as take decides: a client at its own cap is told so, even when the server is at its cap as well
        boolean total = perAddress.getOrDefault(dev.mailbox.http.HttpRequest.clientOf(from), 0)
                < limits.maxConnectionsPerAddress();
        String why = total ? "the server has " + limits.maxConnections() + " connections open, its most"
                : "your address" + (from instanceof java.net.Inet6Address ? "'s /64" : "") + " has "
                + limits.maxConnectionsPerAddress() + " connections open, the most one address may";
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            LOG.warn("{} listener: refusing connections ({}; {} refused so far), latest from {}", name, why,
                    refused.get(), from.getHostAddress());
        }
        try {
            if (!secure) {
                // a fresh socket's send buffer is empty: this small write does not wait for the client
                byte[] text = ("too many connections: " + why + "; retry later\n").getBytes(StandardCharsets.UTF_8);
                String head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        + "Content-Length: " + text.length + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
                ByteBuffer out = ByteBuffer.allocate(head.length() + text.length);
                out.put(head.getBytes(StandardCharsets.ISO_8859_1)).put(text).flip();
                socket.configureBlocking(false);
                socket.write(out);
                socket.shutdownOutput();
            }
        } catch (IOException e) {
            // the client is gone already
        } finally {
            try {
                socket.close();
            } catch (IOException e) {
                // closing
            }
        }
    }

    @Override
    protected SelectorManager newSelectorManager(Executor executor, Scheduler scheduler, int selectors) {
        return new Manager(executor, scheduler, selectors);
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key) {
        Slot slot = slots.get(channel);
        if (slot == null) {
            throw new IllegalStateException("a connection accepted without a slot: " + channel);
        }
        GuardedEndPoint endPoint = new GuardedEndPoint(channel, selector, key, getScheduler(), slot, getExecutor());
        endPoint.setIdleTimeout(getIdleTimeout());
        endPoints.add(endPoint);
        return endPoint;
    }

    /** Accepts (or refuses) on the selector, and gives back a connection's slot when it closes. */
    private final class Manager extends ServerConnectorManager {

        Manager(Executor executor, Scheduler scheduler, int selectors) {
            super(executor, scheduler, selectors);
        }

        @Override
        protected void accepted(SelectableChannel channel) throws IOException {
            SocketChannel socket = (SocketChannel) channel;
            InetAddress from;
            try {
                from = ((InetSocketAddress) socket.getRemoteAddress()).getAddress();
            } catch (IOException | RuntimeException gone) {
                socket.close();
                return;
            }
            Slot slot = take(dev.mailbox.http.HttpRequest.clientOf(from));
            if (slot == null) {
                refuse(socket, from);
                return;
            }
            slots.put(channel, slot);
            try {
                super.accepted(channel);
            } catch (IOException | RuntimeException e) {
                forget(channel);
                throw e;
            }
        }

        @Override
        protected void onAcceptFailed(SelectableChannel channel, Throwable cause, Object attachment) {
            super.onAcceptFailed(channel, cause, attachment);
            forget(channel);
        }

        @Override
        protected void endPointClosed(EndPoint endpoint) {
            try {
                super.endPointClosed(endpoint);
            } finally {
                if (endpoint instanceof GuardedEndPoint guarded) {
                    endPoints.remove(guarded);
                    slots.remove(guarded.getChannel());
                    guarded.slot().release();
                }
            }
        }

        private void forget(SelectableChannel channel) {
            Slot slot = slots.remove(channel);
            if (slot != null) {
                slot.release();
            }
        }
    }
}
