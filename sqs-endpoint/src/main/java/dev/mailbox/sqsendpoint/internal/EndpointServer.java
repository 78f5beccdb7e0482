package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running endpoint: the JDK's HTTP server, a pool of request threads (a long poll holds one for its wait),
 * and for each request: authenticate, parse by protocol, authorize, run, answer. What is logged about a request
 * is its id, action, queue, principal, status and time, never a body, a signature or a key's secret.
 */
public final class EndpointServer implements SqsEndpoint {

    private static final Logger LOG = LoggerFactory.getLogger(EndpointServer.class);

    static {
        // The JDK's server writes a response's headers and body in separate small writes; with Nagle's algorithm
        // on, the body waits for the client's delayed ACK of the headers (40 ms on Linux), which made every SQS
        // call take ~45 ms. The server reads this property once, when its configuration class loads, so it is
        // set before the first server of this JVM is created, unless the application chose a value itself.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }
    /** Larger than any valid request (a batch of ten 1 MiB-limited messages is at most 1 MiB of bodies). */
    private static final int MAX_REQUEST_BYTES = 4 * 1024 * 1024;

    private final Settings settings;
    private final HttpServer server;
    private final ThreadPoolExecutor pool;
    private final @Nullable SigV4 sigV4;
    private final Actions actions;
    private final Wire json;
    private final Wire query = new QueryWire();
    private final InetSocketAddress address;
    private volatile boolean closed;

    /**
     * Binds and starts.
     *
     * @param settings checked settings
     * @throws MailboxUnavailableException if the address cannot be bound
     */
    public EndpointServer(Settings settings) {
        this.settings = settings;
        ObjectMapper mapper = new ObjectMapper();
        this.json = new JsonWire(mapper);
        Clock clock = Clock.systemUTC();
        this.sigV4 = settings.credentials() == null ? null : new SigV4(settings.credentials(), clock);
        this.actions = new Actions(new Context(settings.queues(), settings.authorizer(), settings.region(), settings.accountId(), clock, mapper));
        AtomicInteger threads = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(settings.maxConcurrentRequests(), settings.maxConcurrentRequests(), 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "sqs-endpoint-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        try {
            if (settings.tls() != null) {
                HttpsServer https = HttpsServer.create(settings.listen(), 1024);
                https.setHttpsConfigurator(new HttpsConfigurator(settings.tls()));
                this.server = https;
            } else {
                this.server = HttpServer.create(settings.listen(), 1024);
            }
        } catch (IOException e) {
            pool.shutdownNow();
            throw new MailboxUnavailableException("the SQS endpoint cannot listen on " + settings.listen() + ": "
                    + e.getMessage(), false, e);
        }
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
        this.address = server.getAddress();
        if (sigV4 == null) {
            boolean loopback = address.getAddress() != null && address.getAddress().isLoopbackAddress();
            if (loopback) {
                LOG.info("SQS endpoint on {} accepts requests without authentication (loopback only)", url());
            } else {
                LOG.warn("SQS endpoint on {} accepts requests WITHOUT AUTHENTICATION on a non-loopback address:"
                        + " anyone who can reach it can read, send and delete messages; give it credentials", url());
            }
        } else {
            LOG.info("SQS endpoint listening on {}", url());
        }
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public URI url() {
        String host = address.getAddress() == null || address.getAddress().isAnyLocalAddress()
                ? "127.0.0.1" : address.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return URI.create((settings.tls() != null ? "https" : "http") + "://" + host + ":" + address.getPort());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // stop() waits for exchanges under way up to the delay; long polls are then cut short by interrupting
        // their threads (a receive interrupted while waiting takes no message)
        server.stop(1);
        pool.shutdownNow();
        LOG.info("SQS endpoint on {} stopped", url());
    }

    @Override
    public String toString() {
        return "SqsEndpoint[" + url() + "]";
    }

    // ---- one request

    private void handle(HttpExchange exchange) throws IOException {
        long start = System.nanoTime();
        String requestId = UUID.randomUUID().toString();
        RawRequest request = null;
        Wire wire = query;
        String action = "?";
        String principal = "-";
        Wire.Answer answer;
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readNBytes(MAX_REQUEST_BYTES + 1);
            request = new RawRequest(exchange.getRequestMethod().toUpperCase(Locale.ROOT),
                    exchange.getRequestURI().getRawPath() == null ? "/" : exchange.getRequestURI().getRawPath(),
                    exchange.getRequestURI().getRawQuery(), headers(exchange), body);
            wire = request.header("x-amz-target") != null ? json : query;
            if (body.length > MAX_REQUEST_BYTES) {
                throw new SqsError(ErrorCode.REQUEST_TOO_LARGE, "The request is larger than " + MAX_REQUEST_BYTES
                        + " bytes.");
            }
            principal = sigV4 == null ? ANONYMOUS : sigV4.verify(request).principal();
            Wire.Call call = wire.parse(request);
            action = call.action();
            Context.Request r = new Context.Request(call.params(), baseUrl(exchange, request), pathQueue(request),
                    principal);
            String queue = actions.queueOf(action, r);
            if (!settings.authorizer().allows(principal, action, queue)) {
                throw new SqsError(ErrorCode.ACCESS_DENIED, "User: " + principal + " is not authorized to perform: sqs:"
                        + action + (queue == null ? "" : " on resource: " + queue));
            }
            ObjectNode result = actions.run(action, r);
            answer = wire.success(action, result, requestId);
        } catch (SqsError e) {
            answer = wire.error(e, requestId);
        } catch (dev.mailbox.api.MailboxAccessDeniedException e) {
            // the directory's mailbox checked the caller's rights itself (a node's data plane) and refused
            answer = wire.error(new SqsError(ErrorCode.ACCESS_DENIED, "User: " + principal + " is not authorized to"
                    + " perform: sqs:" + action), requestId);
            LOG.debug("request {} ({}) by {}: refused by the mailbox: {}", requestId, action, principal, e.getMessage());
        } catch (MailboxUnavailableException e) {
            answer = wire.error(new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The service is unavailable. Please"
                    + " retry."), requestId);
            LOG.debug("request {} ({}): a mailbox is unavailable: {}", requestId, action, e.toString());
        } catch (RuntimeException e) {
            answer = wire.error(new SqsError(ErrorCode.INTERNAL_FAILURE, "The request processing has failed because"
                    + " of an unknown error, exception or failure. Request id " + requestId + "."), requestId);
            LOG.warn("request {} ({}) failed", requestId, action, e);
        }
        respond(exchange, answer);
        if (LOG.isDebugEnabled()) {
            LOG.debug("request {} {} by {}: {} in {} ms", requestId, action, principal, answer.status(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    private static void respond(HttpExchange exchange, Wire.Answer answer) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", answer.contentType());
        answer.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
        exchange.sendResponseHeaders(answer.status(), answer.body().length == 0 ? -1 : answer.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(answer.body());
        }
    }

    private static Map<String, List<String>> headers(HttpExchange exchange) {
        Map<String, List<String>> out = new HashMap<>();
        exchange.getRequestHeaders().forEach((k, v) -> out.computeIfAbsent(k.toLowerCase(Locale.ROOT),
                n -> new ArrayList<>()).addAll(v));
        return out;
    }

    /** The base of queue URLs: the advertised one, else the scheme and Host this client used, so URLs lead back here. */
    private String baseUrl(HttpExchange exchange, RawRequest request) {
        if (settings.advertisedUrl() != null) {
            String s = settings.advertisedUrl().toString();
            return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
        }
        String host = request.header("host");
        if (host == null || host.isEmpty() || !host.matches("[A-Za-z0-9.\\-:\\[\\]]+")) {
            host = url().getAuthority();
        }
        return (exchange instanceof com.sun.net.httpserver.HttpsExchange ? "https" : "http") + "://" + host;
    }

    /** @return the queue a request's path names ({@code /ACCOUNT/NAME}), or null */
    private static @Nullable String pathQueue(RawRequest request) {
        String[] segments = request.rawPath().split("/");
        if (segments.length == 3 && segments[1].matches("[0-9]{12}") && !segments[2].isEmpty()) {
            return segments[2];
        }
        return null;
    }
}
