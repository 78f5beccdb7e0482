package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpListener;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponder;
import dev.mailbox.http.HttpResponse;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running endpoint: an {@link HttpListener} and, for each request, authenticate (what the headers hold before
 * the body is read, the signature over the body after), parse by protocol, check the action exists, authorize,
 * run, answer.
 *
 * <p>Receives are kept apart from every other call, so that a flood of them never holds up sends and deletes: the
 * listener's workers only sort a request by its action (from {@code X-Amz-Target} or the form's {@code Action}),
 * to a lane of threads for receives or one for the other calls ({@link Settings#limits()}' worker count), each
 * with a bounded queue (full: ServiceUnavailable). A receive that may wait (long-poll) then waits on a thread of
 * its own, one of {@link Settings#maxWaitingReceives()}; past those it does not wait but answers at once with
 * what the queue has, as a short poll. Nothing queues behind a waiting receive.
 *
 * <p>What is logged about a request is its id, action, queue, principal, status and time, never a body, a
 * signature or a key's secret.
 */
public final class EndpointServer implements SqsEndpoint, HttpHandler {

    private static final Logger LOG = LoggerFactory.getLogger(EndpointServer.class);
    /** Larger than any valid request (a batch of ten messages is at most 1 MiB of bodies, up to 3x that encoded). */
    public static final int MAX_REQUEST_BYTES = 4 * 1024 * 1024;
    /**
     * Threads that authenticate and parse receives and run those that do not wait, and how many receives may queue
     * for them: few threads, so that thousands of receives at once take a small share of the CPU from other calls.
     */
    private static final int RECEIVE_THREADS = 4;
    private static final int RECEIVE_QUEUE = 4096;
    private static final byte[] RECEIVE_ACTION = "Action=ReceiveMessage".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Settings settings;
    private final @Nullable SigV4 sigV4;
    private final Actions actions;
    private final Wire json;
    private final Wire query = new QueryWire();
    private final Lane calls;
    private final Lane receives;
    private final ThreadPoolExecutor waiting;
    private final Semaphore waitingSlots;
    private final HttpListener listener;
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
        this.actions = new Actions(new Context(settings.queues(), settings.authorizer(), settings.region(),
                settings.accountId(), clock, mapper));
        this.calls = new Lane(pool("sqs-endpoint-call-", settings.callThreads()),
                new Semaphore(settings.callThreads() + settings.callQueue()));
        this.receives = new Lane(pool("sqs-endpoint-receive-", RECEIVE_THREADS),
                new Semaphore(RECEIVE_THREADS + RECEIVE_QUEUE));
        this.waiting = pool("sqs-endpoint-waiting-receive-", settings.maxWaitingReceives());
        this.waitingSlots = new Semaphore(settings.maxWaitingReceives());
        try {
            this.listener = HttpListener.builder("sqs").listen(settings.listen()).tls(settings.tls())
                    .limits(settings.limits()).bodyBudget(settings.budget()).fallback(this).start();
        } catch (UncheckedIOException e) {
            waiting.shutdownNow();
            calls.pool().shutdownNow();
            receives.pool().shutdownNow();
            throw new MailboxUnavailableException("the SQS endpoint cannot listen on " + settings.listen() + ": "
                    + e.getMessage(), false, e);
        }
        InetSocketAddress address = listener.address();
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

    /** A pool of threads and the slots (threads and queue) that bound what it is given. */
    private record Lane(ThreadPoolExecutor pool, Semaphore slots) {
        /** @return whether the task was taken; its slot is given back when it has run (or at once if not taken) */
        boolean submit(Runnable task) {
            if (!slots.tryAcquire()) {
                return false;
            }
            try {
                pool.execute(() -> {
                    try {
                        task.run();
                    } finally {
                        slots.release();
                    }
                });
                return true;
            } catch (RejectedExecutionException closing) {
                slots.release();
                return false;
            }
        }
    }

    /** A pool of up to {@code threads} daemon threads; what it is given is bounded by a semaphore before. */
    private static ThreadPoolExecutor pool(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    @Override
    public InetSocketAddress address() {
        return listener.address();
    }

    @Override
    public URI url() {
        return listener.url();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // waiting receives are cut short by interrupting their threads (a receive interrupted while waiting takes
        // no message) and answered; then the listener gives calls under way up to a second
        waiting.shutdownNow();
        calls.pool().shutdown();
        receives.pool().shutdown();
        try {
            waiting.awaitTermination(1, TimeUnit.SECONDS);
            calls.pool().awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        listener.close();
        actions.close();
        calls.pool().shutdownNow();
        receives.pool().shutdownNow();
        LOG.info("SQS endpoint on {} stopped", url());
    }

    @Override
    public String toString() {
        return "SqsEndpoint[" + url() + "]";
    }

    // ---- one request

    private Wire wire(HttpRequest request) {
        return request.header("x-amz-target") != null ? json : query;
    }

    private static RawRequest raw(HttpRequest request) {
        return new RawRequest(request.method().toUpperCase(Locale.ROOT), request.rawPath(), request.rawQuery(),
                request.headers(), request.body());
    }

    private static HttpResponse response(Wire.Answer answer) {
        HttpResponse r = HttpResponse.of(answer.status(), answer.contentType(), answer.body());
        for (var h : answer.headers().entrySet()) {
            r = r.withHeader(h.getKey(), h.getValue());
        }
        return r;
    }

    /** Refuses, from its headers alone, a request that cannot be authentic: its body is then never read. */
    @Override
    public @Nullable HttpResponse admit(HttpRequest head) {
        if (sigV4 == null) {
            return null;
        }
        try {
            sigV4.check(raw(head));
            return null;
        } catch (SqsError e) {
            String requestId = UUID.randomUUID().toString();
            LOG.debug("request {} from {} refused from its headers: {}", requestId, head.remoteAddress(),
                    e.code.queryCode);
            return response(wire(head).error(e, requestId));
        }
    }

    @Override
    public HttpResponse refusal(HttpRequest head, Refusal refusal, String message) {
        ErrorCode code = switch (refusal) {
            case TOO_LARGE -> ErrorCode.REQUEST_TOO_LARGE;
            case BUSY -> ErrorCode.SERVICE_UNAVAILABLE;
            case TOO_SLOW -> ErrorCode.REQUEST_TIMEOUT;
        };
        String text = Character.toUpperCase(message.charAt(0)) + message.substring(1) + ".";
        return response(wire(head).error(new SqsError(code, text), UUID.randomUUID().toString()));
    }

    /** Sorts the request to its lane; runs on a listener worker, so it only looks, and hands over. */
    @Override
    public void handle(HttpRequest request, HttpResponder responder) {
        Lane lane = isReceive(request) ? receives : calls;
        if (!lane.submit(() -> serve(request, responder))) {
            responder.respond(refusal(request, Refusal.BUSY, "the service is busy: too many calls are waiting; retry"
                    + " later"));
        }
    }

    /** @return whether the request is (most likely) a ReceiveMessage: only which lane it takes depends on it */
    private static boolean isReceive(HttpRequest request) {
        String target = request.header("x-amz-target");
        if (target != null) {
            return target.equals("AmazonSQS.ReceiveMessage");
        }
        String query = request.rawQuery();
        return (query != null && query.contains("Action=ReceiveMessage")) || contains(request.body(), RECEIVE_ACTION);
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private void serve(HttpRequest request, HttpResponder responder) {
        long start = System.nanoTime();
        String requestId = UUID.randomUUID().toString();
        RawRequest raw = raw(request);
        Wire wire = wire(request);
        String action = "?";
        String principal = "-";
        Context.Request call;
        try {
            principal = sigV4 == null ? ANONYMOUS : sigV4.verify(raw).principal();
            Wire.Call parsed = wire.parse(raw);
            action = parsed.action();
            // after authentication, before authorization: an authenticated caller is told the action does not
            // exist, and an unauthenticated one learned nothing
            Actions.requireServed(action);
            call = new Context.Request(parsed.params(), baseUrl(request), pathQueue(raw), principal, true);
            String queue = actions.queueOf(action, call);
            if (!settings.authorizer().allows(principal, action, queue)
                    && !actions.policyAllows(principal, action, queue)) {
                throw new SqsError(ErrorCode.ACCESS_DENIED, "User: " + principal + " is not authorized to perform:"
                        + " sqs:" + action + (queue == null ? "" : " on resource: " + queue));
            }
        } catch (RuntimeException e) {
            respond(responder, failed(wire, e, requestId, action, principal), requestId, action, principal, start);
            return;
        }
        if (action.equals("ReceiveMessage")) {
            if (settings.budget().exhausted(request.client())) {
                // its answer may be megabytes, held until the client reads it: not while unsent answers (this
                // client's, or everyone's) fill the memory for them. Nothing has been taken from the queue
                respond(responder, wire.error(new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The service is busy: the"
                        + " memory for answers is in use; retry later."), requestId), requestId, action, principal,
                        start);
                return;
            }
            receive(call, wire, responder, requestId, principal, start);
            return;
        }
        respond(responder, run(wire, action, call, requestId, principal), requestId, action, principal, start);
    }

    /** Runs a receive: on a waiting thread if it may wait and one is free, else here and now, without waiting. */
    private void receive(Context.Request call, Wire wire, HttpResponder responder, String requestId, String principal,
                         long start) {
        String action = "ReceiveMessage";
        if (mayWait(call.params()) && waitingSlots.tryAcquire()) {
            Waiter waiter = new Waiter();
            // a client that leaves stops the wait: interrupted, a receive takes no message
            responder.onClientGone(waiter::cancel);
            try {
                waiting.execute(() -> {
                    try {
                        if (waiter.begin()) {
                            respond(responder, run(wire, action, call, requestId, principal), requestId, action,
                                    principal, start);
                        } else {
                            responder.respond(response(wire.error(new SqsError(ErrorCode.REQUEST_TIMEOUT, "The client"
                                    + " went away."), requestId)));
                        }
                    } finally {
                        waiter.end();
                        waitingSlots.release();
                    }
                });
                return;
            } catch (RejectedExecutionException closing) {
                waitingSlots.release();
            }
        }
        // every waiting thread is taken (or the endpoint is closing): answer with what the queue has now
        Context.Request now = new Context.Request(call.params(), call.baseUrl(), call.pathQueue(), principal, false);
        respond(responder, run(wire, action, now, requestId, principal), requestId, action, principal, start);
    }

    /** The thread of a waiting receive, to interrupt if its client goes away; never another task's. */
    private static final class Waiter {
        private @Nullable Thread thread;
        private boolean cancelled;
        private boolean ended;

        /** @return whether to run: false if the client went before the receive started */
        synchronized boolean begin() {
            thread = Thread.currentThread();
            return !cancelled;
        }

        synchronized void cancel() {
            cancelled = true;
            if (thread != null && !ended) {
                thread.interrupt();
            }
        }

        synchronized void end() {
            ended = true;
            thread = null;
            Thread.interrupted(); // a cancel's interrupt stays with this receive, not the thread's next task
        }
    }

    /** @return whether a ReceiveMessage may wait: not when it asks for no wait (then it needs no waiting thread) */
    private static boolean mayWait(Params params) {
        try {
            Integer wait = params.integer("WaitTimeSeconds", 0, 20, "Must be >= 0 and <= 20, if provided");
            return wait == null || wait > 0;
        } catch (SqsError refusedLater) {
            return false; // the receive refuses it itself, at once
        }
    }

    private Wire.Answer run(Wire wire, String action, Context.Request call, String requestId, String principal) {
        try {
            ObjectNode result = actions.run(action, call);
            return wire.success(action, result, requestId);
        } catch (RuntimeException e) {
            return failed(wire, e, requestId, action, principal);
        }
    }

    private static Wire.Answer failed(Wire wire, RuntimeException e, String requestId, String action, String principal) {
        if (e instanceof SqsError error) {
            return wire.error(error, requestId);
        }
        if (e instanceof dev.mailbox.api.MailboxAccessDeniedException) {
            // the directory's mailbox checked the caller's rights itself (a node's data plane) and refused
            LOG.debug("request {} ({}) by {}: refused by the mailbox: {}", requestId, action, principal, e.getMessage());
            return wire.error(new SqsError(ErrorCode.ACCESS_DENIED, "User: " + principal + " is not authorized to"
                    + " perform: sqs:" + action), requestId);
        }
        if (e instanceof MailboxUnavailableException) {
            LOG.debug("request {} ({}): a mailbox is unavailable: {}", requestId, action, e.toString());
            return wire.error(new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The service is unavailable. Please"
                    + " retry."), requestId);
        }
        LOG.warn("request {} ({}) failed", requestId, action, e);
        return wire.error(new SqsError(ErrorCode.INTERNAL_FAILURE, "The request processing has failed because"
                + " of an unknown error, exception or failure. Request id " + requestId + "."), requestId);
    }

    private static void respond(HttpResponder responder, Wire.Answer answer, String requestId,
                                String action, String principal, long start) {
        responder.respond(response(answer));
        if (LOG.isDebugEnabled()) {
            LOG.debug("request {} {} by {}: {} in {} ms", requestId, action, principal, answer.status(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    /** The base of queue URLs: the advertised one, else the scheme and Host this client used, so URLs lead back here. */
    private String baseUrl(HttpRequest request) {
        if (settings.advertisedUrl() != null) {
            String s = settings.advertisedUrl().toString();
            return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
        }
        String host = request.header("host");
        if (host == null || host.isEmpty() || !host.matches("[A-Za-z0-9.\\-:\\[\\]]+")) {
            host = url().getAuthority();
        }
        return (request.secure() ? "https" : "http") + "://" + host;
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
