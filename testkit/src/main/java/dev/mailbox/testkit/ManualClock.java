package dev.mailbox.testkit;

import dev.mailbox.api.TimeSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link TimeSource} that moves only when {@link #advance(Duration)} is called, so tests of delays,
 * visibility timeouts and long polls run instantly and deterministically. Advancing wakes every
 * mailbox built on this clock so that blocked receives re-read the time. Thread-safe.
 *
 * <pre>{@code
 * ManualClock clock = new ManualClock();
 * var mailbox = InMemoryMailbox.builder("jobs", Codec.utf8()).timeSource(clock).build();
 * mailbox.send("x");
 * mailbox.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(30)));
 * clock.advance(Duration.ofSeconds(30)); // the message is visible again
 * }</pre>
 */
public final class ManualClock implements TimeSource {

    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final Object guard = new Object();
    private long nanos;
    private Instant wall;

    /** A clock at 2030-01-01T00:00:00Z. */
    public ManualClock() {
        this(Instant.parse("2030-01-01T00:00:00Z"));
    }

    /**
     * @param start the wall-clock time to start at
     */
    public ManualClock(Instant start) {
        this.wall = Objects.requireNonNull(start, "start");
    }

    /**
     * Moves time forward and wakes everything that waits on this clock.
     *
     * @param duration how far, zero or positive
     * @return this clock
     */
    public ManualClock advance(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("a clock cannot go back: duration was " + duration);
        }
        synchronized (guard) {
            nanos += duration.toNanos();
            wall = wall.plus(duration);
        }
        listeners.forEach(Runnable::run);
        return this;
    }

    /**
     * @param millis how many milliseconds to move forward
     * @return this clock
     */
    public ManualClock advanceMillis(long millis) {
        return advance(Duration.ofMillis(millis));
    }

    @Override
    public long nanoTime() {
        synchronized (guard) {
            return nanos;
        }
    }

    @Override
    public Instant now() {
        synchronized (guard) {
            return wall;
        }
    }

    @Override
    public void addListener(Runnable listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void removeListener(Runnable listener) {
        listeners.remove(listener);
    }

    @Override
    public String toString() {
        return "ManualClock[" + now() + "]";
    }
}
