package dev.mailbox.mainloop;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.api.TimeSource;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls a {@link MainLoop}: sends requests and completes a future with each response.
 *
 * <p>Each client opens its own response mailbox, named uniquely, and names it as the reply-to of every
 * request, so runners answer it directly and no client filters another's results. One thread at a time
 * receives from it and completes the calls by request id: while a {@link #callAndWait} call waits, its own
 * thread receives (its result costs no thread hand-off), and delivers whatever else it receives to the
 * calls it belongs to; otherwise, while futures from {@link #call} are pending, the client's own thread
 * receives. With nothing pending nobody receives. {@link #close()} stops that thread, fails what is still
 * pending, and cleans the mailbox up (by default it purges it; pass a cleanup that deletes it where the
 * backend can, such as an SQS queue).
 *
 * <p>A call's timeout is also the request's deadline, so runners do not start work nobody waits for.
 * Futures complete on whichever thread received their result: keep dependent stages short, or use the
 * {@code ...Async} variants. Results that arrive after their call timed out are acknowledged and dropped.
 *
 * <p><b>Keys.</b> A request with a {@link MainLoopRequest#key() key} ({@link #callWithKey}, or
 * {@link MainLoopRequest#withKey}) is sent with the key as its message group id. To a FIFO request mailbox that
 * makes the runners handle each key's requests in the order they were sent, one at a time, while other keys run
 * at once (see {@link MainLoop}, "Keys"); there every call needs a key, and a call without one fails with the
 * mailbox's {@link IllegalArgumentException}. Calls of one key are in the order this client sent them: from
 * one thread, the order of the calls; from several, the order in which their sends went out. On a standard
 * mailbox a key names a tenant, balanced by a fair mailbox, and orders nothing.
 *
 * <p>Thread-safe.
 *
 * @param <Req> the request body type
 * @param <Res> the response type
 */
public final class MainLoopClient<Req, Res> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MainLoopClient.class);
    /**
     * Times calls out, for every client (one daemon thread). A call's timeout is cancelled when the call
     * completes, so an answered call leaves nothing behind: the JDK's delayed executor, used before, kept
     * every call's future queued for its whole timeout and then woke two threads for each, long after
     * the call was answered.
     */
    private static final ScheduledThreadPoolExecutor TIMEOUTS = timeouts();
    /**
     * Completes timed-out calls, so their dependent stages run here: threads of its own, made as needed, so
     * neither a slow stage nor unrelated work filling the JVM's common pool holds up another call's timeout.
     */
    private static final ExecutorService TIMED_OUT = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "mainloop-client-timed-out");
        t.setDaemon(true);
        return t;
    });

    private final Mailbox<MainLoopRequest<Req>> requests;
    private final Mailbox<MainLoopResult<Res>> responses;
    private final Consumer<? super Mailbox<MainLoopResult<Res>>> cleanup;
    private final Duration defaultTimeout;
    private final ReceiveOptions receiveOptions;
    private final TimeSource time;
    private final MessageInterceptor interceptor;
    private final ConcurrentHashMap<String, CompletableFuture<@Nullable Res>> pending = new ConcurrentHashMap<>();
    private final Thread receiver;
    private volatile boolean open = true;

    /*
     * Who receives. One thread at a time holds the role; the results it delivered last are acknowledged
     * with the role's next receive (one round trip on Redis), whoever holds it then.
     */
    private final ReentrantLock state = new ReentrantLock();
    private final Condition asyncWork = state.newCondition(); // the client's thread waits here for work
    private @Nullable Thread holder; // guarded by state: the thread holding the role, if any
    private int asyncPending; // guarded by state: futures from call() not yet complete
    /** Callers of callAndWait waiting for the role, with their calls, in arrival order. */
    private final Map<Thread, CompletableFuture<@Nullable Res>> waiting = new LinkedHashMap<>(); // guarded by state
    private List<Message<MainLoopResult<Res>>> delivered = List.of(); // the role holder's: to acknowledge next
    private int receiveFailures; // the role holder's

    private MainLoopClient(Builder<Req, Res> b) {
        this.requests = b.requests;
        this.cleanup = b.cleanup;
        this.defaultTimeout = b.defaultTimeout;
        this.time = b.time;
        this.interceptor = b.interceptor;
        this.receiveOptions = ReceiveOptions.defaults().withMaxMessages(10).withWaitTime(b.receiveWait);
        String name = b.name != null ? b.name
                : b.requests.name() + "-reply-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        this.responses = Objects.requireNonNull(b.open.apply(name), "the response mailbox factory returned null");
        if (!responses.name().equals(name)) {
            String actual = responses.name();
            MainLoop.closeQuietly(responses);
            throw new IllegalArgumentException("the response mailbox factory was asked for '" + name
                    + "' and returned a mailbox named '" + actual + "'");
        }
        this.receiver = new Thread(this::receiveLoop, "mainloop-client-" + name);
        receiver.setDaemon(true);
        receiver.start();
    }

    /**
     * Starts building a client.
     *
     * @param requests          the mailbox the runners take requests from
     * @param responseMailboxes opens the client's response mailbox, given its name
     * @param <Req>             the request body type
     * @param <Res>             the response type
     * @return a builder
     */
    public static <Req, Res> Builder<Req, Res> builder(Mailbox<MainLoopRequest<Req>> requests,
                                                       Function<String, Mailbox<MainLoopResult<Res>>> responseMailboxes) {
        return new Builder<>(requests, responseMailboxes);
    }

    /**
     * @return the name of this client's response mailbox (the reply-to of its requests)
     */
    public String responseMailboxName() {
        return responses.name();
    }

    /**
     * @return how many calls are waiting for their result
     */
    public int pendingCalls() {
        return pending.size();
    }

    /**
     * Calls with the default timeout.
     *
     * @param body the request body
     * @return the response, or a future failed with {@link RequestFailedException},
     *         {@link RequestTimeoutException} or the {@link MailboxException} that stopped the send
     */
    public CompletableFuture<@Nullable Res> call(Req body) {
        return call(body, defaultTimeout);
    }

    /**
     * Calls with a timeout, which is also the request's deadline.
     *
     * @param body    the request body
     * @param timeout how long to wait for the result
     * @return the response, or a future failed as for {@link #call(Object)}
     */
    public CompletableFuture<@Nullable Res> call(Req body, Duration timeout) {
        return call(MainLoopRequest.of(Objects.requireNonNull(body, "body")), timeout);
    }

    /**
     * Calls with a key (see the class comment, <i>Keys</i>) and the default timeout.
     *
     * @param key  the key whose requests are handled in order: a message group id, 1 to 128 characters of A-Z,
     *             a-z, 0-9 and ASCII punctuation
     * @param body the request body
     * @return the response, or a future failed as for {@link #call(Object)}
     * @throws IllegalArgumentException if the key breaks the message group id rule
     */
    public CompletableFuture<@Nullable Res> callWithKey(String key, Req body) {
        return callWithKey(key, body, defaultTimeout);
    }

    /**
     * Calls with a key (see the class comment, <i>Keys</i>) and a timeout, which is also the request's deadline.
     *
     * @param key     the key whose requests are handled in order
     * @param body    the request body
     * @param timeout how long to wait for the result
     * @return the response, or a future failed as for {@link #call(Object)}
     * @throws IllegalArgumentException if the key breaks the message group id rule
     */
    public CompletableFuture<@Nullable Res> callWithKey(String key, Req body, Duration timeout) {
        Objects.requireNonNull(key, "key");
        return call(MainLoopRequest.of(Objects.requireNonNull(body, "body")).withKey(key), timeout);
    }

    /**
     * Sends a request built by the caller (for its own id, budget or key). Its reply-to is set to this
     * client's mailbox, and its deadline to the timeout if that is sooner.
     *
     * @param request the request; its reply-to must be null or this client's mailbox
     * @param timeout how long to wait for the result
     * @return the response, or a future failed as for {@link #call(Object)}
     * @throws IllegalArgumentException if the request names another reply-to, or its id is already
     *                                  waiting for a result
     */
    public CompletableFuture<@Nullable Res> call(MainLoopRequest<Req> request, Duration timeout) {
        return send(request, timeout, true);
    }

    /**
     * Calls with the default timeout and waits for the result on this thread, which receives for itself
     * while it waits (see the class comment). Interrupting a caller that is receiving cuts its receive
     * short; on a backend whose receive cannot be cut cleanly (SQS), results it was being handed for other
     * calls may then come back only after the response mailbox's visibility timeout.
     *
     * @param body the request body
     * @return the response (null if the handler answered null)
     * @throws RequestFailedException      if the runner answered with an error
     * @throws RequestTimeoutException     if no result came within the timeout
     * @throws MailboxUnavailableException if this thread is interrupted while it waits (the interrupt
     *                                     flag stays set)
     * @throws MailboxException            if the request could not be sent, or the client is closed
     */
    public @Nullable Res callAndWait(Req body) {
        return callAndWait(body, defaultTimeout);
    }

    /**
     * Calls with a timeout, which is also the request's deadline, and waits for the result as
     * {@link #callAndWait(Object)} does.
     *
     * @param body    the request body
     * @param timeout how long to wait for the result
     * @return the response (null if the handler answered null)
     * @throws RequestFailedException      if the runner answered with an error
     * @throws RequestTimeoutException     if no result came within the timeout
     * @throws MailboxUnavailableException if this thread is interrupted while it waits
     * @throws MailboxException            if the request could not be sent, or the client is closed
     * @throws IllegalStateException       if called from a dependent stage of another call that runs on the
     *                                     thread delivering results (it would wait for itself)
     */
    public @Nullable Res callAndWait(Req body, Duration timeout) {
        return callAndWait(MainLoopRequest.of(Objects.requireNonNull(body, "body")), timeout);
    }

    /**
     * Sends a request built by the caller (for its own id, budget or key), as {@link #call(MainLoopRequest,
     * Duration)} does, and waits for the result as {@link #callAndWait(Object)} does.
     *
     * @param request the request; its reply-to must be null or this client's mailbox
     * @param timeout how long to wait for the result
     * @return the response (null if the handler answered null)
     * @throws RequestFailedException      if the runner answered with an error
     * @throws RequestTimeoutException     if no result came within the timeout
     * @throws MailboxUnavailableException if this thread is interrupted while it waits
     * @throws MailboxException            if the request could not be sent, or the client is closed
     * @throws IllegalArgumentException    if the request names another reply-to, its id is already waiting for a
     *                                     result, or the request mailbox refuses it (a FIFO one, without a key)
     * @throws IllegalStateException       if called from a dependent stage of another call that runs on the
     *                                     thread delivering results
     */
    public @Nullable Res callAndWait(MainLoopRequest<Req> request, Duration timeout) {
        Objects.requireNonNull(request, "request");
        state.lock();
        try {
            if (holder == Thread.currentThread()) {
                // a stage of another call, run while this thread delivers: it would wait for itself
                throw new IllegalStateException("callAndWait called on the thread receiving for '" + responses.name()
                        + "' (from a dependent stage of one of its calls); use an ...Async stage or call()");
            }
        } finally {
            state.unlock();
        }
        long until = System.nanoTime() + Objects.requireNonNull(timeout, "timeout").toNanos();
        CompletableFuture<@Nullable Res> future = send(request, timeout, false);
        await(future, until, request.requestId(), timeout);
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    private CompletableFuture<@Nullable Res> send(MainLoopRequest<Req> request, Duration timeout, boolean async) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        if (request.replyTo() != null && !request.replyTo().equals(responses.name())) {
            throw new IllegalArgumentException("request " + request.requestId() + " names reply-to '"
                    + request.replyTo() + "'; a client receives only in '" + responses.name() + "'");
        }
        if (!open) {
            return CompletableFuture.failedFuture(closed());
        }
        var deadline = time.now().plus(timeout);
        MainLoopRequest<Req> sent = request.withReplyTo(responses.name())
                .withDeadline(request.deadline() != null && request.deadline().isBefore(deadline)
                        ? request.deadline() : deadline);
        CompletableFuture<@Nullable Res> future = new CompletableFuture<>();
        if (pending.putIfAbsent(sent.requestId(), future) != null) {
            throw new IllegalArgumentException("request " + sent.requestId() + " is already waiting for a result");
        }
        future.whenComplete((r, e) -> pending.remove(sent.requestId(), future));
        if (async) {
            asyncCallStarted(future);
        }
        try {
            // the key is the message group: on a FIFO mailbox it orders the key's requests
            requests.send(sent, sent.key() == null ? SendOptions.defaults()
                    : SendOptions.defaults().withGroupId(sent.key()));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
            return future;
        }
        if (async) {
            // completed off the timer thread, so that dependent stages never hold up other timeouts
            ScheduledFuture<?> timer = TIMEOUTS.schedule(() -> TIMED_OUT.execute(() ->
                    future.completeExceptionally(new RequestTimeoutException(sent.requestId(), timeout))),
                    timeout.toNanos(), TimeUnit.NANOSECONDS);
            future.whenComplete((r, e) -> timer.cancel(false));
        }
        if (!open) {
            future.completeExceptionally(closed()); // closed while sending: nobody would complete it
        }
        return future;
    }

    /** A future from call() is pending until it completes: the client's thread receives for it meanwhile. */
    private void asyncCallStarted(CompletableFuture<@Nullable Res> future) {
        state.lock();
        try {
            asyncPending++;
            if (holder == null) {
                asyncWork.signal();
            }
        } finally {
            state.unlock();
        }
        future.whenComplete((r, e) -> {
            state.lock();
            try {
                asyncPending--;
            } finally {
                state.unlock();
            }
        });
    }

    /**
     * Waits for a call of {@link #callAndWait} on its own thread: receives while nobody else does, and
     * otherwise parks until its result is delivered or the role comes free.
     */
    private void await(CompletableFuture<@Nullable Res> future, long until, String requestId, Duration timeout) {
        Thread me = Thread.currentThread();
        future.whenComplete((r, e) -> LockSupport.unpark(me)); // delivered by another thread
        try {
            awaitLoop(future, until, requestId, timeout, me);
        } finally {
            state.lock();
            try {
                if (waiting.remove(me) != null && holder == null) {
                    handRoleOn(); // it may have been this caller's turn
                }
            } finally {
                state.unlock();
            }
        }
    }

    private void awaitLoop(CompletableFuture<@Nullable Res> future, long until, String requestId, Duration timeout,
                           Thread me) {
        while (!future.isDone()) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                future.completeExceptionally(new RequestTimeoutException(requestId, timeout));
                break;
            }
            if (Thread.currentThread().isInterrupted()) {
                future.completeExceptionally(new MailboxUnavailableException("interrupted while waiting for the"
                        + " result of request " + requestId + " in '" + responses.name() + "'", false, null));
                break;
            }
            boolean mine;
            state.lock();
            try {
                // a result delivered while this caller waited for the lock needs no receive
                mine = holder == null && open && !future.isDone();
                if (mine) {
                    holder = me;
                    waiting.remove(me);
                } else {
                    waiting.put(me, future);
                }
            } finally {
                state.unlock();
            }
            if (mine) {
                try {
                    receiveOnce(Duration.ofNanos(Math.min(left, receiveOptions.waitTime().toNanos())), until);
                } finally {
                    releaseRole();
                }
            } else if (!future.isDone()) {
                // checked again after taking the lock: waiting for it may have used up the unpark of a result
                // delivered meanwhile, and a completion after this check unparks this thread again
                LockSupport.parkNanos(this, left);
            }
        }
    }

    /** Gives up the role: to the first caller still waiting for its result, else to the client's thread. */
    private void releaseRole() {
        state.lock();
        try {
            holder = null;
            handRoleOn();
        } finally {
            state.unlock();
        }
    }

    private void handRoleOn() { // with state held, nobody receiving
        for (var w : waiting.entrySet()) {
            if (!w.getValue().isDone()) {
                LockSupport.unpark(w.getKey());
                return;
            }
        }
        if (asyncPending > 0) {
            asyncWork.signal();
        }
    }

    private static ScheduledThreadPoolExecutor timeouts() {
        ScheduledThreadPoolExecutor timeouts = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mainloop-client-timeouts");
            t.setDaemon(true);
            return t;
        });
        timeouts.setRemoveOnCancelPolicy(true);
        // Does nothing, but is always due within a second, so the timeout of a call of a second or more never
        // becomes the queue's head and scheduling it does not wake the thread.
        timeouts.scheduleAtFixedRate(() -> { }, 1, 1, TimeUnit.SECONDS);
        return timeouts;
    }

    /**
     * The client's thread: receives while futures from {@link #call} are pending and nobody else receives.
     * Once it has been idle for a receive wait and finds the role free, it acknowledges the results
     * delivered last, which would otherwise stay in flight until the next receive.
     */
    private void receiveLoop() {
        long period = receiveOptions.waitTime().toNanos();
        while (true) {
            boolean tidy = false;
            state.lock();
            try {
                long idleUntil = System.nanoTime() + period;
                while (open && (asyncPending == 0 || holder != null)) {
                    long left = idleUntil - System.nanoTime();
                    if (left <= 0) {
                        if (holder == null && !delivered.isEmpty()) {
                            tidy = true;
                            break;
                        }
                        idleUntil = System.nanoTime() + period;
                        left = period;
                    }
                    asyncWork.awaitNanos(left);
                }
                if (!open) {
                    return;
                }
                holder = Thread.currentThread();
            } catch (InterruptedException e) {
                if (!open) {
                    return;
                }
                continue; // interrupted by someone else than close(): carry on
            } finally {
                state.unlock();
            }
            try {
                if (tidy) {
                    acknowledgeDelivered();
                } else {
                    receiveOnce(receiveOptions.waitTime(), Long.MAX_VALUE);
                }
            } finally {
                releaseRole();
            }
        }
    }

    /** By the holder of the role, with nobody waiting for a result: acknowledges what was delivered last. */
    private void acknowledgeDelivered() {
        List<Message<MainLoopResult<Res>>> last = delivered;
        delivered = List.of();
        try {
            responses.acknowledgeBatch(last);
        } catch (RuntimeException e) {
            LOG.debug("acknowledging results in '{}' failed; they may come again and are then dropped: {}",
                    responses.name(), e.toString());
        }
    }

    /**
     * One receive, by the holder of the role: acknowledges what it delivered last, delivers what comes.
     * A failure is logged and paused on (at most until {@code until}, a {@link System#nanoTime} value); the
     * acknowledgements go again with the next receive, which reports them stale if the failed call made them.
     */
    private void receiveOnce(Duration wait, long until) {
        List<Message<MainLoopResult<Res>>> got;
        try {
            got = responses.acknowledgeAndReceive(delivered, receiveOptions.withWaitTime(wait), stale ->
                    LOG.debug("result message {} in '{}' was delivered but its handle had gone stale; if it comes"
                            + " again it is dropped", stale.id(), responses.name()));
            receiveFailures = 0;
        } catch (MailboxException e) {
            if (!open || Thread.currentThread().isInterrupted()) {
                return; // closing, or a caller of callAndWait interrupted: its loop says so
            }
            receiveFailures++;
            LOG.warn("receiving results in '{}' failed ({} in a row): {}", responses.name(), receiveFailures,
                    e.toString());
            long pause = Math.min(TimeUnit.MILLISECONDS.toNanos(Math.min(5_000, 50L << Math.min(receiveFailures, 7))),
                    until - System.nanoTime());
            if (pause > 0) {
                LockSupport.parkNanos(this, pause); // close() may cut it short
            }
            return;
        }
        for (Message<MainLoopResult<Res>> m : got) {
            try {
                interceptor.intercept(responses.name(), m, () -> deliver(m));
            } catch (RuntimeException e) {
                // the interceptor's own failure: the other results still go to their calls
                LOG.error("delivering result message {} in '{}' failed", m.id(), responses.name(), e);
            }
        }
        delivered = got;
    }

    private void deliver(Message<MainLoopResult<Res>> m) {
        MainLoopResult<Res> result;
        try {
            result = m.body();
        } catch (SerializationException e) {
            LOG.error("result message {} in '{}' cannot be decoded and is dropped: {}", m.id(), responses.name(),
                    e.getMessage());
            return;
        }
        CompletableFuture<@Nullable Res> future = pending.get(result.requestId());
        if (future == null) {
            LOG.debug("result for request {} arrived with no call waiting (timed out, or a duplicate)",
                    result.requestId());
            return;
        }
        MainLoopError error = result.error();
        if (error == null) {
            future.complete(result.response());
        } else {
            future.completeExceptionally(new RequestFailedException(result.requestId(), error));
        }
    }

    private MailboxClosedException closed() {
        return new MailboxClosedException("MainLoopClient on '" + responses.name() + "' is closed");
    }

    /**
     * Stops receiving, fails pending calls with {@link MailboxClosedException}, cleans up and closes
     * the response mailbox. Waits for the client's thread up to the receive wait time plus 5 s (for a
     * backend whose receive does not end on an interrupt); a caller of {@link #callAndWait} that is receiving at
     * the time is not waited for: its receive ends within the receive wait, and it then throws
     * {@link MailboxClosedException}. Idempotent.
     */
    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        state.lock();
        try {
            asyncWork.signalAll();
        } finally {
            state.unlock();
        }
        receiver.interrupt();
        try {
            receiver.join(receiveOptions.waitTime().toMillis() + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        MailboxClosedException closed = closed();
        pending.values().forEach(f -> f.completeExceptionally(closed)); // wakes callers of callAndWait too
        boolean mine;
        state.lock();
        try {
            mine = holder == null; // nobody receives any more: the last results delivered are acknowledged here
            if (mine) {
                holder = Thread.currentThread();
            }
        } finally {
            state.unlock();
        }
        if (mine) {
            try {
                if (!delivered.isEmpty()) {
                    acknowledgeDelivered();
                }
            } finally {
                releaseRole(); // kept, a later callAndWait on this thread would take itself for the receiver
            }
        }
        try {
            cleanup.accept(responses);
        } catch (RuntimeException e) {
            LOG.warn("cleaning up response mailbox '{}' failed", responses.name(), e);
        } finally {
            MainLoop.closeQuietly(responses);
        }
    }

    /**
     * Builds a {@link MainLoopClient}.
     *
     * @param <Req> the request body type
     * @param <Res> the response type
     */
    public static final class Builder<Req, Res> {
        private final Mailbox<MainLoopRequest<Req>> requests;
        private final Function<String, Mailbox<MainLoopResult<Res>>> open;
        private @Nullable String name;
        private Consumer<? super Mailbox<MainLoopResult<Res>>> cleanup = Mailbox::purge;
        private Duration defaultTimeout = Duration.ofSeconds(30);
        private Duration receiveWait = Duration.ofSeconds(5);
        private TimeSource time = TimeSource.system();
        private MessageInterceptor interceptor = MessageInterceptor.NONE;

        private Builder(Mailbox<MainLoopRequest<Req>> requests, Function<String, Mailbox<MainLoopResult<Res>>> open) {
            this.requests = Objects.requireNonNull(requests, "requests");
            this.open = Objects.requireNonNull(open, "responseMailboxes");
        }

        /**
         * @param name the response mailbox's name instead of a unique one made from the request
         *             mailbox's name; two live clients must never share one
         * @return this builder
         */
        public Builder<Req, Res> responseMailboxName(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("response mailbox name must not be blank");
            }
            this.name = name;
            return this;
        }

        /**
         * @param cleanup what {@link #close()} does to the response mailbox before closing it (default:
         *                purge it)
         * @return this builder
         */
        public Builder<Req, Res> cleanup(Consumer<? super Mailbox<MainLoopResult<Res>>> cleanup) {
            this.cleanup = Objects.requireNonNull(cleanup, "cleanup");
            return this;
        }

        /**
         * @param timeout the timeout of {@link #call(Object)} (default 30 s)
         * @return this builder
         */
        public Builder<Req, Res> defaultTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("defaultTimeout must be positive, was " + timeout);
            }
            this.defaultTimeout = timeout;
            return this;
        }

        /**
         * @param wait how long each receive of results waits (default 5 s); bounds how long
         *             {@link #close()} can take on backends that cannot cut a wait short
         * @return this builder
         */
        public Builder<Req, Res> receiveWait(Duration wait) {
            Limits.requireWaitTime(wait);
            if (wait.isZero()) {
                throw new IllegalArgumentException("receiveWait must be positive");
            }
            this.receiveWait = wait;
            return this;
        }

        /**
         * @param time the clock deadlines are computed from (default the system clock)
         * @return this builder
         */
        public Builder<Req, Res> timeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * @param interceptor runs around the work for each result received: decoding it and completing its call
         *                    (default: none). {@code mailbox-opentelemetry}'s continues the trace the result's
         *                    sender (the runner) carried on, so the caller sees its reply in its own trace
         * @return this builder
         */
        public Builder<Req, Res> interceptor(MessageInterceptor interceptor) {
            this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
            return this;
        }

        /**
         * Opens the response mailbox and starts receiving.
         *
         * @return the client
         */
        public MainLoopClient<Req, Res> build() {
            return new MainLoopClient<>(this);
        }
    }
}
