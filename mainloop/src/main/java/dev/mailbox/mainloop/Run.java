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
import java.util.concurrent.ExecutorService;
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
    /** How often a drain looks again for a stop, or a shorter grace, that came while it waits for handlers. */
    private static final long DRAIN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

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
     * Whether every worker receives for itself, one request at a time, and runs that request's task (the
     * loop takes one request per receive call: concurrency 1, or {@code receiveBatch(1)}). A receiving thread
     * that handed each request to a worker would only add a thread wake-up per request. The thread that
     * called {@code run} then only waits, and drains at the end: the grace period, the interrupt of a handler
     * past it and the handing back of its request stay with that thread, and handlers still run on a worker,
     * never on the caller's thread.
     */
    private final boolean workersReceive;
    /** Receive calls this run may still make ({@link MainLoop#run(long)}), shared by its receivers. */
    private final AtomicLong receivesLeft = new AtomicLong();
    private final AtomicLong taken = new AtomicLong();
    /** Whether a receive's requests of one key run in order on one worker (a FIFO source); null until known. */
    private volatile @Nullable Boolean keyedRuns;

    /**
     * Acknowledgements that finishing tasks handed to a receiver, to go with its next receive
     * ({@link dev.mailbox.api.Mailbox#acknowledgeAndReceive}): one round trip per request instead of two
     * on Redis. A task hands its acknowledgement over only while its receiver waits for a free slot, so the
     * receive it rides on starts as soon as that task's slot is released and never waits for it; where
     * workers receive, the task runs on its receiver itself, whose next receive follows it at once.
     * Once the drain has sent what was handed over ({@link #flushSettles}), tasks acknowledge on their own.
     */
    private final Object settleLock = new Object();
    private boolean settlesClosed; // guarded by settleLock: drained; from now on tasks acknowledge on their own
    private final List<Receiver> receivers = new ArrayList<>(); // guarded by this

    private boolean stopping; // guarded by this
    private int receiversDone; // guarded by this: receivers that have left their loop (workers receiving)
    private @Nullable Throwable failure; // guarded by this: what ended a receiver's loop for the whole run
    /** Guarded by this; set once stopping: the {@link System#nanoTime} past which running handlers are handed back. */
    private long abandonAt;

    Run(MainLoop<Req, Res> loop, dev.mailbox.api.Mailbox<MainLoopRequest<Req>> source) {
        this.loop = loop;
        this.source = source;
        this.workersReceive = loop.receiveOptions.maxMessages() == 1;
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
        // a later stop with a shorter grace brings the hand-back forward; a longer one does not put it off
        long at = System.nanoTime() + grace.toNanos();
        if (!stopping || at - abandonAt < 0) {
            abandonAt = at;
        }
        stopping = true;
        for (Receiver r : receivers) {
            if (r.receiving && r.thread != null) {
                r.thread.interrupt();
            }
        }
        notifyAll(); // a runner waiting for its receiving workers drains now
    }

    /** A stop of the run's own (a failure, an interrupt): the default grace, unless a stop came first. */
    private synchronized void stopIfRunning(Duration grace) {
        if (!stopping) {
            stop(grace);
        }
    }

    synchronized boolean stopping() {
        return stopping;
    }

    long loop(long maxIterations) {
        receivesLeft.set(maxIterations);
        if (workersReceive) {
            return loopOnWorkers();
        }
        boolean interrupted = false;
        boolean failed = true;
        try {
            interrupted = receiveLoop(newReceiver(), false);
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
     * Every worker receives and runs each request's task itself (see {@link #workersReceive}); this thread
     * waits until their loops end or the run is stopped, and then drains as {@link #loop} does, so a handler
     * that outlives the grace period is interrupted and handed back, and {@code run} returns, as with a
     * receiving thread. An interrupt of this thread stops the run; so does a receiver's failure, which
     * {@code run} then throws once the others have had the grace period.
     */
    private long loopOnWorkers() {
        boolean interrupted = false;
        try {
            for (int i = 0; i < loop.concurrency; i++) {
                Receiver receiver = newReceiver();
                workers.execute(() -> {
                    Throwable thrown = null;
                    boolean cut = false;
                    try {
                        cut = receiveLoop(receiver, true);
                    } catch (RuntimeException | Error e) {
                        thrown = e;
                    } finally {
                        receiverDone(thrown, cut);
                    }
                });
            }
            synchronized (this) {
                while (receiversDone < loop.concurrency && !stopping) {
                    wait();
                }
            }
        } catch (InterruptedException e) {
            // the caller's interrupt stops the run, as it does while the caller's thread receives itself
            interrupted = !stopping();
            stopIfRunning(loop.grace);
        } finally {
            drain(stopping() || interrupted);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        Throwable failed;
        synchronized (this) {
            failed = failure;
        }
        if (failed instanceof RuntimeException r) {
            throw r;
        }
        if (failed instanceof Error e) {
            throw e;
        }
        return taken.get();
    }

    /**
     * A receiving worker has left its loop. Receives running out end every receiver's loop by themselves;
     * a failure, or an interrupt that did not come from {@link #stop}, stops the whole run (as it would a
     * single receiving thread), and the first failure is what {@code run} throws.
     */
    private synchronized void receiverDone(@Nullable Throwable thrown, boolean interrupted) {
        receiversDone++;
        if (thrown != null) {
            if (failure == null) {
                failure = thrown;
            } else if (failure != thrown) {
                failure.addSuppressed(thrown);
            }
        }
        if (thrown != null || interrupted) {
            stopIfRunning(loop.grace);
        }
        notifyAll();
    }

    private synchronized Receiver newReceiver() {
        Receiver receiver = new Receiver();
        receivers.add(receiver);
        return receiver;
    }

    /**
     * Receives and starts tasks until the run's receive calls are used up, a stop or a failure.
     *
     * @param inline run each task on this thread (a receiving worker) instead of handing it to a worker
     * @return whether it ended because this thread was interrupted by someone other than {@link #stop}
     */
    private boolean receiveLoop(Receiver receiver, boolean inline) {
        synchronized (this) {
            receiver.thread = Thread.currentThread();
        }
        try {
            return receiveUntilDone(receiver, inline);
        } finally {
            settleOnLeaving(receiver);
        }
    }

    private boolean receiveUntilDone(Receiver receiver, boolean inline) {
        boolean interrupted = false;
        int failures = 0;
        ReceiveOptions options = loop.receiveOptions;
        while (true) {
            // never below zero, so a call given back after a failure is there for whichever receiver retries
            if (receivesLeft.getAndUpdate(n -> n > 0 ? n - 1 : n) <= 0) {
                break;
            }
            synchronized (this) {
                if (stopping) {
                    break;
                }
                receiver.receiving = true;
            }
            int permits = 0;
            List<Message<MainLoopRequest<Req>>> got;
            List<Message<MainLoopRequest<Req>>> settling = List.of();
            try {
                receiver.awaitingSlot();
                permits = slots.acquireUpTo(options.maxMessages());
                settling = receiver.takeSettles();
                got = source.acknowledgeAndReceive(settling, permits == options.maxMessages() ? options
                        : options.withMaxMessages(permits), this::staleSettle);
                failures = 0;
            } catch (InterruptedException e) {
                interrupted = !stopping();
                break;
            } catch (MailboxException e) {
                slots.release(permits);
                receivesLeft.incrementAndGet(); // a call that failed does not count
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
                    receiver.receiving = false;
                    if (stopping) {
                        Thread.interrupted(); // the interrupt was ours; the caller's thread carries on clean
                    }
                }
            }
            slots.release(permits - got.size());
            taken.addAndGet(got.size());
            for (List<Message<MainLoopRequest<Req>>> unit : got.size() > 1 ? byKey(got)
                    : got.isEmpty() ? List.<List<Message<MainLoopRequest<Req>>>>of() : List.of(got)) {
                if (stopping()) {
                    // received as the stop came in: give it straight back
                    for (Message<MainLoopRequest<Req>> m : unit) {
                        MainLoop.nackQuietly(m, Duration.ZERO);
                        loop.metrics.outcome("abandoned");
                    }
                    slots.release(unit.size());
                    continue;
                }
                if (unit.size() > 1) {
                    startKeyRun(receiver, unit);
                    continue;
                }
                Task<Req, Res> task = new Task<>(this, receiver, unit.get(0));
                tasks.add(task);
                if (inline) {
                    // its acknowledgement goes with the receive that follows at once (or, if the loop ends
                    // first, with the drain's batch)
                    receiver.awaitingSlot();
                    task.run();
                } else {
                    workers.execute(task);
                }
            }
        }
        return interrupted;
    }

    /**
     * What one receive took, as the units the workers run: on a FIFO request mailbox, the requests of one key
     * (message group) together, in the order received, which is their order in the group; every other request on
     * its own. A FIFO receive may hand out several consecutive requests of one group at once (a run), and only one
     * worker taking them one after another keeps them in order and one at a time.
     */
    private List<List<Message<MainLoopRequest<Req>>>> byKey(List<Message<MainLoopRequest<Req>>> got) {
        List<List<Message<MainLoopRequest<Req>>>> units = new ArrayList<>(got.size());
        if (!keyedRuns()) {
            got.forEach(m -> units.add(List.of(m)));
            return units;
        }
        java.util.Map<String, List<Message<MainLoopRequest<Req>>>> runs = new java.util.HashMap<>();
        for (Message<MainLoopRequest<Req>> m : got) {
            String key = m.groupId();
            if (key == null) {
                units.add(List.of(m));
                continue;
            }
            List<Message<MainLoopRequest<Req>>> run = runs.get(key);
            if (run == null) {
                run = new ArrayList<>(2);
                runs.put(key, run);
                units.add(run);
            }
            run.add(m);
        }
        return units;
    }

    /** Whether the requests of one key in one receive form a run to handle in order: where the mailbox is FIFO. */
    private boolean keyedRuns() {
        Boolean known = keyedRuns;
        if (known == null) {
            try {
                known = source.capabilities().fifo();
            } catch (RuntimeException e) {
                return true; // cannot tell now: keeping a key's requests in order costs only concurrency
            }
            keyedRuns = known;
        }
        return known;
    }

    /**
     * Starts the requests of one key's run on one worker, one after another, in one slot (its others are given back
     * now: the run's later requests cannot go to anyone else while it is out anyway, being in flight themselves).
     * Each request's visibility is extended from now, while it waits too.
     */
    private void startKeyRun(Receiver receiver, List<Message<MainLoopRequest<Req>>> unit) {
        slots.release(unit.size() - 1);
        List<Task<Req, Res>> keyRun = new ArrayList<>(unit.size());
        for (Message<MainLoopRequest<Req>> m : unit) {
            Task<Req, Res> task = new Task<>(this, receiver, m, false);
            tasks.add(task);
            keyRun.add(task);
        }
        workers.execute(() -> runInOrder(keyRun));
    }

    /**
     * Runs a key's requests in order. Once one of them goes back to the mailbox unsettled (a retry, a result that
     * could not be sent, a hand-back at shutdown), the rest go back unhandled behind it, so that none is handled
     * before it.
     */
    private void runInOrder(List<Task<Req, Res>> keyRun) {
        int next = 0;
        try {
            boolean back = false;
            for (; next < keyRun.size(); next++) {
                Task<Req, Res> task = keyRun.get(next);
                if (back || task.handedBack()) {
                    back = true;
                    task.giveBackUnhandled();
                    continue;
                }
                task.run();
                back = !task.settled();
            }
        } finally {
            for (; next < keyRun.size(); next++) {
                keyRun.get(next).giveBackUnhandled(); // only after a failure of this thread's own
            }
            slots.release(1);
        }
    }

    /**
     * One thread's receiving: the acknowledgements its next receive carries, and whether a stop may
     * interrupt it.
     */
    final class Receiver {
        private final List<Message<MainLoopRequest<Req>>> toSettle = new ArrayList<>(); // guarded by settleLock
        private boolean takingSettles; // guarded by settleLock: waits for a slot (or runs its task), then receives
        private @Nullable Thread thread; // guarded by Run.this
        private boolean receiving; // guarded by Run.this: the thread may be interrupted by a stop only then

        /** From now until its next receive, finishing tasks may leave their acknowledgement to it. */
        void awaitingSlot() {
            synchronized (settleLock) {
                takingSettles = !settlesClosed;
            }
        }

        /**
         * Called by a task that has answered its request: leaves its acknowledgement to this receiver if
         * it will receive as soon as the task's slot is released, and holds fewer than a batch. (With more
         * workers than a batch, more tasks than that can finish before a receiver waiting for a slot gets to
         * run, and a receive carrying more than {@link Limits#MAX_BATCH} acknowledgements would be refused.)
         *
         * @return true if the receiver sends the acknowledgement; false if the task must send it itself
         */
        boolean handOver(Message<MainLoopRequest<Req>> message) {
            synchronized (settleLock) {
                if (!takingSettles || settlesClosed || toSettle.size() >= Limits.MAX_BATCH) {
                    return false;
                }
                toSettle.add(message);
                return true;
            }
        }

        /** Ends the wait for a slot; returns the acknowledgements handed over meanwhile. */
        private List<Message<MainLoopRequest<Req>>> takeSettles() {
            synchronized (settleLock) {
                takingSettles = false;
                return drainSettles();
            }
        }

        private List<Message<MainLoopRequest<Req>>> drainSettles() { // with settleLock held
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
     * A receiver leaves its loop: it sends the acknowledgements it holds now. Where every worker receives,
     * the others may go on for a long poll and a handler more, and held until the drain these could outlive
     * the requests' visibility timeout, so the requests would be delivered and answered again. From now on
     * tasks that finish acknowledge on their own.
     */
    private void settleOnLeaving(Receiver receiver) {
        List<Message<MainLoopRequest<Req>>> held;
        synchronized (settleLock) {
            receiver.takingSettles = false;
            held = receiver.drainSettles();
        }
        acknowledgeAll(held);
    }

    /**
     * Sends the acknowledgements handed over just before the runner stopped waiting for good; each
     * failure is only logged. From now on tasks acknowledge on their own.
     */
    private void flushSettles() {
        List<Message<MainLoopRequest<Req>>> rest = new ArrayList<>();
        synchronized (this) {
            synchronized (settleLock) {
                settlesClosed = true;
                for (Receiver r : receivers) {
                    r.takingSettles = false;
                    rest.addAll(r.drainSettles());
                }
            }
        }
        acknowledgeAll(rest);
    }

    /** Acknowledges in batches; each failure is only logged. */
    private void acknowledgeAll(List<Message<MainLoopRequest<Req>>> rest) {
        // one receiver holds at most a batch; several receivers' together may need several calls
        for (int from = 0; from < rest.size(); from += Limits.MAX_BATCH) {
            List<Message<MainLoopRequest<Req>>> batch = rest.subList(from, Math.min(rest.size(), from + Limits.MAX_BATCH));
            try {
                source.acknowledgeBatch(batch).forEach(this::staleSettle);
            } catch (RuntimeException e) {
                settleFailed(batch, e);
            }
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
        if (withGrace) {
            stopIfRunning(loop.grace); // ended by a failure or an interrupt: the default grace from now
        }
        try {
            // without a stop, waits for every handler; a stop that comes meanwhile (shutdown, close) starts the
            // grace period, and a later one with a shorter grace shortens it: looked at every DRAIN_CHECK
            while (true) {
                long left;
                boolean stopped;
                synchronized (this) {
                    stopped = stopping;
                    left = stopped ? abandonAt - System.nanoTime() : DRAIN_CHECK_NANOS;
                }
                if (stopped && left <= 0) {
                    if (!slots.awaitIdle(0)) {
                        abandonAll();
                    }
                    break;
                }
                if (slots.awaitIdle(Math.min(left, DRAIN_CHECK_NANOS))) {
                    break;
                }
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
