package dev.mailbox.console;

import dev.mailbox.console.internal.Api;
import dev.mailbox.console.internal.RateLimit;
import dev.mailbox.console.internal.StaticFiles;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpListener;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponder;
import dev.mailbox.http.HttpResponse;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The web console: an {@link HttpHandler} that serves a small page (static HTML, CSS and JavaScript, no build
 * step) at {@code /ui/} and the JSON it polls at {@code /ui/api/...}, on the listener a process already has for
 * its metrics. Mount it with {@link #mount}:
 *
 * <pre>{@code
 * Console console = Console.builder().access(access.forConsole()).build();
 * HttpListener metrics = Console.mount(HttpListener.builder("metrics").route("/metrics", scrape), console).start();
 * MailboxNode node = ...start();
 * console.serve(node.consoleSource());   // until then /ui answers 503
 * }</pre>
 *
 * <p><b>What it shows.</b> The coordinators (members, leader, term, applied and committed index, health), the
 * namespaces and their lease policies, the nodes, the leases (holder, epoch, time left where this process can
 * tell) and routes, and on a node its mailboxes: queued, in flight, delayed, oldest age and the dead-letter
 * mailbox's depth. It polls every two seconds while the tab is visible. It can peek at messages without receiving
 * them, purge a mailbox and redrive a dead-letter mailbox into another: see {@link ConsoleAccess} for who may.
 *
 * <p><b>Bounds.</b> Connections, request sizes and time are the listener's ({@link dev.mailbox.http.HttpLimits});
 * the console adds its own: API calls run on {@value #CALL_THREADS} threads of its own with up to
 * {@value #CALLS_WAITING} waiting (then 503), never on the listener's workers, so calls that wait on an unreachable
 * coordinator or a slow backend never hold up the metrics and health probes sharing the listener; at most
 * {@value dev.mailbox.console.internal.RateLimit#REQUESTS} requests per
 * {@value dev.mailbox.console.internal.RateLimit#WINDOW_SECONDS} seconds from one client (then 429), lists
 * of at most {@value dev.mailbox.console.internal.Api#MAX_PAGE} rows a page (mailboxes
 * {@value dev.mailbox.console.internal.Api#MAX_MAILBOX_PAGE}, each counted by its backend), peeks of at most
 * {@value dev.mailbox.console.internal.Api#MAX_PEEK} messages with each body cut to
 * {@value dev.mailbox.console.internal.Api#MAX_BODY_PREVIEW} bytes and each attribute value to
 * {@value dev.mailbox.console.internal.Api#MAX_ATTRIBUTE_PREVIEW} characters, and redrives of at most
 * {@value dev.mailbox.console.internal.Api#MAX_REDRIVE} messages or
 * {@value dev.mailbox.console.internal.Api#REDRIVE_SECONDS} seconds a request. Actions take their arguments in the
 * query string and need no body, so the listener may refuse every body. A state-changing request must be a POST
 * carrying the {@code X-Mailbox-Console} header, which a form on another site cannot send.
 *
 * <p>Thread-safe.
 */
public final class Console implements HttpHandler {

    /** Threads that run API calls, each of which may wait on a coordinator or a backend. */
    public static final int CALL_THREADS = 4;
    /** API calls that may wait for one of those threads; past them, 503. */
    public static final int CALLS_WAITING = 32;

    private final ConsoleAccess access;
    private final AtomicReference<@Nullable Api> api = new AtomicReference<>();
    private final RateLimit rateLimit = new RateLimit();
    private final Semaphore callSlots = new Semaphore(CALL_THREADS + CALLS_WAITING);
    private final ThreadPoolExecutor calls;

    private Console(Builder b) {
        this.access = b.access;
        AtomicInteger n = new AtomicInteger();
        this.calls = new ThreadPoolExecutor(CALL_THREADS, CALL_THREADS, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "console-call-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        // idle, they go: a console has no close of its own, its listener's is all the process calls
        calls.allowCoreThreadTimeOut(true);
        if (b.source != null) {
            serve(b.source);
        }
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Routes {@code /ui} and everything under {@code /ui/} to the console.
     *
     * @param listener the listener's builder
     * @param console  the console
     * @return the builder
     */
    public static HttpListener.Builder mount(HttpListener.Builder listener, Console console) {
        return listener.route("/ui", console).route("/ui/", console);
    }

    /**
     * Starts showing a process: until this is called the console answers {@code 503}, so it can be mounted on a
     * listener started before the process it shows (a metrics listener the process's meters go to).
     *
     * @param source what to show
     * @return this console
     * @throws IllegalStateException if it shows a source already
     */
    public Console serve(ConsoleSource source) {
        Objects.requireNonNull(source, "source");
        if (!api.compareAndSet(null, new Api(source, access))) {
            throw new IllegalStateException("the console shows " + Objects.requireNonNull(api.get()).source().kind()
                    + " " + Objects.requireNonNull(api.get()).source().id() + " already");
        }
        return this;
    }

    @Override
    public @Nullable HttpResponse admit(HttpRequest head) {
        if (!rateLimit.tryAcquire(head.client())) {
            return Api.error(429, "too many requests from " + head.remoteAddress().getAddress().getHostAddress()
                    + ": at most " + RateLimit.REQUESTS + " every " + RateLimit.WINDOW_SECONDS + " s")
                    .withHeader("Retry-After", Integer.toString(RateLimit.WINDOW_SECONDS));
        }
        if (head.hasBody()) { // declared or chunked: neither is read
            return Api.error(413, "the console takes no request bodies: arguments go in the query string")
                    .closingConnection();
        }
        return null;
    }

    @Override
    public void handle(HttpRequest request, HttpResponder responder) {
        String path = request.rawPath();
        if (path.equals("/ui")) {
            responder.respond(HttpResponse.text(308, "the console is at /ui/\n").withHeader("Location", "/ui/"));
            return;
        }
        if (!path.startsWith("/ui/api/")) {
            responder.respond(StaticFiles.serve(request));
            return;
        }
        Api current = api.get();
        if (current == null) {
            responder.respond(Api.error(503, "the console starts with its process: try again shortly")
                    .withHeader("Retry-After", "1"));
            return;
        }
        // an API call may wait (a coordinator out of reach, backends counting, a redrive's seconds): on threads of
        // the console's own, so that the listener's workers stay free for the metrics and probes beside it
        if (!callSlots.tryAcquire()) {
            responder.respond(busy());
            return;
        }
        try {
            calls.execute(() -> {
                try {
                    responder.respond(current.handle(request));
                } catch (RuntimeException | Error e) {
                    responder.respond(Api.error(500, "internal error"));
                    throw e;
                } finally {
                    callSlots.release();
                }
            });
        } catch (RejectedExecutionException e) {
            callSlots.release();
            responder.respond(busy());
        }
    }

    private static HttpResponse busy() {
        return Api.error(503, "the console is busy: " + CALL_THREADS + " calls under way and " + CALLS_WAITING
                + " waiting; try again shortly").withHeader("Retry-After", "1");
    }

    /** Builds a {@link Console}. Not thread-safe. */
    public static final class Builder {
        private ConsoleAccess access = ConsoleAccess.open();
        private @Nullable ConsoleSource source;

        private Builder() {
        }

        /**
         * @param access who may see and do what; default {@link ConsoleAccess#open()} (no security: only for a
         *               process without access rules)
         * @return this builder
         */
        public Builder access(ConsoleAccess access) {
            this.access = Objects.requireNonNull(access, "access");
            return this;
        }

        /**
         * @param source what to show, if the process is running already (else see {@link Console#serve})
         * @return this builder
         */
        public Builder source(ConsoleSource source) {
            this.source = Objects.requireNonNull(source, "source");
            return this;
        }

        /** @return the console */
        public Console build() {
            return new Console(this);
        }
    }
}
