package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.mainloop.RetryPolicy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ReflectionUtils;

/**
 * Runs one {@code @MailboxListener} method: {@code concurrency} workers, each receiving for itself (up to
 * {@code max-messages} at a time), calling the method for each message in turn, and acknowledging it with its
 * next receive ({@link Mailbox#acknowledgeAndReceive}: one round trip on Redis per message).
 *
 * <p>While the method runs, the message's visibility is extended every third of the visibility timeout. A
 * method that throws has its message nacked with the backoff for its delivery count. On stop, workers waiting
 * in a receive are woken (interrupted: nothing is lost, a receive cut short hands out nothing or hands it back),
 * messages received but not started are returned at once, running methods get the grace period and are then
 * interrupted, and their messages are returned at once too; acknowledgements still held are sent before the
 * workers end.
 *
 * <p>On a FIFO mailbox a group's order holds with any concurrency: the mailbox hands a group's messages to one
 * receive at a time (one worker), which handles them in order and acknowledges them before it receives again.
 * When the method fails for a message, the messages of its group after it in the same receive are returned
 * unhandled (last first, then the failed one with its backoff), so the group resumes at the failed message.
 */
final class ListenerContainer<T> implements Runner {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerContainer.class);
    /** After a failed receive, how long a worker waits before the next. */
    private static final Duration RECEIVE_RETRY = Duration.ofSeconds(1);

    private final Mailbox<T> mailbox;
    private final Object bean;
    private final Method method;
    private final boolean wantsMessage;
    private final int concurrency;
    private final ReceiveOptions options;
    private final Duration extendEvery;
    private final RetryPolicy backoff;
    private final ScheduledExecutorService timer;
    private final String description;
    private final Counter succeeded;
    private final Counter failed;
    private final Counter returned;
    private final Timer handlerTime;

    private @Nullable Run current; // guarded by this

    ListenerContainer(Mailbox<T> mailbox, Object bean, Method method, boolean wantsMessage, int concurrency,
                      int maxMessages, Duration visibility, Duration waitTime, RetryPolicy backoff,
                      ScheduledExecutorService timer, MeterRegistry registry, String description) {
        this.mailbox = mailbox;
        this.bean = bean;
        this.method = method;
        ReflectionUtils.makeAccessible(method);
        this.wantsMessage = wantsMessage;
        this.concurrency = concurrency;
        this.options = ReceiveOptions.defaults().withMaxMessages(maxMessages).withVisibilityTimeout(visibility)
                .withWaitTime(waitTime);
        this.extendEvery = visibility.dividedBy(3).isZero() ? Duration.ofMillis(1) : visibility.dividedBy(3);
        this.backoff = backoff;
        this.timer = timer;
        this.description = description;
        this.succeeded = counter(registry, "acknowledged");
        this.failed = counter(registry, "failed");
        this.returned = counter(registry, "returned");
        this.handlerTime = Timer.builder("mailbox.listener.time").description("time spent in the listener method")
                .tag("mailbox", mailbox.name()).register(registry);
    }

    private Counter counter(MeterRegistry registry, String outcome) {
        return Counter.builder("mailbox.listener.messages")
                .description("messages a listener took, by how they ended: acknowledged, failed (nacked with"
                        + " backoff) or returned (at shutdown)")
                .tag("mailbox", mailbox.name()).tag("outcome", outcome).register(registry);
    }

    @Override
    public String mailbox() {
        return mailbox.name();
    }

    @Override
    public synchronized void start(long epoch) {
        if (current != null && current.alive()) {
            return;
        }
        current = new Run(epoch > 0 ? mailbox.fenced(epoch) : mailbox);
        current.start();
    }

    @Override
    public void stop(Duration grace) {
        Run r;
        synchronized (this) {
            r = current;
            current = null;
        }
        if (r != null) {
            r.stop(grace);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return current != null && current.alive();
    }

    @Override
    public void close() {
        stop(Duration.ZERO);
    }

    @Override
    public String toString() {
        return description;
    }

    /** One start-to-stop of the workers. */
    private final class Run {
        private final Mailbox<T> source;
        private final List<Worker> workers = new ArrayList<>();
        private volatile boolean stopping;
        /** Past the grace period: whatever is not finished is returned at once. */
        private volatile boolean abandoning;

        Run(Mailbox<T> source) {
            this.source = source;
            for (int i = 0; i < concurrency; i++) {
                workers.add(new Worker(this, i + 1));
            }
        }

        void start() {
            workers.forEach(w -> w.thread.start());
        }

        boolean alive() {
            return !stopping && workers.stream().anyMatch(w -> w.thread.isAlive());
        }

        void stop(Duration grace) {
            stopping = true;
            workers.forEach(Worker::wakeIfWaiting);
            long until = System.nanoTime() + grace.toNanos();
            if (!joinAll(until)) {
                abandoning = true;
                LOG.warn("{}: methods still running after the grace period of {}; interrupting them and returning"
                        + " their messages", description, grace);
                workers.forEach(Worker::interrupt); // the methods (and receives), never a settle
                // a receive that cannot be cut short (an SQS call under way) ends within its wait time
                if (!joinAll(System.nanoTime() + options.waitTime().toNanos() + TimeUnit.SECONDS.toNanos(5))) {
                    LOG.warn("{}: workers did not end; they return their messages when they do", description);
                }
            }
        }

        private boolean joinAll(long until) {
            for (Worker w : workers) {
                long left = until - System.nanoTime();
                try {
                    if (left > 0) {
                        TimeUnit.NANOSECONDS.timedJoin(w.thread, left);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                if (w.thread.isAlive()) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * One thread: receive, call the method for each message, acknowledge with the next receive.
     *
     * <p>Every message the worker holds (received and not yet settled: waiting its turn in a batch, being
     * handled, or handled and waiting for the next receive to acknowledge it) is kept invisible by one
     * extension task. A message leaves {@link #held} under {@link #extending} before it is settled, so an
     * extension never reaches the mailbox after the acknowledgement or nack (on SQS a late extension would
     * undo a nack's backoff).
     */
    private final class Worker implements Runnable {
        private final Run run;
        private final Thread thread;
        /** Whether the mailbox is FIFO: known once the thread runs (a remote mailbox asks its node). */
        private boolean fifo;
        private final Object lock = new Object();
        /** Whether the thread is in a receive, a pause between receives, or the method: what an interrupt may cut. */
        private boolean interruptible; // guarded by lock
        /** Whether it is in a receive or a pause, where an interrupt only wakes it. */
        private boolean waiting; // guarded by lock
        private List<Message<T>> done = new ArrayList<>();
        /** Held while extending, and by a settle that takes messages out of {@link #held}. */
        private final Object extending = new Object();
        private final List<Message<T>> held = new ArrayList<>(); // guarded by extending
        private @Nullable ScheduledFuture<?> extension; // guarded by extending

        Worker(Run run, int n) {
            this.run = run;
            this.thread = new Thread(this, "mailbox-listener-" + mailbox.name() + "-" + n);
            thread.setDaemon(true);
        }

        void wakeIfWaiting() {
            synchronized (lock) {
                if (waiting) {
                    thread.interrupt();
                }
            }
        }

        /** Cuts a receive or a method short; never a settle call (the SQS client drops a call made interrupted). */
        void interrupt() {
            synchronized (lock) {
                if (interruptible) {
                    thread.interrupt();
                }
            }
        }

        private void interruptible(boolean on, boolean wait) {
            synchronized (lock) {
                interruptible = on;
                waiting = wait;
            }
            if (!on) {
                Thread.interrupted(); // what was meant for the receive or the method stays there
            }
        }

        @Override
        public void run() {
            try {
                fifo = fifo();
                while (!run.stopping) {
                    List<Message<T>> received = receive();
                    if (received == null) {
                        break;
                    }
                    hold(received);
                    // a slot is null once its message went back with an earlier failed one of its group
                    List<@Nullable Message<T>> got = new ArrayList<>(received);
                    for (int i = 0; i < got.size(); i++) {
                        Message<T> m = got.get(i);
                        if (m == null) {
                            continue;
                        }
                        if (run.stopping) {
                            // received but not started: back at once, for another instance; last first, so that
                            // on a FIFO mailbox each group's first message is the last to become visible again
                            for (int j = got.size() - 1; j >= i; j--) {
                                Message<T> left = got.get(j);
                                if (left != null) {
                                    giveBack(left);
                                }
                            }
                            break;
                        }
                        handle(m, got, i);
                    }
                }
            } finally {
                flush();
                synchronized (extending) {
                    held.clear();
                    stopExtending();
                }
            }
        }

        private boolean fifo() {
            try {
                return mailbox.capabilities().fifo();
            } catch (RuntimeException e) {
                // treated as FIFO: returning the rest of a group after a failure costs only a redelivery
                LOG.debug("{}: capabilities unknown ({}); group order kept as on a FIFO mailbox", description,
                        e.toString());
                return true;
            }
        }

        /**
         * After the method failed for {@code got[failed]} on a FIFO mailbox, returns the messages of its group that
         * came after it in the same receive, last first, and clears their slots: handling them now would put them
         * before the failed message, which the mailbox hands out again first.
         */
        private void giveBackRestOfGroup(List<@Nullable Message<T>> got, int failed) {
            String group = got.get(failed).groupId();
            if (!fifo || group == null) {
                return;
            }
            for (int j = got.size() - 1; j > failed; j--) {
                Message<T> later = got.get(j);
                if (later != null && group.equals(later.groupId())) {
                    giveBack(later);
                    got.set(j, null);
                }
            }
        }

        /** @return the messages, or null to end the worker */
        private @Nullable List<Message<T>> receive() {
            List<Message<T>> settle = done;
            done = new ArrayList<>();
            release(settle);
            synchronized (lock) {
                if (run.stopping) {
                    done = settle; // acknowledged as the worker ends
                    return null;
                }
                interruptible = true;
                waiting = true;
            }
            try {
                return run.source.acknowledgeAndReceive(settle, options,
                        stale -> LOG.debug("{}: message {} was not acknowledged: its handle was stale (it comes back"
                                + " to be handled again)", description, stale.id()));
            } catch (FencedException e) {
                LOG.warn("{}: a later lease holder has used the mailbox; this instance stops consuming it: {}",
                        description, e.getMessage());
                run.stopping = true; // what it held can no longer be acknowledged from here
                return null;
            } catch (MailboxClosedException e) {
                return null;
            } catch (MailboxException | IllegalArgumentException e) {
                // the acknowledgements may not have been made: kept, and sent again (a repeat is reported stale)
                interruptible(false, false);
                done = settle;
                hold(settle);
                if (run.stopping) {
                    return null;
                }
                LOG.warn("{}: receive failed, trying again in {}: {}", description, RECEIVE_RETRY, e.toString());
                pause();
                return List.of();
            } finally {
                interruptible(false, false);
            }
        }

        private void pause() {
            synchronized (lock) {
                if (run.stopping) {
                    return;
                }
                interruptible = true;
                waiting = true;
            }
            try {
                Thread.sleep(RECEIVE_RETRY.toMillis());
            } catch (InterruptedException e) {
                // woken to stop
            } finally {
                interruptible(false, false);
            }
        }

        /** Starts keeping what a receive handed out invisible. */
        private void hold(List<Message<T>> got) {
            if (got.isEmpty()) {
                return;
            }
            synchronized (extending) {
                held.addAll(got);
                if (extension == null) {
                    extension = timer.scheduleAtFixedRate(this::extendHeld, extendEvery.toNanos(),
                            extendEvery.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
        }

        /**
         * Stops keeping these invisible, waiting for an extension under way to end, so that whatever the caller
         * does to them next comes after it.
         */
        private void release(List<Message<T>> settled) {
            if (settled.isEmpty()) {
                return;
            }
            synchronized (extending) {
                held.removeAll(settled);
                if (held.isEmpty()) {
                    stopExtending();
                }
            }
        }

        private void stopExtending() { // holds extending
            if (extension != null) {
                extension.cancel(false);
                extension = null;
            }
        }

        private void extendHeld() {
            synchronized (extending) {
                for (java.util.Iterator<Message<T>> it = held.iterator(); it.hasNext(); ) {
                    Message<T> m = it.next();
                    try {
                        m.extendVisibility(options.visibilityTimeout());
                    } catch (ReceiptHandleExpiredException | FencedException e) {
                        LOG.warn("{}: message {} could not be kept invisible: {}", description, m.id(), e.getMessage());
                        it.remove(); // extending it again cannot help; settling it reports it stale
                    } catch (RuntimeException e) {
                        LOG.debug("{}: extending message {} failed: {}", description, m.id(), e.toString());
                    }
                }
            }
        }

        private void handle(Message<T> m, List<@Nullable Message<T>> got, int index) {
            long start = System.nanoTime();
            Throwable failure = null;
            interruptible(true, false);
            try {
                method.invoke(bean, wantsMessage ? m : m.body());
            } catch (InvocationTargetException e) {
                failure = e.getCause() != null ? e.getCause() : e;
            } catch (IllegalAccessException e) {
                failure = e;
            } catch (MailboxException e) {
                failure = e; // the body could not be decoded: a failure like any other, so it ends as a dead letter
            } finally {
                interruptible(false, false);
                handlerTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            }
            if (failure == null) {
                succeeded.increment();
                done.add(m); // still held: kept invisible until the next receive acknowledges it
                if (run.stopping) {
                    flush(); // no next receive to carry it
                }
                return;
            }
            giveBackRestOfGroup(got, index);
            if (run.abandoning) {
                giveBack(m);
                return;
            }
            Duration delay = backoff.backoff(m.deliveryCount());
            LOG.warn("{}: message {} failed (delivery {}); it comes back in {}", description, m.id(),
                    m.deliveryCount(), delay, failure);
            failed.increment();
            release(List.of(m));
            try {
                m.nack(delay);
            } catch (RuntimeException e) {
                LOG.debug("{}: nack of {} failed; it comes back after its visibility timeout: {}", description,
                        m.id(), e.toString());
            }
        }

        private void giveBack(Message<T> m) {
            returned.increment();
            release(List.of(m));
            try {
                m.nack(Duration.ZERO);
            } catch (RuntimeException e) {
                LOG.debug("{}: returning {} failed; it comes back after its visibility timeout: {}", description,
                        m.id(), e.toString());
            }
        }

        private void flush() {
            if (done.isEmpty()) {
                return;
            }
            List<Message<T>> settle = done;
            done = new ArrayList<>();
            release(settle);
            try {
                for (Message<T> stale : run.source.acknowledgeBatch(settle)) {
                    LOG.debug("{}: message {} was not acknowledged: its handle was stale", description, stale.id());
                }
            } catch (RuntimeException e) {
                LOG.warn("{}: acknowledging {} messages failed; they come back after their visibility timeout: {}",
                        description, settle.size(), e.toString());
            }
        }
    }
}
