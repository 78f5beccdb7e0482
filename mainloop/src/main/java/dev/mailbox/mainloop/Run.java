package dev.mailbox.mainloop;

import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One call of {@link MainLoop#run(long)}: its threads, its slots and its requests in flight. */
final class Run<Req, Res> {

    private static final Logger LOG = LoggerFactory.getLogger(MainLoop.class);
    private static final long MAX_RECEIVE_BACKOFF_MS = 5_000;

    final MainLoop<Req, Res> loop;
    final MainLoop.Slots slots;
    final Set<Task<Req, Res>> tasks = ConcurrentHashMap.newKeySet();
    final ExecutorService workers;
    final ScheduledExecutorService timers;
    private final Thread runner;

    private boolean stopping; // guarded by this
    private boolean receiving; // guarded by this: the runner may be interrupted only then
    private long graceNanos; // guarded by this

    Run(MainLoop<Req, Res> loop, Thread runner) {
        this.loop = loop;
        this.runner = runner;
        this.slots = new MainLoop.Slots(loop.concurrency);
        this.workers = loop.newWorkers();
        this.timers = loop.newTimers();
    }

    synchronized void stop(Duration grace) {
        if (!stopping) {
            stopping = true;
            graceNanos = grace.toNanos();
        }
        if (receiving) {
            runner.interrupt();
        }
    }

    synchronized boolean stopping() {
        return stopping;
    }

    long loop(long maxIterations) {
        long taken = 0;
        boolean interrupted = false;
        boolean failed = true;
        try {
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
                try {
                    permits = slots.acquireUpTo(options.maxMessages());
                    got = loop.requests.receive(permits == options.maxMessages() ? options
                            : options.withMaxMessages(permits));
                    failures = 0;
                } catch (InterruptedException e) {
                    interrupted = !stopping();
                    break;
                } catch (MailboxException e) {
                    slots.release(permits);
                    if (stopping() || Thread.currentThread().isInterrupted()) {
                        interrupted = !stopping();
                        break;
                    }
                    if (!e.isRetryable()) {
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
                    taken++;
                    if (stopping()) {
                        // received as the stop came in: give it straight back
                        MainLoop.nackQuietly(m, Duration.ZERO);
                        loop.metrics.outcome("abandoned");
                        slots.release(1);
                        continue;
                    }
                    Task<Req, Res> task = new Task<>(this, m);
                    tasks.add(task);
                    workers.execute(task);
                }
            }
            failed = false;
        } finally {
            drain(failed || stopping() || interrupted);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return taken;
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
