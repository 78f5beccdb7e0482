package dev.mailbox.coordination.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Delay with jitter on chosen nodes' links, where the kernel has no {@code netem}: every node's Raft address,
 * as the others dial it, is a TCP relay in the test JVM that forwards to where the node listens. A relay holds
 * each chunk it forwards for a random delay while either end of its connection is a delayed node (the node
 * it fronts, or the node that dialled it, known by its source address), keeping the bytes of each direction
 * in order, as a slow link does. Relays listen on the test's bridge address and dial only the nodes'
 * addresses in their namespaces.
 */
final class DelayRelays implements AutoCloseable {

    private final Map<InetAddress, String> nodeByAddress = new ConcurrentHashMap<>();
    private final Map<String, Relay> relays = new LinkedHashMap<>();
    private final Set<String> delayed = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong chunks = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong held = new java.util.concurrent.atomic.AtomicLong();
    private volatile long minNanos;
    private volatile long maxNanos;

    /**
     * @param listenHost where the relays listen (the bridge's address)
     * @param nodes      node id to where its Raft server listens
     */
    DelayRelays(String listenHost, Map<String, InetSocketAddress> nodes) throws IOException {
        try {
            for (Map.Entry<String, InetSocketAddress> n : nodes.entrySet()) {
                nodeByAddress.put(n.getValue().getAddress(), n.getKey());
                relays.put(n.getKey(), new Relay(n.getKey(), new InetSocketAddress(listenHost, 0), n.getValue()));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** @return node id to the address the others dial: its relay */
    Map<String, InetSocketAddress> advertised() {
        Map<String, InetSocketAddress> out = new LinkedHashMap<>();
        relays.forEach((id, r) -> out.put(id, (InetSocketAddress) r.server.getLocalSocketAddress()));
        return out;
    }

    /** From now on, every link of the node holds each chunk for {@code minMillis} to {@code maxMillis}. */
    void delay(String id, long minMillis, long maxMillis) {
        minNanos = TimeUnit.MILLISECONDS.toNanos(minMillis);
        maxNanos = TimeUnit.MILLISECONDS.toNanos(maxMillis);
        delayed.add(id);
    }

    /** The node's links forward at once again (what they hold still goes out in order). */
    void heal(String id) {
        delayed.remove(id);
    }

    /** @return how many chunks the relays forwarded, and how many of them they held back (a fault's evidence) */
    long[] chunks() {
        return new long[] {chunks.get(), held.get()};
    }

    private long delayNanos(String target, String source) {
        chunks.incrementAndGet();
        if (!delayed.contains(target) && (source == null || !delayed.contains(source))) {
            return 0;
        }
        held.incrementAndGet();
        long min = minNanos;
        long max = maxNanos;
        return max > min ? ThreadLocalRandom.current().nextLong(min, max + 1) : min;
    }

    @Override
    public void close() {
        relays.values().forEach(Relay::close);
    }

    /** One node's relay: accepts, dials the node, and pumps both ways. */
    private final class Relay {
        final String id;
        final ServerSocket server;
        final InetSocketAddress target;
        final List<Socket> sockets = new ArrayList<>(); // guarded by itself
        volatile boolean closed;

        Relay(String id, InetSocketAddress listen, InetSocketAddress target) throws IOException {
            this.id = id;
            this.target = target;
            this.server = new ServerSocket();
            server.bind(listen);
            Thread accepter = new Thread(this::accept, "relay-" + id);
            accepter.setDaemon(true);
            accepter.start();
        }

        private void accept() {
            while (!closed) {
                Socket in;
                try {
                    in = server.accept();
                } catch (IOException e) {
                    return; // closed
                }
                String source = nodeByAddress.get(in.getInetAddress());
                Socket out = new Socket();
                try {
                    out.connect(target, 5_000);
                    in.setTcpNoDelay(true);
                    out.setTcpNoDelay(true);
                } catch (IOException e) {
                    closeQuietly(in);
                    closeQuietly(out);
                    continue; // the node is down: the dialler sees its connection close, as it would
                }
                synchronized (sockets) {
                    sockets.add(in);
                    sockets.add(out);
                }
                java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger(2);
                pump(in, out, source, open, "relay-" + id + "-in");
                pump(out, in, source, open, "relay-" + id + "-out");
            }
        }

        /** Copies one direction: a reader stamps each chunk with when it may go, a writer sends it then. */
        private void pump(Socket from, Socket to, String source, java.util.concurrent.atomic.AtomicInteger open,
                          String name) {
            BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                long last = 0;
                byte[] buffer = new byte[64 * 1024];
                try {
                    InputStream in = from.getInputStream();
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        // never before the chunk ahead of it: the bytes of one direction stay in order
                        long due = Math.max(last, System.nanoTime() + delayNanos(id, source));
                        last = due;
                        queue.add(new Chunk(java.util.Arrays.copyOf(buffer, n), due));
                    }
                } catch (IOException e) {
                    // the connection ended
                }
                queue.add(Chunk.END);
            }, name + "-read");
            Thread writer = new Thread(() -> {
                try {
                    OutputStream out = to.getOutputStream();
                    while (true) {
                        Chunk c = queue.take();
                        if (c == Chunk.END) {
                            to.shutdownOutput(); // a half-close goes through; the other direction carries on
                            if (open.decrementAndGet() == 0) {
                                closeQuietly(from);
                                closeQuietly(to);
                            }
                            return;
                        }
                        for (long wait; (wait = c.due - System.nanoTime()) > 0; ) {
                            LockSupport.parkNanos(wait); // the chunk's delay is the fault, not a wait for a result
                        }
                        out.write(c.bytes);
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    closeQuietly(from); // the connection broke: both directions end
                    closeQuietly(to);
                }
            }, name + "-write");
            reader.setDaemon(true);
            writer.setDaemon(true);
            reader.start();
            writer.start();
        }

        void close() {
            closed = true;
            closeQuietly(server);
            synchronized (sockets) {
                sockets.forEach(DelayRelays::closeQuietly);
            }
        }
    }

    private record Chunk(byte[] bytes, long due) {
        static final Chunk END = new Chunk(new byte[0], 0);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing
        }
    }
}
