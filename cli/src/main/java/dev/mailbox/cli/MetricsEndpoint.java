package dev.mailbox.cli;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves a Prometheus registry at {@code GET /metrics} (and {@code HEAD}) for the processes {@code mailboxctl}
 * starts: the library nodes only take a {@code MeterRegistry}, and the application (here, the CLI) chooses
 * how to expose it. Each connection is answered once and closed; scrapes are served concurrently (up to
 * four at a time, more wait for a thread), a client that does not finish its request in
 * {@link #READ_TIMEOUT_MILLIS} is dropped, any other path is 404 and any other method 405.
 */
final class MetricsEndpoint implements AutoCloseable {

    /** How long a client may take to send its request line and headers. */
    static final int READ_TIMEOUT_MILLIS = 5_000;
    private static final int MAX_HEADER_LINES = 100;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ServerSocket socket;
    private final ExecutorService workers;
    private final Thread acceptor;
    private final boolean https;

    private MetricsEndpoint(InetSocketAddress address, javax.net.ssl.@org.jspecify.annotations.Nullable SSLContext tls)
            throws IOException {
        // with TLS, an HTTPS endpoint: the handshake happens on the first read, under the read timeout
        this.https = tls != null;
        this.socket = tls == null ? new ServerSocket() : tls.getServerSocketFactory().createServerSocket();
        socket.setReuseAddress(true);
        socket.bind(address, 64);
        AtomicInteger n = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "metrics-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.acceptor = new Thread(this::accept, "metrics-http-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * @param address where to listen; port 0 picks a free one
     * @return the running endpoint
     */
    static MetricsEndpoint start(InetSocketAddress address) {
        return start(address, null);
    }

    /**
     * @param address where to listen; port 0 picks a free one
     * @param tls     serve HTTPS with this context, or null for HTTP
     * @return the running endpoint
     */
    static MetricsEndpoint start(InetSocketAddress address, javax.net.ssl.@org.jspecify.annotations.Nullable SSLContext tls) {
        try {
            return new MetricsEndpoint(address, tls);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + address + ": " + e.getMessage(), e);
        }
    }

    /** @return the registry whose meters are served */
    PrometheusMeterRegistry registry() {
        return registry;
    }

    /** @return where it listens */
    InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    /** @return the URL it serves, {@code https://} when it has TLS */
    String url() {
        return (https ? "https" : "http") + "://" + address().getHostString() + ":" + address().getPort() + "/metrics";
    }

    private void accept() {
        while (!socket.isClosed()) {
            Socket client;
            try {
                client = socket.accept();
            } catch (IOException e) {
                return; // closed
            }
            try {
                workers.execute(() -> serve(client));
            } catch (RejectedExecutionException e) {
                closeQuietly(client);
            }
        }
    }

    private void serve(Socket client) {
        try (client) {
            client.setSoTimeout(READ_TIMEOUT_MILLIS);
            BufferedReader in = new BufferedReader(new InputStreamReader(client.getInputStream(),
                    StandardCharsets.ISO_8859_1));
            String request = in.readLine();
            if (request == null) {
                return;
            }
            for (int i = 0; i < MAX_HEADER_LINES; i++) {
                String header = in.readLine();
                if (header == null || header.isEmpty()) {
                    break;
                }
            }
            String[] parts = request.split(" ");
            String method = parts[0];
            String path = parts.length > 1 ? parts[1] : "";
            int q = path.indexOf('?');
            if (q >= 0) {
                path = path.substring(0, q);
            }
            OutputStream out = client.getOutputStream();
            if (!path.equals("/metrics")) {
                respond(out, 404, "Not Found", "text/plain", "not found: only /metrics is served\n", true);
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                respond(out, 405, "Method Not Allowed", "text/plain", "only GET and HEAD\n", true);
            } else {
                respond(out, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", registry.scrape(),
                        method.equals("GET"));
            }
        } catch (SocketException e) {
            // a slow or vanished client: its connection is closed, the others are unaffected
        } catch (IOException e) {
            // same
        }
    }

    private static void respond(OutputStream out, int code, String reason, String type, String body, boolean withBody)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + code + " " + reason + "\r\nContent-Type: " + type + "\r\nContent-Length: "
                + bytes.length + "\r\nConnection: close\r\n" + (code == 405 ? "Allow: GET, HEAD\r\n" : "") + "\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        if (withBody) {
            out.write(bytes);
        }
        out.flush();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing
        }
        workers.shutdownNow();
        registry.close();
    }
}
