package dev.mailbox.cli;

import dev.mailbox.console.Console;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpLimits;
import dev.mailbox.http.HttpListener;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponder;
import dev.mailbox.http.HttpResponse;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The operations port of the processes {@code mailboxctl} starts: a Prometheus registry at {@code GET /metrics}
 * (the library nodes only take a {@code MeterRegistry}, and the application, here the CLI, chooses how to expose
 * it), the probes {@code /health/live} and {@code /health/ready} (see {@link ProcessHealth}), and, when given one,
 * the web console at {@code /ui/}. It is an {@link HttpListener} (HTTPS with the server's certificate), so it holds
 * against slow and greedy clients as the SQS endpoint does, with limits sized for a few scrapers, probes and
 * console users: {@value #MAX_CONNECTIONS} connections ({@value #MAX_PER_ADDRESS} per address), request headers
 * within {@link #READ_TIMEOUT_MILLIS}, no body, {@value #WORKERS} worker threads (a console redrive may hold one
 * for a few seconds). Any other path is 404, any other method 405, both answered from the headers. Beyond
 * loopback without TLS it warns, or with {@code --require-security} refuses to start.
 */
final class MetricsEndpoint implements AutoCloseable {

    /** How long a client may take to send its request line and headers. */
    static final int READ_TIMEOUT_MILLIS = 5_000;
    static final int MAX_CONNECTIONS = 512;
    static final int MAX_PER_ADDRESS = 32;
    static final int WORKERS = 8;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HealthProbes probes = new HealthProbes();
    private final boolean console;
    private final HttpListener listener;

    private MetricsEndpoint(InetSocketAddress address, @Nullable SSLContext tls, @Nullable Console console) {
        HttpLimits limits = HttpLimits.defaults().withMaxConnections(MAX_CONNECTIONS)
                .withMaxConnectionsPerAddress(MAX_PER_ADDRESS)
                .withHeaderTimeout(Duration.ofMillis(READ_TIMEOUT_MILLIS)).withBodyTimeout(Duration.ofSeconds(5))
                .withMaxBodyBytes(0).withWorkers(WORKERS, 64);
        HttpListener.Builder b = HttpListener.builder("metrics").listen(address).tls(tls).limits(limits)
                .route("/metrics", new Scrape())
                .route(HealthProbes.LIVE, probes).route(HealthProbes.READY, probes);
        if (console != null) {
            Console.mount(b, console);
        }
        this.console = console != null;
        this.listener = b.start();
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
    static MetricsEndpoint start(InetSocketAddress address, @Nullable SSLContext tls) {
        return start(address, tls, false);
    }

    /**
     * @param address         where to listen; port 0 picks a free one
     * @param tls             serve HTTPS with this context, or null for HTTP
     * @param requireSecurity whether plaintext beyond loopback is refused (else warned about)
     * @return the running endpoint
     * @throws IllegalArgumentException for plaintext beyond loopback under {@code --require-security}
     * @throws java.io.UncheckedIOException if the address cannot be bound, saying why
     */
    static MetricsEndpoint start(InetSocketAddress address, @Nullable SSLContext tls, boolean requireSecurity) {
        return start(address, tls, requireSecurity, null);
    }

    /**
     * @param address         where to listen; port 0 picks a free one
     * @param tls             serve HTTPS with this context, or null for HTTP
     * @param requireSecurity whether plaintext beyond loopback is refused (else warned about)
     * @param console         the web console to serve at {@code /ui/}, or null for none
     * @return the running endpoint
     * @throws IllegalArgumentException for plaintext beyond loopback under {@code --require-security}
     * @throws java.io.UncheckedIOException if the address cannot be bound, saying why
     */
    static MetricsEndpoint start(InetSocketAddress address, @Nullable SSLContext tls, boolean requireSecurity,
                                 @Nullable Console console) {
        checkSecurity(address, tls != null, requireSecurity);
        return new MetricsEndpoint(address, tls, console);
    }

    /**
     * Starts answering the probes for the process, which starts after this endpoint (its meters go here): until
     * then {@code /health/live} answers UP ({@code starting}) and {@code /health/ready} DOWN.
     *
     * @param health what the process reports
     */
    void health(ProcessHealth health) {
        probes.serve(health);
    }

    /**
     * Checks, before anything is started, that a metrics listener at this address may serve plaintext: on loopback
     * always; elsewhere with a warning, or not at all under {@code --require-security}.
     *
     * @param address         where it will listen, or null for no metrics listener
     * @param tls             whether it will serve HTTPS
     * @param requireSecurity whether the process runs with {@code --require-security}
     * @throws IllegalArgumentException for plaintext beyond loopback under {@code --require-security}
     */
    static void checkSecurity(@Nullable InetSocketAddress address, boolean tls, boolean requireSecurity) {
        if (address == null || tls || (address.getAddress() != null ? address.getAddress().isLoopbackAddress()
                : address.getHostString().equals("localhost"))) {
            return;
        }
        String message = "the metrics listener on " + address + " would serve plaintext HTTP beyond loopback (give the"
                + " server's --tls-cert and --tls-key to serve HTTPS, or listen on 127.0.0.1)";
        if (requireSecurity) {
            throw new IllegalArgumentException("--require-security is on, so " + message);
        }
        LoggerFactory.getLogger(MetricsEndpoint.class).warn("UNSECURED: {}", message);
    }

    /** @return the registry whose meters are served */
    PrometheusMeterRegistry registry() {
        return registry;
    }

    /** @return where it listens */
    InetSocketAddress address() {
        return listener.address();
    }

    /** @return the URL it serves, {@code https://} when it has TLS */
    String url() {
        return base() + "/metrics";
    }

    /** @return the console's URL, or null when it serves none */
    @Nullable String consoleUrl() {
        return console ? base() + "/ui/" : null;
    }

    /** @return what the process start-up line says about this endpoint: the metrics, probe and console URLs */
    String describe() {
        return "metrics " + url() + ", health " + base() + "/health/{live,ready}"
                + (console ? ", console " + consoleUrl() : "");
    }

    private String base() {
        return (listener.secure() ? "https" : "http") + "://" + address().getHostString() + ":" + address().getPort();
    }

    @Override
    public void close() {
        listener.close();
        registry.close();
    }

    /**
     * GET and HEAD of /metrics; the method is checked from the headers, so a refused request's body is never read.
     * One rendering at a time: scrapes that arrive while the registry is being rendered wait and share the next
     * rendering (each answer is rendered after its request arrived). The endpoint answers anyone who reaches it, and
     * rendering every meter once per request let one client keep every worker formatting meters.
     */
    private final class Scrape implements HttpHandler {
        private final Object rendering = new Object();
        // guarded by rendering
        private long started;
        private long finished;
        private boolean running;
        private byte[] latest = new byte[0];

        @Override
        public @Nullable HttpResponse admit(HttpRequest head) {
            if (!head.method().equals("GET") && !head.method().equals("HEAD")) {
                return HttpResponse.text(405, "only GET and HEAD\n").withHeader("Allow", "GET, HEAD");
            }
            return null;
        }

        @Override
        public void handle(HttpRequest request, HttpResponder responder) {
            responder.respond(HttpResponse.of(200, "text/plain; version=0.0.4; charset=utf-8", text()));
        }

        /** @return the registry as text, rendered after this call began, by it or by a scrape beside it */
        private byte[] text() {
            long mine;
            synchronized (rendering) {
                long needed = started + 1;
                while (true) {
                    if (finished >= needed) {
                        return latest;
                    }
                    if (!running) {
                        running = true;
                        mine = ++started;
                        break;
                    }
                    try {
                        rendering.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted while waiting for the registry's text", e);
                    }
                }
            }
            byte[] text = null;
            try {
                text = registry.scrape().getBytes(StandardCharsets.UTF_8);
                return text;
            } finally {
                synchronized (rendering) {
                    running = false;
                    if (text != null) {
                        latest = text;
                        finished = mine;
                    }
                    rendering.notifyAll();
                }
            }
        }
    }
}
