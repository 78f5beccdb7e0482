package dev.mailbox.mainloop;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.api.TimeSource;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls a {@link MainLoop}: sends requests and completes a future with each response.
 *
 * <p>Each client opens its own response mailbox, named uniquely, and names it as the reply-to of every
 * request, so runners answer it directly and no client filters another's results. One thread receives
 * from it and completes the futures by request id; {@link #close()} stops that thread, fails what is
 * still pending, and cleans the mailbox up (by default it purges it; pass a cleanup that deletes it
 * where the backend can, such as an SQS queue).
 *
 * <p>A call's timeout is also the request's deadline, so runners do not start work nobody waits for.
 * Futures complete on the receiving thread: keep dependent stages short, or use the {@code ...Async}
 * variants. Results that arrive after their call timed out are acknowledged and dropped.
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

    private final Mailbox<MainLoopRequest<Req>> requests;
    private final Mailbox<MainLoopResult<Res>> responses;
    private final Consumer<? super Mailbox<MainLoopResult<Res>>> cleanup;
    private final Duration defaultTimeout;
    private final ReceiveOptions receiveOptions;
    private final TimeSource time;
    private final ConcurrentHashMap<String, CompletableFuture<@Nullable Res>> pending = new ConcurrentHashMap<>();
    private final Thread receiver;
    private volatile boolean open = true;

    private MainLoopClient(Builder<Req, Res> b) {
        this.requests = b.requests;
        this.cleanup = b.cleanup;
        this.defaultTimeout = b.defaultTimeout;
        this.time = b.time;
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
     * Sends a request built by the caller (for its own id or budget). Its reply-to is set to this
     * client's mailbox, and its deadline to the timeout if that is sooner.
     *
     * @param request the request; its reply-to must be null or this client's mailbox
     * @param timeout how long to wait for the result
     * @return the response, or a future failed as for {@link #call(Object)}
     * @throws IllegalArgumentException if the request names another reply-to, or its id is already
     *                                  waiting for a result
     */
    public CompletableFuture<@Nullable Res> call(MainLoopRequest<Req> request, Duration timeout) {
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
        try {
            requests.send(sent);
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
            return future;
        }
        // completed on the common pool, as before, so that dependent stages never hold up other timeouts
        ScheduledFuture<?> timer = TIMEOUTS.schedule(() -> ForkJoinPool.commonPool().execute(() ->
                future.completeExceptionally(new RequestTimeoutException(sent.requestId(), timeout))),
                timeout.toNanos(), TimeUnit.NANOSECONDS);
        future.whenComplete((r, e) -> timer.cancel(false));
        if (!open) {
            future.completeExceptionally(closed()); // closed while sending: nobody would complete it
        }
        return future;
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

    private void receiveLoop() {
        int failures = 0;
        // the results delivered last time, acknowledged with the next receive (one round trip on Redis)
        List<Message<MainLoopResult<Res>>> done = List.of();
        while (open) {
            List<Message<MainLoopResult<Res>>> got;
            try {
                got = responses.acknowledgeAndReceive(done, receiveOptions, stale ->
                        LOG.debug("result message {} in '{}' was delivered but its handle had gone stale; if it comes"
                                + " again it is dropped", stale.id(), responses.name()));
                failures = 0;
            } catch (MailboxException e) {
                if (!open) {
                    break;
                }
                failures++;
                LOG.warn("receiving results in '{}' failed ({} in a row): {}", responses.name(), failures, e.toString());
                try {
                    Thread.sleep(Math.min(5_000, 50L << Math.min(failures, 7)));
                } catch (InterruptedException ie) {
                    if (!open) {
                        break;
                    }
                }
                continue; // done goes again: if the failed call had acknowledged them, they are reported stale
            }
            for (Message<MainLoopResult<Res>> m : got) {
                deliver(m);
            }
            done = got;
        }
        if (!done.isEmpty()) {
            try {
                responses.acknowledgeBatch(done);
            } catch (RuntimeException e) {
                LOG.debug("acknowledging results in '{}' failed; they may come again and are then dropped: {}",
                        responses.name(), e.toString());
            }
        }
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
     * the response mailbox. Waits for the receiving thread up to the receive wait time plus 5 s (an SQS
     * long poll in progress cannot be cut short). Idempotent.
     */
    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        receiver.interrupt();
        try {
            receiver.join(receiveOptions.waitTime().toMillis() + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        MailboxClosedException closed = closed();
        pending.values().forEach(f -> f.completeExceptionally(closed));
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
         * Opens the response mailbox and starts receiving.
         *
         * @return the client
         */
        public MainLoopClient<Req, Res> build() {
            return new MainLoopClient<>(this);
        }
    }
}
