package dev.mailbox.mainloop;

import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One call of {@link MainLoop#run(long)}: its threads, its slots and its requests in flight. */
final class Run<Req, Res> {

    private static final Logger LOG = LoggerFactory.getLogger(MainLoop.class);
    private static final long MAX_RECEIVE_BACKOFF_MS = 5_000;

    final MainLoop<Req, Res> loop;
    /** Where this run receives: the loop's request mailbox, or a fenced view of it. */
    private final dev.mailbox.api.Mailbox<MainLoopRequest<Req>> source;
    final MainLoop.Slots slots;
    final Set<Task<Req, Res>> tasks = ConcurrentHashMap.newKeySet();
    final ExecutorService workers;
    final ScheduledExecutorService timers;
    /** How often a running request's visibility is extended: a third of the visibility timeout. */
    final long extendEveryNanos;
    /**
     * Whether the one worker receives as well as runs the handlers (concurrency 1): it could not take a
     * second request while its handler runs anyway, so a receiving thread that hands each request to it
     * would only add a thread wake-up per request. The thread that called {@code run} then only waits, and
     * drains at the end: the grace period, the interrupt of a handler past it and the handing back of its
     * request stay with that thread, and handlers still run on a worker, never on the caller's thread.
     */
    private final boolean workerReceives;
    private final AtomicLong taken = new AtomicLong();

    /**
     * Acknowledgements that finishing tasks handed to the runner, to go with its next receive
     * ({@link dev.mailbox.api.Mailbox#acknowledgeAndReceive}): one round trip per request instead of two
     * on Redis. A task hands its acknowledgement over only while the runner waits for a free slot, so the
     * receive it rides on starts as soon as that task's slot is released and never waits for it; at
     * concurrency 1 the task runs on the receiving worker itself, whose next receive follows it at once.
     * Once the drain has sent what was handed over ({@link #flushSettles}), tasks acknowledge on their own.
     */
    private final Object settleLock = new Object();
    private final List<Message<MainLoopRequest<Req>>> toSettle = new ArrayList<>(); // guarded by settleLock
    private boolean takingSettles; // guarded by settleLock: the runner waits for a slot, then receives
    private boolean settlesClosed; // guarded by settleLock: drained; from now on tasks acknowledge on their own

    private boolean stopping; // guarded by this
    private boolean receiving; // guarded by this: the receiving thread may be interrupted only then
    private @Nullable Thread receiver; // guarded by this: the thread that receives
    private boolean receiverDone; // guarded by this: the worker that received has left its loop
    private long graceNanos; // guarded by this

    Run(MainLoop<Req, Res> loop, dev.mailbox.api.Mailbox<MainLoopRequest<Req>> source) {
        this.loop = loop;
        this.source = source;
        this.workerReceives = loop.concurrency == 1;
        this.slots = new MainLoop.Slots(loop.concurrency);
        this.workers = loop.newWorkers();
        this.timers = loop.newTimers();
        this.extendEveryNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(50),
                loop.receiveOptions.visibilityTimeout().toNanos() / 3);
        // Does nothing, but is always due within one extension period, so a request's extender (due a full
        // period after it is scheduled) never becomes the timer queue's head and scheduling it never wakes
        // the timer thread: one thread wake-up less per request. Deadlines sooner than that still do.
        timers.scheduleAtFixedRate(() -> { }, extendEveryNanos, extendEveryNanos, TimeUnit.NANOSECONDS);
    }

    synchronized void stop(Duration grace) {
        if (!stopping) {
            stopping = true;
            graceNanos = grace.toNanos();
        }
        if (receiving && receiver != null) {
            receiver.interrupt();
        }
        notifyAll(); // a runner waiting for its receiving worker drains now
    }

    synchronized boolean stopping() {
        return stopping;
    }

    long loop(long maxIterations) {
        if (workerReceives) {
            return loopOnWorker(maxIterations);
        }
        boolean interrupted = false;
        boolean failed = true;
        try {
            interrupted = receiveLoop(maxIterations, false);
            failed = false;
        } finally {
            drain(failed || stopping() || interrupted);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return taken.get();
    }

    /**
     * Concurrency 1: the worker receives and runs each request's task itself (see {@link #workerReceives});
     * this thread waits until the worker's loop ends or the run is stopped, and then drains as
     * {@link #loop} does, so a handler that outlives the grace period is interrupted and handed back, and
     * {@code run} returns, as with any concurrency. An interrupt of this thread stops the run.
     */
    private long loopOnWorker(long maxIterations) {
        boolean interrupted = false;
        boolean failed = true;
        try {
            Future<Boolean> worker = workers.submit(() -> {
                try {
                    return receiveLoop(maxIterations, true);
                } finally {
                    synchronized (this) {
                        receiverDone = true;
                        notifyAll();
                    }
                }
            });
            boolean done;
            synchronized (this) {
                while (!receiverDone && !stopping) {
                    wait();
                }
                done = receiverDone;
            }
            if (done) { // its outcome follows at once
                try {
                    worker.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) {
                        throw r;
                    }
                    if (e.getCause() instanceof Error err) {
                        throw err;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
            failed = false;
        } catch (InterruptedException e) {
            // the caller's interrupt stops the run, as it does while the caller's thread receives itself
            interrupted = !stopping();
            stop(loop.grace);
        } finally {
            drain(failed || stopping() || interrupted);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return taken.get();
    }

    /**
     * Receives and starts tasks until {@code maxIterations} receives, a stop or a failure.
     *
     * @param inline run each task on this thread (the one worker at concurrency 1) instead of a worker
     * @return whether it ended because this thread was interrupted by someone other than {@link #stop}
     */
    private boolean receiveLoop(long maxIterations, boolean inline) {
        synchronized (this) {
            receiver = Thread.currentThread();
        }
        boolean interrupted = false;
        long iterations = 0;
        int failures = 0;
        ReceiveOptions options = loop.receiveOptions;
        while (iterations < maxIterations) {
            synchronized (this) {
                if (stopping) {
                    break;
                }
                receiving = true;
            }
            int permits = 0;
            List<Message<MainLoopRequest<Req>>> got;
            List<Message<MainLoopRequest<Req>>> settling = List.of();
            try {
                synchronized (settleLock) {
                    takingSettles = true;
                }
                permits = slots.acquireUpTo(options.maxMessages());
                settling = takeSettles();
                got = source.acknowledgeAndReceive(settling, permits == options.maxMessages() ? options
                        : options.withMaxMessages(permits), this::staleSettle);
                failures = 0;
            } catch (InterruptedException e) {
                interrupted = !stopping();
                break;
            } catch (MailboxException e) {
                slots.release(permits);
                if (stopping()) {
                    // close() interrupted the receive, on Redis after its first pass had settled them
                    stoppedWhileSettling(settling, e);
                } else {
                    settleFailed(settling, e);
                }
                if (stopping() || Thread.currentThread().isInterrupted()) {
                    interrupted = !stopping();
                    break;
                }
                if (!e.isRetryable()) {
                    if (!settling.isEmpty()) {
                        continue; // it may have been the acknowledgements' failure alone: receive again without them
                    }
                    throw e;
                }
                failures++;
                long backoff = Math.min(MAX_RECEIVE_BACKOFF_MS, 100L << Math.min(failures, 6));
                LOG.warn("receive from '{}' failed ({} in a row), trying again in {} ms: {}", loop.name(),
                        failures, backoff, e.toString());
                if (!pause(backoff)) {
                    interrupted = !stopping();
                    break;
                }
                continue;
            } catch (RuntimeException | Error e) {
                slots.release(permits); // or the drain below would wait out the grace period for them
                settleFailed(settling, e);
                throw e;
            } finally {
                synchronized (this) {
                    receiving = false;
                    if (stopping) {
                        Thread.interrupted(); // the interrupt was ours; the caller's thread carries on clean
                    }
                }
            }
            iterations++;
            slots.release(permits - got.size());
            for (Message<MainLoopRequest<Req>> m : got) {
                taken.incrementAndGet();
                if (stopping()) {
                    // received as the stop came in: give it straight back
                    MainLoop.nackQuietly(m, Duration.ZERO);
                    loop.metrics.outcome("abandoned");
                    slots.release(1);
                    continue;
                }
                Task<Req, Res> task = new Task<>(this, m);
                tasks.add(task);
                if (inline) {
                    runInline(task);
                } else {
                    workers.execute(task);
                }
            }
        }
        return interrupted;
    }

    /**
     * Runs a task on the receiving worker; its acknowledgement goes with the receive that follows at once
     * (or, if the loop ends first, with the drain's batch).
     */
    private void runInline(Task<Req, Res> task) {
        synchronized (settleLock) {
            takingSettles = !settlesClosed;
        }
        task.run();
    }

    /**
     * Called by a task that has answered its request: takes over its acknowledgement if the runner
     * will receive as soon as the task's slot is released.
     *
     * @return true if the runner sends the acknowledgement; false if the task must send it itself
     */
    boolean handOver(Message<MainLoopRequest<Req>> message) {
        synchronized (settleLock) {
            if (!takingSettles || settlesClosed) {
                return false;
            }
            toSettle.add(message);
            return true;
        }
    }

    /** Ends the runner's wait for a slot; returns the acknowledgements handed over meanwhile. */
    private List<Message<MainLoopRequest<Req>>> takeSettles() {
        synchronized (settleLock) {
            takingSettles = false;
            if (toSettle.isEmpty()) {
                return List.of();
            }
            List<Message<MainLoopRequest<Req>>> out = List.copyOf(toSettle);
            toSettle.clear();
            return out;
        }
    }

    private void staleSettle(Message<MainLoopRequest<Req>> m) {
        LOG.warn("request message {} in '{}' was answered but its handle had expired; if it comes back it is"
                + " answered from memory", m.id(), loop.name());
    }

    /**
     * A call carrying acknowledgements failed, so they may or may not have been made. As when a worker's
     * own acknowledge fails, they are not sent again: a request that comes back is answered from memory.
     */
    private void settleFailed(List<Message<MainLoopRequest<Req>>> settling, Throwable e) {
        if (!settling.isEmpty()) {
            LOG.warn("acknowledging {} answered request(s) in '{}' failed; if they come back they are answered from"
                    + " memory: {}", settling.size(), loop.name(), e.toString());
        }
    }

    /**
     * Like {@link #settleFailed}, for a call that failed because the run was stopped while it waited:
     * the acknowledgements went out before the wait began (the contract of acknowledgeAndReceive), so
     * this is almost always harmless and not worth a warning at every shutdown.
     */
    private void stoppedWhileSettling(List<Message<MainLoopRequest<Req>>> settling, Throwable e) {
        if (!settling.isEmpty()) {
            LOG.debug("the run stopped during a receive that acknowledged {} answered request(s) in '{}'; if one"
                    + " comes back it is answered from memory: {}", settling.size(), loop.name(), e.toString());
        }
    }

    /**
     * Sends the acknowledgements handed over just before the runner stopped waiting for good; each
     * failure is only logged. From now on tasks acknowledge on their own.
     */
    private void flushSettles() {
        List<Message<MainLoopRequest<Req>>> rest = takeSettles();
        synchronized (settleLock) {
            settlesClosed = true;
        }
        if (rest.isEmpty()) {
            return;
        }
        try {
            source.acknowledgeBatch(rest).forEach(this::staleSettle);
        } catch (RuntimeException e) {
            settleFailed(rest, e);
        }
    }

    /** Sleeps unless stopped; true if it slept the whole time. */
    private boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            if (!stopping()) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
    }

    private void drain(boolean withGrace) {
        flushSettles(); // before waiting: from now on tasks acknowledge their own requests
        long grace;
        synchronized (this) {
            grace = stopping ? graceNanos : loop.grace.toNanos();
        }
        try {
            boolean idle = withGrace ? slots.awaitIdle(grace) : slots.awaitIdle(Long.MAX_VALUE);
            if (!idle) {
                abandonAll();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandonAll();
        }
        workers.shutdown();
        try {
            // tasks already sending their result get a moment to acknowledge
            workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timers.shutdownNow();
    }

    private void abandonAll() {
        for (Task<Req, Res> task : tasks) {
            if (task.abandon()) {
                loop.metrics.outcome("abandoned");
                LOG.info("request message {} in '{}' returned unfinished at shutdown", task.messageId(), loop.name());
            }
        }
    }
}
