package dev.mailbox.mainloop;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.SerializationException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One received request, from receipt to acknowledgement, on a worker thread.
 *
 * <p>State: RUNNING until it starts to answer (COMMITTED) or the run gives it up at shutdown
 * (ABANDONED); whichever comes first wins, so an abandoned request is never answered by this runner
 * and a request being answered is never handed back.
 */
final class Task<Req, Res> implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(MainLoop.class);
    private static final int RUNNING = 0;
    private static final int COMMITTED = 1;
    private static final int ABANDONED = 2;
    /** Sends of one result in one delivery before the request is given back: the first and two retries. */
    static final int REPLY_ATTEMPTS = 3;
    /** The pause before each retry of a result's send, in milliseconds. */
    private static final long[] REPLY_PAUSES_MS = {50, 150};

    private final Run<Req, Res> run;
    /** The receiver that took the request: its next receive may carry the acknowledgement. */
    private final Run<Req, Res>.Receiver receiver;
    private final MainLoop<Req, Res> loop;
    private final Message<MainLoopRequest<Req>> message;
    private final AtomicInteger state = new AtomicInteger(RUNNING);
    private final ScheduledFuture<?> extender;

    private @Nullable Thread thread; // guarded by this
    private boolean interruptible; // guarded by this: in the handler or waiting for a duplicate
    private boolean deadlineHit; // guarded by this

    Task(Run<Req, Res> run, Run<Req, Res>.Receiver receiver, Message<MainLoopRequest<Req>> message) {
        this.run = run;
        this.receiver = receiver;
        this.loop = run.loop;
        this.message = message;
        long period = run.extendEveryNanos;
        this.extender = run.timers.scheduleAtFixedRate(this::extend, period, period, TimeUnit.NANOSECONDS);
    }

    String messageId() {
        return message.id();
    }

    @Override
    public void run() {
        synchronized (this) {
            thread = Thread.currentThread();
        }
        try {
            loop.interceptor.intercept(loop.name(), message, this::process);
        } catch (RuntimeException | Error e) {
            // not acknowledged: the request comes back when its visibility timeout lapses
            LOG.error("request message {} in '{}' failed unexpectedly", message.id(), loop.name(), e);
        } finally {
            extender.cancel(false);
            synchronized (this) {
                thread = null;
                interruptible = false;
                Thread.interrupted();
            }
            run.tasks.remove(this);
            run.slots.release(1);
        }
    }

    /** Called by the run at shutdown; true if this request was handed back. */
    boolean abandon() {
        if (!state.compareAndSet(RUNNING, ABANDONED)) {
            return false;
        }
        extender.cancel(false);
        MainLoop.nackQuietly(message, Duration.ZERO);
        synchronized (this) {
            if (interruptible && thread != null) {
                thread.interrupt();
            }
        }
        return true;
    }

    private void process() {
        MainLoopRequest<Req> request;
        try {
            request = message.body();
        } catch (SerializationException e) {
            deadLetter(null, e.undecodableBody(), new MainLoopError(MainLoopError.UNDECODABLE, e.getMessage()));
            return;
        }
        Instant now = loop.time.now();
        loop.metrics.queueWait(Duration.between(message.enqueuedAt(), now));
        // A request this loop has answered, or is answering, is answered the same way however often it was
        // delivered: its acknowledgement may have been lost on its last allowed delivery.
        String id = request.requestId();
        if (answeredFromMemory(request) != null) {
            return;
        }
        MainLoop.Attempt<Res> mine = new MainLoop.Attempt<>();
        MainLoop.Attempt<Res> first = loop.running.putIfAbsent(id, mine);
        if (first != null) {
            answerAfter(request, first);
            return;
        }
        MainLoopResult<Res> result = null;
        try {
            // the first copy may have finished between the lookup above and the claim
            result = answeredFromMemory(request);
            if (result != null) {
                return;
            }
            int max = loop.retry.maxDeliveries();
            if (message.deliveryCount() > max) {
                deadLetter(request, null, new MainLoopError(MainLoopError.DELIVERY_LIMIT_EXCEEDED,
                        "delivered " + message.deliveryCount() + " times; the retry policy allows " + max));
                return;
            }
            result = execute(request, now);
        } finally {
            loop.running.remove(id, mine);
            mine.finish(result);
        }
    }

    /** Answers a request the loop remembers having answered, the same way; returns that result, or null. */
    private @Nullable MainLoopResult<Res> answeredFromMemory(MainLoopRequest<Req> request) {
        MainLoopResult<Res> known = loop.completed.getIfPresent(request.requestId());
        if (known != null && commit()) { // not if handed back at shutdown: counted as abandoned
            answer(request, known, "duplicate");
        }
        return known;
    }

    /** Runs the handler; returns the final result, or null if the request was retried, dead-lettered or abandoned. */
    private @Nullable MainLoopResult<Res> execute(MainLoopRequest<Req> request, Instant now) {
        String id = request.requestId();
        if (request.deadline() != null && !now.isBefore(request.deadline())) {
            return complete(request, MainLoopResult.failure(id, new MainLoopError(MainLoopError.DEADLINE_EXCEEDED,
                    "deadline " + request.deadline() + " had passed when the request was received at " + now), now),
                    "deadline_exceeded");
        }
        Instant limit = request.deadline();
        if (request.budget() != null) {
            Instant byBudget = plusOrMax(now, request.budget());
            limit = limit == null || byBudget.isBefore(limit) ? byBudget : limit;
        }
        long delay = limit == null ? Long.MAX_VALUE : nanosUntil(now, limit);
        // a limit centuries away (a budget of "forever") needs no timer
        ScheduledFuture<?> timer = delay == Long.MAX_VALUE ? null
                : run.timers.schedule(this::deadlineReached, delay, TimeUnit.NANOSECONDS);
        @Nullable Res response = null;
        Exception failure = null;
        boolean late;
        long start = System.nanoTime();
        synchronized (this) {
            if (state.get() != RUNNING) {
                return null;
            }
            interruptible = true;
            if (deadlineHit) {
                Thread.currentThread().interrupt(); // the deadline came before the handler started
            }
        }
        try {
            response = loop.handler.handle(request);
        } catch (Exception e) {
            failure = e;
        } finally {
            if (timer != null) {
                timer.cancel(false);
            }
            synchronized (this) {
                interruptible = false;
                late = deadlineHit;
                Thread.interrupted();
            }
            loop.metrics.handlerTime(System.nanoTime() - start);
        }
        if (state.get() == ABANDONED) {
            return null;
        }
        Instant done = loop.time.now();
        if (failure == null) {
            return complete(request, MainLoopResult.success(id, response, done), "success");
        }
        loop.metrics.failure(failure);
        if (late) {
            return complete(request, MainLoopResult.failure(id, new MainLoopError(MainLoopError.DEADLINE_EXCEEDED,
                    "the handler was interrupted at " + limit + " (deadline " + request.deadline() + ", budget "
                            + request.budget() + ") and failed: " + MainLoopError.of(failure).type()), done),
                    "deadline_exceeded");
        }
        if (loop.retry.isRetryable(failure)) {
            if (message.deliveryCount() >= loop.retry.maxDeliveries()) {
                deadLetter(request, null, MainLoopError.of(failure));
            } else if (commit()) {
                loop.metrics.outcome("retried");
                Duration backoff = loop.retry.backoff(message.deliveryCount());
                LOG.debug("request {} failed on delivery {}, retrying in {}: {}", id, message.deliveryCount(),
                        backoff, failure.toString());
                MainLoop.nackQuietly(message, backoff);
            }
            return null;
        }
        return complete(request, MainLoopResult.failure(id, MainLoopError.of(failure), done), "error");
    }

    /** {@code instant + d}, or {@link Instant#MAX} where that would be past it. */
    private static Instant plusOrMax(Instant instant, Duration d) {
        try {
            return instant.plus(d);
        } catch (java.time.DateTimeException | ArithmeticException e) {
            return Instant.MAX;
        }
    }

    /** Nanoseconds from {@code from} to {@code to}, at least 0; {@link Long#MAX_VALUE} where that does not fit. */
    private static long nanosUntil(Instant from, Instant to) {
        try {
            return Math.max(0, Duration.between(from, to).toNanos());
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Remembers a final result and answers with it, counting the outcome, unless the request was handed back
     * at shutdown meanwhile (then counted as abandoned; its next delivery is answered from memory).
     */
    private MainLoopResult<Res> complete(MainLoopRequest<Req> request, MainLoopResult<Res> result, String outcome) {
        loop.completed.put(request.requestId(), result);
        if (commit()) {
            answer(request, result, outcome);
        }
        return result;
    }

    /** A duplicate of a request running right now: wait for it, then answer the same way. */
    private void answerAfter(MainLoopRequest<Req> request, MainLoop.Attempt<Res> first) {
        MainLoopResult<Res> result;
        synchronized (this) {
            interruptible = true;
        }
        try {
            result = first.future().get();
        } catch (InterruptedException e) {
            return; // abandoned at shutdown
        } catch (ExecutionException e) {
            result = null;
        } finally {
            synchronized (this) {
                interruptible = false;
                Thread.interrupted();
            }
        }
        if (!commit()) {
            return; // handed back at shutdown: counted as abandoned
        }
        if (result != null) {
            // what the first copy ended with, which may have replaced its result (one its reply-to refused)
            MainLoopResult<Res> remembered = loop.completed.getIfPresent(request.requestId());
            answer(request, remembered != null ? remembered : result, "duplicate");
        } else {
            // the first copy was retried or dead-lettered; this one goes back the same way
            loop.metrics.outcome("duplicate");
            MainLoop.nackQuietly(message, loop.retry.backoff(message.deliveryCount()));
        }
    }

    /**
     * Counts {@code outcome} for this delivery (before the answer goes out, so whoever sees the answer sees the
     * count), sends the result, then acknowledges. A send that fails is retried a few times at once
     * ({@link #REPLY_ATTEMPTS}, if the failure says a retry may help); after that the request is given back, to
     * be answered from memory when it comes back, until the delivery on which it fails is the last the retry
     * policy allows: then the loop gives up and dead-letters it with {@link MainLoopError#REPLY_FAILED}. Each
     * such delivery is counted once in {@code mainloop.replies.failed}. A result the reply-to refuses as too large
     * or cannot encode fails the same way every time, so it is dead-lettered at once with
     * {@link MainLoopError#RESULT_REJECTED}.
     */
    private void answer(MainLoopRequest<Req> request, MainLoopResult<Res> result, String outcome) {
        if (!commit()) {
            return;
        }
        Mailbox<MainLoopResult<Res>> target;
        try {
            target = loop.replyTarget(request.replyTo());
        } catch (MailboxException e) {
            if (e.isRetryable()) {
                loop.metrics.outcome(outcome);
                replyFailed(request, e, "cannot open reply-to mailbox '" + request.replyTo() + "'");
                return;
            }
            target = null;
        } catch (RuntimeException e) {
            target = null;
        }
        if (target == null) {
            deadLetter(request, null, new MainLoopError(MainLoopError.NO_REPLY_ROUTE,
                    "cannot open reply-to mailbox '" + request.replyTo() + "'"));
            return;
        }
        loop.metrics.outcome(outcome);
        RuntimeException failure = null;
        for (int attempt = 1; ; attempt++) {
            try {
                target.send(result);
                failure = null;
                break;
            } catch (MessageTooLargeException | SerializationException e) {
                // a property of this result, so every later delivery would fail the same way
                deadLetter(request, null, new MainLoopError(MainLoopError.RESULT_REJECTED, "the result could not be"
                        + " sent to '" + target.name() + "': " + e.getMessage()), false);
                return;
            } catch (RuntimeException e) {
                failure = e;
                boolean retryable = e instanceof MailboxException m && m.isRetryable();
                if (!retryable || attempt >= REPLY_ATTEMPTS || !pause(REPLY_PAUSES_MS[attempt - 1])) {
                    break;
                }
            }
        }
        if (failure != null) {
            replyFailed(request, failure, "the result could not be sent to '" + target.name() + "'");
            return;
        }
        acknowledge();
    }

    /** Sleeps between sends of a result; false if interrupted (the interrupt is kept). */
    private static boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The result could not be sent in this delivery: the request goes back (with the retry policy's backoff) to
     * be answered from memory on its next delivery, unless this delivery was the last the policy allows.
     */
    private void replyFailed(MainLoopRequest<Req> request, RuntimeException e, String what) {
        if (message.deliveryCount() >= loop.retry.maxDeliveries()) {
            loop.metrics.replyFailed("given_up");
            // the remembered result stays the handler's, so a resend of the request is still answered with it
            deadLetter(request, null, new MainLoopError(MainLoopError.REPLY_FAILED, what + " on any of "
                    + message.deliveryCount() + " deliveries (the retry policy allows " + loop.retry.maxDeliveries()
                    + "); last failure: " + e), false, false);
            return;
        }
        loop.metrics.replyFailed("given_back");
        Duration backoff = loop.retry.backoff(message.deliveryCount());
        LOG.warn("result of request {} could not be sent; the request comes back in {} (delivery {} of {}): {}",
                request.requestId(), backoff, message.deliveryCount(), loop.retry.maxDeliveries(), e.toString());
        MainLoop.nackQuietly(message, backoff);
    }

    /**
     * Gives a request up: keeps it in the dead-letter mailbox (if any), answers it with the error (if
     * it can be answered) and acknowledges it. A request that could be neither kept nor answered is put
     * back with the longest backoff rather than dropped.
     */
    private void deadLetter(@Nullable MainLoopRequest<Req> request, byte @Nullable [] raw, MainLoopError error) {
        deadLetter(request, raw, error, true);
    }

    /**
     * @param count whether to count the outcome; not for a request whose outcome was counted when the handler
     *              finished, whose result then could not be sent
     */
    private void deadLetter(@Nullable MainLoopRequest<Req> request, byte @Nullable [] raw, MainLoopError error,
                            boolean count) {
        deadLetter(request, raw, error, count, true);
    }

    /**
     * @param answer whether to remember the error as the request's result and send it to the caller; not when
     *               the loop gives up sending a result it keeps remembering
     */
    private void deadLetter(@Nullable MainLoopRequest<Req> request, byte @Nullable [] raw, MainLoopError error,
                            boolean count, boolean answer) {
        if (!commit()) {
            return;
        }
        Instant now = loop.time.now();
        if (loop.deadLetters != null) {
            try {
                loop.deadLetters.send(new DeadLetter<>(message.id(), loop.name(), request, raw,
                        message.deliveryCount(), error, now));
            } catch (RuntimeException e) {
                LOG.warn("dead letter for message {} could not be sent; it comes back later: {}", message.id(),
                        e.toString());
                MainLoop.nackQuietly(message, loop.retry.backoff(message.deliveryCount()));
                return;
            }
            // counted before the answer goes out, so whoever sees the answer sees the count
            if (count) {
                loop.metrics.outcome("dead_lettered");
            }
        }
        boolean answered = false;
        if (request != null && answer) {
            MainLoopResult<Res> result = MainLoopResult.failure(request.requestId(), error, now);
            loop.completed.put(request.requestId(), result);
            answered = sendQuietly(request, result);
        }
        if (loop.deadLetters == null && !answered) {
            if (count) {
                loop.metrics.outcome("undeliverable");
            }
            LOG.error("message {} in '{}' can be neither answered nor dead-lettered ({}: {}); it is put back for {}"
                            + " so that it is not lost; configure deadLetters(...) to set such requests aside",
                    message.id(), loop.name(), error.type(), error.message(), loop.retry.maxBackoff());
            MainLoop.nackQuietly(message, loop.retry.maxBackoff());
            return;
        }
        if (loop.deadLetters == null && count) {
            loop.metrics.outcome("dead_lettered");
        }
        LOG.warn("message {} in '{}' dead-lettered after {} deliveries: {}: {}", message.id(), loop.name(),
                message.deliveryCount(), error.type(), error.message());
        acknowledge();
    }

    private boolean sendQuietly(MainLoopRequest<Req> request, MainLoopResult<Res> result) {
        try {
            Mailbox<MainLoopResult<Res>> target = loop.replyTarget(request.replyTo());
            if (target != null) {
                target.send(result);
                return true;
            }
        } catch (RuntimeException e) {
            LOG.warn("error result of dead-lettered request {} could not be sent: {}", request.requestId(),
                    e.toString());
        }
        return false;
    }

    private void acknowledge() {
        if (receiver.handOver(message)) {
            return; // goes with the receiver's next receive, which starts as soon as this task's slot is free
        }
        try {
            message.acknowledge();
        } catch (ReceiptHandleExpiredException e) {
            LOG.warn("request message {} in '{}' was answered but its handle had expired; if it comes back it is"
                    + " answered from memory: {}", message.id(), loop.name(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("acknowledging request message {} in '{}' failed; if it comes back it is answered from memory:"
                    + " {}", message.id(), loop.name(), e.toString());
        }
    }

    private boolean commit() {
        return state.compareAndSet(RUNNING, COMMITTED) || state.get() == COMMITTED;
    }

    private void extend() {
        if (state.get() == ABANDONED) {
            extender.cancel(false);
            return;
        }
        try {
            message.extendVisibility(loop.receiveOptions.visibilityTimeout());
        } catch (ReceiptHandleExpiredException e) {
            extender.cancel(false);
            if (state.get() != RUNNING) {
                return; // answered (or handed back) between the check and the call
            }
            LOG.warn("request message {} in '{}' became visible again while running (another runner may take it):"
                    + " {}", message.id(), loop.name(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.debug("extending request message {} failed; trying again: {}", message.id(), e.toString());
        }
    }

    private void deadlineReached() {
        synchronized (this) {
            deadlineHit = true;
            if (interruptible && thread != null) {
                thread.interrupt();
            }
        }
    }
}
