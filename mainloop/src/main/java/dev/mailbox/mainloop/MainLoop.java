package dev.mailbox.mainloop;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.TimeSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A runner: receives {@link MainLoopRequest}s from one mailbox, runs a {@link RequestHandler} for
 * each, and sends a {@link MainLoopResult} to the request's reply-to mailbox (or the loop's default
 * response mailbox).
 *
 * <h2>What it guarantees</h2>
 * <ul>
 *   <li><b>Reply before acknowledge.</b> The result is sent before the request is acknowledged; if the
 *       send fails (after a few quick retries when the failure says a retry may help) the request is nacked
 *       with the retry policy's backoff and answered again, from memory, when it comes back. If it still
 *       fails on the last delivery the {@link RetryPolicy} allows, the request is dead-lettered with
 *       {@link MainLoopError#REPLY_FAILED}. A runner that dies at any point loses no request: it comes back
 *       after its visibility timeout.</li>
 *   <li><b>No redelivery while running.</b> The loop extends the request's visibility every third of
 *       the visibility timeout while its handler runs, and stops when the handler ends.</li>
 *   <li><b>Run once while remembered.</b> Results of completed requests are kept (bounded, with
 *       expiry); a request delivered again, or sent again with the same id, is answered with the same
 *       result without running the handler. A duplicate that arrives while the first is still running
 *       waits for it. This is per loop object: another runner does not know what this one did.</li>
 *   <li><b>Deadlines.</b> A request received after its deadline is answered with
 *       {@link MainLoopError#DEADLINE_EXCEEDED} and its handler is not called; a handler still running
 *       at the deadline (or after its budget) is interrupted and the request answered the same way.</li>
 *   <li><b>Failures.</b> See {@link RetryPolicy}: retryable failures are nacked with backoff; others are
 *       answered with the error; after the last allowed delivery, the request is dead-lettered. A request
 *       that cannot be decoded is never retried: it goes to the dead-letter mailbox, or, without one, is
 *       put back with the longest backoff so that it is never silently dropped.</li>
 *   <li><b>Graceful shutdown.</b> {@link #shutdown(Duration)} stops receiving, lets running handlers
 *       finish within the grace period, then interrupts the rest and nacks their requests at once so
 *       another runner takes them.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * {@link #run()} runs handlers on {@code concurrency} worker threads of its own; one more thread extends
 * visibility and enforces deadlines. It receives only as many requests as it has idle workers, so nothing
 * waits in memory while it could be taken by another runner. How it receives depends on how many requests
 * one receive call may take ({@link Builder#receiveBatch}, never more than {@code concurrency}):
 * <ul>
 *   <li><b>One</b> (concurrency 1, the default, or {@code receiveBatch(1)}): every worker receives for
 *       itself, runs the handler and receives again, so a request costs no thread hand-off; a finished
 *       request's acknowledgement rides on that worker's next receive. Each idle worker keeps a receive
 *       call open (on Redis a waiter on the mailbox's one subscription; on SQS one long poll each).</li>
 *   <li><b>More</b>: the calling thread receives up to that many at once, as many as there are idle
 *       workers, and hands each request to a worker: fewer receive calls (what SQS charges for), one
 *       thread hand-off per request.</li>
 * </ul>
 * Where the workers receive, the calling thread only waits; at shutdown it still keeps the grace period,
 * interrupts a handler past it, hands its request back and returns, and a worker's receive failing for
 * good stops the loop and is what {@code run} throws. Either way handlers run on a worker thread, never on
 * the caller's, and an interrupt of the caller's thread stops the loop (handlers get the grace period)
 * without interrupting a handler. A loop runs on one thread at a time and can be run again after
 * {@code run} returns, until it is closed.
 *
 * <h2>Round trips</h2>
 * When every worker is busy, the receiving thread waits for one to finish and then receives at once; a
 * worker that finishes then leaves its acknowledgement (sent after the reply, as always) to that receive,
 * which carries it ({@link Mailbox#acknowledgeAndReceive}: on Redis one round trip for both); where the
 * workers receive, every acknowledgement rides on its worker's next receive, and a worker that leaves
 * its loop (its receives used up, or a stop) sends the one it holds at once. A receive carries at most
 * {@link Limits#MAX_BATCH} acknowledgements; past that, and once the loop stops, workers
 * acknowledge on their own. A handle found stale either way is logged, and the request, if it comes back,
 * is answered from memory.
 *
 * <h2>Metrics</h2>
 * Micrometer meters, tagged with the request mailbox's name: {@code mainloop.requests} (counter,
 * tagged {@code outcome}, one per delivery taken, counted before its answer goes out: success, error,
 * deadline_exceeded, retried, dead_lettered, duplicate, abandoned, undeliverable; a request whose result is
 * rejected, or cannot be sent, keeps the outcome its handler had), {@code mainloop.replies.failed} (counter,
 * deliveries whose result could not be sent, tagged {@code then}: given_back, or given_up once the retry
 * policy's deliveries are used up), {@code mainloop.failures} (handler exceptions, tagged {@code type}),
 * {@code mainloop.handler.time} and {@code mainloop.queue.wait} (timers). Without a registry they go
 * to Micrometer's global registry, which records nothing until one is added.
 *
 * @param <Req> the request body type
 * @param <Res> the response type
 */
public final class MainLoop<Req, Res> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MainLoop.class);
    private static final Duration DEFAULT_GRACE = Duration.ofSeconds(30);
    /** The longest grace period, 100 years (see {@link #bounded}). */
    private static final Duration MAX_GRACE = Duration.ofDays(36_525);

    final Mailbox<MainLoopRequest<Req>> requests;
    final @Nullable Mailbox<MainLoopResult<Res>> responses;
    final @Nullable Function<String, Mailbox<MainLoopResult<Res>>> replyResolver;
    final @Nullable Mailbox<DeadLetter<Req>> deadLetters;
    final RequestHandler<Req, Res> handler;
    final int concurrency;
    final ReceiveOptions receiveOptions;
    final RetryPolicy retry;
    final Duration grace;
    final TimeSource time;
    final LoopMetrics metrics;
    final MessageInterceptor interceptor;
    final Cache<String, MainLoopResult<Res>> completed;
    final ConcurrentHashMap<String, Attempt<Res>> running = new ConcurrentHashMap<>();
    private final Cache<String, Mailbox<MainLoopResult<Res>>> replyMailboxes;
    private final String threadPrefix;

    private final Object lock = new Object();
    private @Nullable Run<Req, Res> current; // guarded by lock
    private boolean closed; // guarded by lock

    private MainLoop(Builder<Req, Res> b) {
        this.requests = b.requests;
        this.responses = b.responses;
        this.replyResolver = b.replyResolver;
        this.deadLetters = b.deadLetters;
        this.handler = b.handler;
        this.concurrency = b.concurrency;
        this.receiveOptions = ReceiveOptions.defaults().withMaxMessages(Math.min(b.batch, b.concurrency))
                .withVisibilityTimeout(b.visibilityTimeout).withWaitTime(b.waitTime);
        this.retry = b.retry;
        this.grace = b.grace;
        this.time = b.time;
        this.metrics = new LoopMetrics(b.registry, requests.name());
        this.interceptor = b.interceptor;
        // its upkeep (a drain after every write, an eviction once full) runs on the worker that wrote, at a few
        // hundred nanoseconds: on the default pool it woke a common-pool thread for every request answered
        this.completed = Caffeine.newBuilder().maximumSize(b.rememberMax)
                .expireAfterWrite(b.rememberFor).executor(Runnable::run).build();
        this.replyMailboxes = Caffeine.newBuilder().maximumSize(b.replyMailboxCacheSize)
                .expireAfterAccess(Duration.ofMinutes(10))
                // closed on the thread that evicts or invalidates, so close() has closed them when it returns
                .executor(Runnable::run)
                .<String, Mailbox<MainLoopResult<Res>>>removalListener((name, mailbox, cause) -> {
                    if (mailbox != null) {
                        closeQuietly(mailbox);
                    }
                })
                .build();
        this.threadPrefix = "mainloop-" + requests.name();
    }

    /**
     * Starts building a loop.
     *
     * @param requests the mailbox requests arrive in
     * @param handler  the work to do for each
     * @param <Req>    the request body type
     * @param <Res>    the response type
     * @return a builder
     */
    public static <Req, Res> Builder<Req, Res> builder(Mailbox<MainLoopRequest<Req>> requests,
                                                       RequestHandler<Req, Res> handler) {
        return new Builder<>(requests, handler);
    }

    /**
     * @return the name of the mailbox this loop takes requests from
     */
    public String name() {
        return requests.name();
    }

    /**
     * Runs until {@link #stop()}, {@link #shutdown(Duration)} or {@link #close()} is called, the calling
     * thread is interrupted, or the request mailbox fails for good.
     *
     * @return how many requests were taken from the mailbox
     * @throws IllegalStateException if the loop is running already or is closed
     * @throws MailboxException      if receiving fails with an error that is not retryable
     */
    public long run() {
        return run(Long.MAX_VALUE);
    }

    /**
     * Makes at most {@code maxIterations} receive calls, then waits for every request it took to be
     * finished, and returns. Useful in tests: send a request, {@code run(1)}, read the result.
     *
     * @param maxIterations how many receive calls to make, 1 or more
     * @return how many requests were taken from the mailbox
     * @throws IllegalStateException if the loop is running already or is closed
     * @throws MailboxException      if receiving fails with an error that is not retryable
     */
    public long run(long maxIterations) {
        return run(maxIterations, requests);
    }

    /**
     * Runs like {@link #run()}, as the holder of the request mailbox's lease at fencing epoch {@code epoch}
     * (see {@link Mailbox#fenced}): requests are received, and acknowledged or nacked, through
     * {@code requests.fenced(epoch)}. Once a holder of a later lease has used the mailbox, this loop's
     * receive is refused with {@link dev.mailbox.api.FencedException} and the loop stops with it; a result
     * it can no longer acknowledge is not acknowledged (the request returns after its visibility timeout,
     * to the new holder). {@code LeasedRunner} runs its loop this way.
     *
     * @param epoch the lease's epoch, 1 or more
     * @return how many requests were taken from the mailbox
     * @throws IllegalStateException             if the loop is running already or is closed
     * @throws dev.mailbox.api.FencedException   once a later lease holder has used the mailbox
     * @throws MailboxException                  if receiving fails with another error that is not retryable
     */
    public long runFenced(long epoch) {
        return run(Long.MAX_VALUE, requests.fenced(epoch));
    }

    private long run(long maxIterations, Mailbox<MainLoopRequest<Req>> source) {
        if (maxIterations < 1) {
            throw new IllegalArgumentException("maxIterations must be 1 or more, was " + maxIterations);
        }
        Run<Req, Res> run;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("MainLoop '" + name() + "' is closed");
            }
            if (current != null) {
                throw new IllegalStateException("MainLoop '" + name() + "' is already running");
            }
            run = new Run<>(this, source);
            current = run;
        }
        try {
            return run.loop(maxIterations);
        } finally {
            synchronized (lock) {
                current = null;
                lock.notifyAll();
            }
        }
    }

    /**
     * Asks a running loop to stop receiving and return after the default grace period (see
     * {@link Builder#shutdownGrace}). Does not wait.
     */
    public void stop() {
        synchronized (lock) {
            if (current != null) {
                current.stop(grace);
            }
        }
    }

    /**
     * Stops receiving, lets running handlers finish for up to {@code grace}, interrupts the rest and
     * returns their requests to the mailbox, and waits until {@link #run()} has returned. Callable from
     * any thread, including a JVM shutdown hook. The loop can be run again afterwards. After an earlier
     * {@link #stop()} or shutdown, a shorter grace brings the hand-back forward and a longer one does not
     * put it off; a run started since this call is not waited for.
     *
     * @param grace how long running handlers may take to finish (over 100 years counts as 100 years)
     * @return true if {@code run} returned within grace plus a short margin for receive calls
     * @throws IllegalArgumentException if {@code grace} is negative
     */
    public boolean shutdown(Duration grace) {
        Objects.requireNonNull(grace, "grace");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("grace must not be negative, was " + grace);
        }
        grace = bounded(grace);
        long until = System.nanoTime() + grace.toNanos() + receiveOptions.waitTime().toNanos()
                + TimeUnit.SECONDS.toNanos(5);
        synchronized (lock) {
            if (current == null) {
                return true;
            }
            Run<Req, Res> stopped = current;
            stopped.stop(grace);
            while (current == stopped) { // a run started since is not this call's to wait for
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * A grace period that fits in a {@code long} of nanoseconds with room to add to {@link System#nanoTime}:
     * at most 100 years, which is "wait" for any process.
     */
    static Duration bounded(Duration grace) {
        return grace.compareTo(MAX_GRACE) > 0 ? MAX_GRACE : grace;
    }

    /**
     * A thread to register with {@link Runtime#addShutdownHook(Thread)}: it shuts the loop down with
     * the default grace period.
     *
     * @return an unstarted thread
     */
    public Thread shutdownHook() {
        return new Thread(this::close, threadPrefix + "-shutdown");
    }

    /**
     * Shuts down with the default grace period, closes the reply mailboxes the loop opened itself (not
     * the ones it was given), and refuses further runs. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        shutdown(grace);
        replyMailboxes.invalidateAll();
        replyMailboxes.cleanUp();
    }

    /**
     * @param replyTo a request's reply-to, or null
     * @return where to send its result, or null if there is no route
     */
    @Nullable Mailbox<MainLoopResult<Res>> replyTarget(@Nullable String replyTo) {
        if (replyTo == null || (responses != null && responses.name().equals(replyTo))) {
            return responses;
        }
        if (replyResolver == null) {
            return null;
        }
        return replyMailboxes.get(replyTo, replyResolver);
    }

    ExecutorService newWorkers() {
        return Executors.newFixedThreadPool(concurrency, threads(threadPrefix + "-worker-"));
    }

    ScheduledExecutorService newTimers() {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, threads(threadPrefix + "-timer-"));
        timers.setRemoveOnCancelPolicy(true);
        return timers;
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    static void closeQuietly(Mailbox<?> mailbox) {
        try {
            mailbox.close();
        } catch (RuntimeException e) {
            LOG.warn("closing reply mailbox '{}' failed", mailbox.name(), e);
        }
    }

    static void nackQuietly(Message<?> message, Duration delay) {
        try {
            message.nack(delay);
        } catch (RuntimeException e) {
            // it comes back when its visibility timeout lapses instead
            LOG.debug("nack of message {} failed: {}", message.id(), e.toString());
        }
    }

    /** One execution of a request id, which concurrent duplicates wait for. */
    static final class Attempt<Res> {
        private final CompletableFuture<@Nullable MainLoopResult<Res>> done = new CompletableFuture<>();

        void finish(@Nullable MainLoopResult<Res> result) {
            done.complete(result);
        }

        CompletableFuture<@Nullable MainLoopResult<Res>> future() {
            return done;
        }
    }

    /** Runs one request per slot; the slots are what bounds how much is received. */
    static final class Slots {
        private final Semaphore permits;
        private final int size;

        Slots(int size) {
            this.size = size;
            this.permits = new Semaphore(size);
        }

        int acquireUpTo(int max) throws InterruptedException {
            permits.acquire();
            int n = 1;
            while (n < max && permits.tryAcquire()) {
                n++;
            }
            return n;
        }

        void release(int n) {
            if (n > 0) {
                permits.release(n);
            }
        }

        boolean awaitIdle(long nanos) throws InterruptedException {
            if (permits.tryAcquire(size, nanos, TimeUnit.NANOSECONDS)) {
                permits.release(size);
                return true;
            }
            return false;
        }
    }

    /**
     * Builds a {@link MainLoop}. Needs a response mailbox, a reply-to resolver, or both.
     *
     * @param <Req> the request body type
     * @param <Res> the response type
     */
    public static final class Builder<Req, Res> {
        private final Mailbox<MainLoopRequest<Req>> requests;
        private final RequestHandler<Req, Res> handler;
        private @Nullable Mailbox<MainLoopResult<Res>> responses;
        private @Nullable Function<String, Mailbox<MainLoopResult<Res>>> replyResolver;
        private @Nullable Mailbox<DeadLetter<Req>> deadLetters;
        private int concurrency = 1;
        private int batch = 10;
        private Duration visibilityTimeout = ReceiveOptions.DEFAULT_VISIBILITY_TIMEOUT;
        private Duration waitTime = Duration.ofSeconds(20);
        private RetryPolicy retry = RetryPolicy.defaults();
        private Duration grace = DEFAULT_GRACE;
        private TimeSource time = TimeSource.system();
        private MeterRegistry registry = Metrics.globalRegistry;
        private long rememberMax = 10_000;
        private Duration rememberFor = Duration.ofMinutes(15);
        private long replyMailboxCacheSize = 1_000;
        private MessageInterceptor interceptor = MessageInterceptor.NONE;

        private Builder(Mailbox<MainLoopRequest<Req>> requests, RequestHandler<Req, Res> handler) {
            this.requests = Objects.requireNonNull(requests, "requests");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * @param responses where results go for requests without a reply-to (and for those whose
         *                  reply-to is this mailbox's name); the loop does not close it
         * @return this builder
         */
        public Builder<Req, Res> responses(Mailbox<MainLoopResult<Res>> responses) {
            this.responses = Objects.requireNonNull(responses, "responses");
            return this;
        }

        /**
         * How to open the mailbox a request's reply-to names. Opened mailboxes are cached (bounded,
         * closed when evicted and when the loop closes). A request whose reply-to cannot be opened is
         * dead-lettered with {@link MainLoopError#NO_REPLY_ROUTE}, unless opening it threw a retryable
         * {@link MailboxException}, in which case it is retried. A result the reply-to mailbox refuses as too
         * large, or cannot encode, is replaced by a {@link MainLoopError#RESULT_REJECTED} error for the caller
         * and the request is dead-lettered; any other failure to send a result (after a few quick retries of the
         * send) puts the request back, to be answered from memory when it comes back, and after the retry
         * policy's last delivery dead-letters it with {@link MainLoopError#REPLY_FAILED}.
         *
         * @param resolver reply-to name to mailbox
         * @return this builder
         */
        public Builder<Req, Res> replyTo(Function<String, Mailbox<MainLoopResult<Res>>> resolver) {
            this.replyResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * @param deadLetters where requests the loop gives up on are kept, with the reason
         * @return this builder
         */
        public Builder<Req, Res> deadLetters(Mailbox<DeadLetter<Req>> deadLetters) {
            this.deadLetters = Objects.requireNonNull(deadLetters, "deadLetters");
            return this;
        }

        /**
         * @param concurrency how many handlers run at once (default 1)
         * @return this builder
         */
        public Builder<Req, Res> concurrency(int concurrency) {
            if (concurrency < 1 || concurrency > 1024) {
                throw new IllegalArgumentException("concurrency must be between 1 and 1024, was " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /**
         * @param batch the most requests one receive call takes, 1 to 10 (default 10; never more than
         *              there are idle handlers). With 1, every worker receives for itself (see the class
         *              comment, <i>Threads</i>): no hand-off per request, one receive call per request
         * @return this builder
         */
        public Builder<Req, Res> receiveBatch(int batch) {
            this.batch = Limits.requireBatchSize(batch, "receiveBatch");
            return this;
        }

        /**
         * @param visibilityTimeout how long a received request stays invisible; the loop renews it while
         *                          the handler runs, so this bounds how soon another runner retries a
         *                          request after this one dies (default 30 s)
         * @return this builder
         */
        public Builder<Req, Res> visibilityTimeout(Duration visibilityTimeout) {
            Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout");
            if (visibilityTimeout.isZero()) {
                throw new IllegalArgumentException("visibilityTimeout must be positive for a MainLoop");
            }
            this.visibilityTimeout = visibilityTimeout;
            return this;
        }

        /**
         * @param waitTime how long each receive call waits for a request (default 20 s); shutdown waits
         *                 for the current call on backends that cannot interrupt it (SQS)
         * @return this builder
         */
        public Builder<Req, Res> waitTime(Duration waitTime) {
            this.waitTime = Limits.requireWaitTime(waitTime);
            return this;
        }

        /**
         * @param retry the retry and dead-letter policy (default {@link RetryPolicy#defaults()})
         * @return this builder
         */
        public Builder<Req, Res> retryPolicy(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return this;
        }

        /**
         * @param grace how long {@link #stop()} and {@link #close()} let running handlers finish
         *              (default 30 s); anything over 100 years (such as {@code ChronoUnit.FOREVER}) waits
         *              100 years
         * @return this builder
         */
        public Builder<Req, Res> shutdownGrace(Duration grace) {
            if (grace.isNegative()) {
                throw new IllegalArgumentException("shutdownGrace must not be negative, was " + grace);
            }
            this.grace = bounded(grace);
            return this;
        }

        /**
         * @param maxEntries how many completed results to remember (0 to remember none)
         * @param ttl        how long to remember each
         * @return this builder
         */
        public Builder<Req, Res> rememberCompleted(long maxEntries, Duration ttl) {
            if (maxEntries < 0) {
                throw new IllegalArgumentException("maxEntries must not be negative, was " + maxEntries);
            }
            if (ttl.isNegative() || ttl.isZero()) {
                throw new IllegalArgumentException("ttl must be positive, was " + ttl);
            }
            this.rememberMax = maxEntries;
            this.rememberFor = ttl;
            return this;
        }

        /**
         * @param time the clock deadlines and result times are read from (default the system clock)
         * @return this builder
         */
        public Builder<Req, Res> timeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * @param registry where metrics go (default Micrometer's global registry)
         * @return this builder
         */
        public Builder<Req, Res> meterRegistry(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * @param interceptor runs around the work for each request received: decoding it, the handler, sending
         *                    the result and settling it (default: none). {@code mailbox-opentelemetry}'s
         *                    continues the sender's trace there
         * @return this builder
         */
        public Builder<Req, Res> interceptor(MessageInterceptor interceptor) {
            this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
            return this;
        }

        /**
         * @return the loop
         * @throws IllegalStateException if there is neither a response mailbox nor a reply-to resolver
         */
        public MainLoop<Req, Res> build() {
            if (responses == null && replyResolver == null) {
                throw new IllegalStateException("MainLoop '" + requests.name()
                        + "' needs responses(...) or replyTo(...) to know where results go");
            }
            return new MainLoop<>(this);
        }
    }
}
