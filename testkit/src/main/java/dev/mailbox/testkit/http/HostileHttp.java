package dev.mailbox.testkit.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.jspecify.annotations.Nullable;

/**
 * Raw HTTP/1.1 for tests that play a hostile client: connections from chosen loopback addresses (Linux routes all
 * of 127.0.0.0/8 to the loopback interface, so one test can be many clients), over TLS or not, requests written
 * by hand, answers read by hand. Every read has a timeout; nothing here leaves a thread behind.
 */
public final class HostileHttp {

    private HostileHttp() {
    }

    /**
     * @param n 0 or more
     * @return the loopback address {@code 127.0.N/256.N%256+2} (127.0.0.2 for 0): a client address of its own
     */
    public static InetAddress loopback(int n) {
        if (n < 0 || n > 60_000) {
            throw new IllegalArgumentException("n must be 0 to 60000, was " + n);
        }
        int host = n + 2;
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, (byte) (host / 256), (byte) (host % 256)});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Connects from {@code from} (any port) to the server; with a TLS context, completes the handshake too.
     *
     * @param server where to connect
     * @param from   the local address to connect from (a {@link #loopback} address)
     * @param tls    a client context trusting the server's certificate, or null for plaintext
     * @return the connected socket, reads timing out after 10 s
     * @throws IOException if the connection or the handshake fails (a server that refuses at accept, say)
     */
    public static Socket connect(InetSocketAddress server, InetAddress from, @Nullable SSLContext tls)
            throws IOException {
        Socket plain = new Socket();
        try {
            plain.bind(new InetSocketAddress(from, 0));
            plain.connect(server, 5_000);
            plain.setSoTimeout(10_000);
            plain.setTcpNoDelay(true);
            if (tls == null) {
                return plain;
            }
            SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(plain, server.getHostString(),
                    server.getPort(), true);
            s.setSoTimeout(10_000);
            s.startHandshake();
            return s;
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /**
     * Reads one answer: its head and as much body as its {@code Content-Length} says (or to the end of the stream).
     *
     * @param socket  a connection a request was written on
     * @param timeout how long to wait for all of it
     * @return the answer as text, or "" if the connection ended before any of it
     * @throws SocketTimeoutException if it did not come within the timeout
     */
    public static String readAnswer(Socket socket, Duration timeout) throws IOException {
        socket.setSoTimeout((int) Math.max(1, timeout.toMillis()));
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        int headEnd = -1;
        long length = -1;
        long deadline = System.nanoTime() + timeout.toNanos();
        byte[] buffer = new byte[8192];
        while (true) {
            if (headEnd >= 0 && length >= 0 && seen.size() - headEnd >= length) {
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new SocketTimeoutException("no complete answer within " + timeout + ": " + seen);
            }
            int n;
            try {
                n = in.read(buffer);
            } catch (java.net.SocketException reset) {
                break; // reset by the server after its answer, or before any
            }
            if (n < 0) {
                break;
            }
            seen.write(buffer, 0, n);
            if (headEnd < 0) {
                String text = seen.toString(StandardCharsets.ISO_8859_1);
                int end = text.indexOf("\r\n\r\n");
                if (end >= 0) {
                    headEnd = end + 4;
                    for (String line : text.substring(0, end).split("\r\n")) {
                        if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                            length = Long.parseLong(line.substring(15).trim());
                        }
                    }
                }
            }
        }
        return seen.toString(StandardCharsets.UTF_8);
    }

    /** @return the status code of an answer {@link #readAnswer} read, or 0 if there was none */
    public static int status(String answer) {
        if (!answer.startsWith("HTTP/1.")) {
            return 0;
        }
        return Integer.parseInt(answer.substring(9, 12));
    }

    /** Writes text (ISO-8859-1) to the socket and flushes it. */
    public static void write(Socket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /**
     * Many connections that each send a request line and then one more header line every interval, never ending
     * their headers: a slowloris attack, driven by one thread. {@link #open()} counts the connections whose last
     * write went through (a server that closed one makes the next write fail, sooner or later).
     */
    public static final class SlowClients implements AutoCloseable {
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        private final AtomicInteger refused = new AtomicInteger();
        private final Thread driver;
        private volatile boolean stop;

        private SlowClients(InetSocketAddress server, @Nullable SSLContext tls, int connections, List<InetAddress> from,
                            Duration every) {
            for (int i = 0; i < connections; i++) {
                try {
                    Socket s = connect(server, from.get(i % from.size()), tls);
                    write(s, "POST / HTTP/1.1\r\nHost: slow\r\n");
                    sockets.add(s);
                } catch (IOException e) {
                    refused.incrementAndGet();
                }
            }
            this.driver = new Thread(() -> {
                int line = 0;
                while (!stop) {
                    try {
                        Thread.sleep(every.toMillis()); // the attack's pace: one line per interval
                    } catch (InterruptedException e) {
                        return;
                    }
                    line++;
                    for (Socket s : sockets) {
                        try {
                            write(s, "X-Slow-" + line + ": still sending\r\n");
                        } catch (IOException e) {
                            sockets.remove(s);
                            closeQuietly(s);
                        }
                    }
                }
            }, "slow-clients");
            driver.setDaemon(true);
            driver.start();
        }

        /**
         * @param server      where to connect
         * @param tls         a client context trusting the server, or null for plaintext
         * @param connections how many to open
         * @param from        the addresses to connect from, in turn
         * @param every       how often each sends one more header line
         * @return the connections, trickling
         */
        public static SlowClients open(InetSocketAddress server, @Nullable SSLContext tls, int connections,
                                       List<InetAddress> from, Duration every) {
            return new SlowClients(server, tls, connections, new ArrayList<>(from), every);
        }

        /** @return how many are still open, as far as their writes tell */
        public int open() {
            return sockets.size();
        }

        /** @return how many could not even connect (or finish a TLS handshake) */
        public int refused() {
            return refused.get();
        }

        @Override
        public void close() {
            stop = true;
            driver.interrupt();
            try {
                driver.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sockets.forEach(SlowClients::closeQuietly);
            sockets.clear();
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
    }
}
