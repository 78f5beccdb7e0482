package dev.mailbox.http.internal;

import dev.mailbox.http.BodyBudget;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpLimits;
import dev.mailbox.http.HttpListener;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link HttpListener} on Jetty's core server (no servlets): a {@link GuardedConnector} that caps connections, a
 * sweep that enforces the header deadline, and one {@link Exchange} per request for the rest.
 */
public final class JettyListener implements HttpListener {

    private static final Logger LOG = LoggerFactory.getLogger(JettyListener.class);
    /** Answers from the headers: a body sent to a path nobody serves is never read. */
    private static final HttpHandler NOT_FOUND = new HttpHandler() {
        @Override
        public HttpResponse admit(HttpRequest head) {
            return HttpResponse.text(404, "not found: " + head.rawPath() + "\n");
        }

        @Override
        public void handle(HttpRequest request, dev.mailbox.http.HttpResponder responder) {
            responder.respond(admit(request));
        }
    };

    private final String name;
    private final HttpLimits limits;
    private final BodyBudget budget;
    private final boolean secure;
    private final Map<String, HttpHandler> exact;
    private final List<Map.Entry<String, HttpHandler>> prefixes;
    private final HttpHandler fallback;
    private final Server server;
    private final GuardedConnector connector;
    private final Scheduler scheduler;
    private final ThreadPoolExecutor workers;
    private final Semaphore workerSlots;
    private final InetSocketAddress address;
    private volatile boolean closed;
    /** When the sweep last looked whether clients of requests being handled are still there (System.nanoTime). */
    private long lastProbe = System.nanoTime();
    private static final long PROBE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);

    /**
     * Binds and starts (see {@link HttpListener.Builder}).
     *
     * @throws UncheckedIOException if the address cannot be bound
     */
    public JettyListener(String name, InetSocketAddress listen, @Nullable SSLContext tls, HttpLimits limits,
                         BodyBudget budget, Map<String, HttpHandler> routes, @Nullable HttpHandler fallback) {
        this.name = name;
        this.limits = limits;
        this.budget = budget;
        this.secure = tls != null;
        this.exact = new java.util.HashMap<>();
        List<Map.Entry<String, HttpHandler>> byPrefix = new ArrayList<>();
        routes.forEach((path, handler) -> {
            if (path.endsWith("/")) {
                byPrefix.add(Map.entry(path, handler));
            } else {
                exact.put(path, handler);
            }
        });
        byPrefix.sort(Comparator.comparingInt((Map.Entry<String, HttpHandler> e) -> e.getKey().length()).reversed());
        this.prefixes = List.copyOf(byPrefix);
        this.fallback = fallback != null ? fallback : NOT_FOUND;

        AtomicInteger n = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(limits.workerThreads(), limits.workerThreads(), 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + "-http-worker-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        workers.allowCoreThreadTimeOut(true);
        // a request holds a slot from before its body is read until its handler returns: what cannot get one is
        // refused at once, so the queue in front of the workers never grows past the limit
        this.workerSlots = new Semaphore(limits.workerThreads() + limits.workerQueue());

        // I/O only: handlers run on the workers, so these threads never wait for a client or a handler
        QueuedThreadPool io = new QueuedThreadPool(8, 2, 60_000);
        io.setName(name + "-http");
        io.setDaemon(true);
        io.setReservedThreads(0);
        ScheduledExecutorScheduler timer = new ScheduledExecutorScheduler(name + "-http-timer", true);
        this.scheduler = timer;
        this.server = new Server(io, timer, null);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setRequestHeaderSize(limits.maxHeaderBytes());
        if (tls != null) {
            // the Host a client names need not be in the certificate (a node behind a load balancer, a client that
            // dials an address): as with any HTTPS server, the client checks the certificate, not the server
            SecureRequestCustomizer secureRequests = new SecureRequestCustomizer();
            secureRequests.setSniHostCheck(false);
            http.addCustomizer(secureRequests);
        }
        HttpConnectionFactory h1 = new HttpConnectionFactory(http);
        ConnectionFactory[] factories;
        if (tls != null) {
            SslContextFactory.Server ssl = new SslContextFactory.Server();
            ssl.setSslContext(tls);
            factories = new ConnectionFactory[] {new SslConnectionFactory(ssl, h1.getProtocol()), h1};
        } else {
            factories = new ConnectionFactory[] {h1};
        }
        this.connector = new GuardedConnector(server, name, limits, secure, factories);
        connector.setHost(listen.getAddress() != null ? listen.getAddress().getHostAddress() : listen.getHostString());
        connector.setPort(listen.getPort());
        connector.setIdleTimeout(limits.idleTimeout().toMillis());
        connector.setAcceptQueueSize(1024);
        connector.setReuseAddress(true);
        connector.setAcceptedTcpNoDelay(true);
        server.addConnector(connector);
        server.setHandler(new Dispatch());
        try {
            server.start();
        } catch (Exception e) {
            stopQuietly();
            throw new UncheckedIOException("the " + name + " listener cannot listen on " + listen + ": " + reason(e),
                    e instanceof IOException io2 ? io2 : new IOException(e));
        }
        this.address = new InetSocketAddress(listen.getAddress() != null ? listen.getAddress()
                : new InetSocketAddress(listen.getHostString(), 0).getAddress(), connector.getLocalPort());
        sweepLater();
        LOG.debug("{} listener on {} ({}), {}", name, url(), secure ? "TLS" : "plaintext", limits);
    }

    private static String reason(Throwable e) {
        String message = e.getMessage();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.BindException || t.getCause() == null) {
                message = t.getMessage();
                break;
            }
        }
        return message == null ? e.toString() : message;
    }

    private void sweepLater() {
        long headerNanos = limits.headerTimeout().toNanos();
        long every = Math.max(10, Math.min(250, limits.headerTimeout().toMillis() / 4));
        scheduler.schedule(() -> {
            if (closed) {
                return;
            }
            try {
                // clients of requests being handled are looked at about once a second: a read each, and thousands
                // of long polls may be waiting
                long now = System.nanoTime();
                boolean probe = now - lastProbe >= PROBE_EVERY_NANOS;
                if (probe) {
                    lastProbe = now;
                }
                connector.sweep(headerNanos, probe);
            } finally {
                sweepLater();
            }
        }, every, TimeUnit.MILLISECONDS);
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
        return URI.create((secure ? "https" : "http") + "://" + host + ":" + address.getPort());
    }

    @Override
    public boolean secure() {
        return secure;
    }

    /** @return the connections open now (for tests and meters) */
    public int openConnections() {
        return connector.openConnections();
    }

    /** @return the connections open now with no request being served on them (for tests) */
    public int freeConnections() {
        return connector.freeConnections();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // no new connections; requests already with a worker get up to a second to be answered, new ones on open
        // connections are refused as the workers no longer take any; then everything is closed
        connector.setAccepting(false);
        workers.shutdown();
        try {
            workers.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopQuietly();
        workers.shutdownNow();
    }

    private void stopQuietly() {
        try {
            server.stop();
        } catch (Exception e) {
            LOG.debug("{} listener: stopping: {}", name, e.toString());
        }
    }

    @Override
    public String toString() {
        return "HttpListener[" + name + " " + (address == null ? "?" : url()) + "]";
    }

    HttpHandler route(String path) {
        HttpHandler h = exact.get(path);
        if (h != null) {
            return h;
        }
        for (Map.Entry<String, HttpHandler> p : prefixes) {
            if (path.startsWith(p.getKey())) {
                return p.getValue();
            }
        }
        return fallback;
    }

    /** Jetty's one handler: every request becomes an {@link Exchange}. */
    private final class Dispatch extends Handler.Abstract.NonBlocking {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            GuardedEndPoint socket = socket(request);
            if (socket != null) {
                socket.serving();
            }
            new Exchange(JettyListener.this, request, response, callback, socket).start();
            return true;
        }
    }

    private static @Nullable GuardedEndPoint socket(Request request) {
        EndPoint e = request.getConnectionMetaData().getConnection().getEndPoint();
        while (e instanceof EndPoint.Wrapper w) {
            e = w.unwrap();
        }
        return e instanceof GuardedEndPoint g ? g : null;
    }

    // ---- what an Exchange needs

    String name() {
        return name;
    }

    HttpLimits limits() {
        return limits;
    }

    BodyBudget budget() {
        return budget;
    }

    Scheduler scheduler() {
        return scheduler;
    }

    Semaphore workerSlots() {
        return workerSlots;
    }

    ThreadPoolExecutor workers() {
        return workers;
    }

    static HttpRequest head(Request request) {
        Map<String, List<String>> headers = new java.util.HashMap<>();
        request.getHeaders().forEach(f -> headers.computeIfAbsent(f.getLowerCaseName(), k -> new ArrayList<>())
                .add(f.getValue() == null ? "" : f.getValue()));
        java.net.SocketAddress remote = request.getConnectionMetaData().getRemoteSocketAddress();
        InetSocketAddress from = remote instanceof InetSocketAddress i ? i : new InetSocketAddress(0);
        String path = request.getHttpURI().getPath();
        // Jetty answers -1 both for a chunked body and for a request that declares no body at all (a plain GET);
        // HTTP/1.1 says only a Transfer-Encoding makes a body without a Content-Length, so the latter has none
        long length = request.getLength();
        if (length < 0 && !headers.containsKey("transfer-encoding")) {
            length = 0;
        }
        return new HttpRequest(request.getMethod(), path == null || path.isEmpty() ? "/" : path,
                request.getHttpURI().getQuery(), headers, from, request.isSecure(), length, new byte[0]);
    }
}
