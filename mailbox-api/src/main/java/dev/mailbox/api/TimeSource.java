package dev.mailbox.api;

import java.time.Instant;

/**
 * Where a backend that keeps time itself (the in-memory backend) reads it. Production code uses
 * {@link #system()}; tests use a manual clock (the testkit's {@code ManualClock}) so that visibility
 * timeouts and delays can pass without sleeping.
 *
 * <p>A time source that can jump (a manual clock) must tell listeners after every jump, so that a
 * receive blocked until a deadline re-reads the time. Implementations must be thread-safe.
 */
public interface TimeSource {

    /** @return a monotonic reading in nanoseconds, only meaningful as a difference */
    long nanoTime();

    /** @return the wall-clock time, used for timestamps such as {@link Message#enqueuedAt()} */
    Instant now();

    /** @return the wall-clock time in milliseconds since the epoch; the same instant as {@link #now()} */
    default long currentTimeMillis() {
        return now().toEpochMilli();
    }

    /**
     * Registers a callback run after the time jumps forward. The system clock never jumps, so its
     * implementation does nothing.
     *
     * @param listener run on the thread that moved the clock; must be quick and must not block
     */
    default void addListener(Runnable listener) {
    }

    /**
     * Removes a callback added with {@link #addListener(Runnable)}.
     *
     * @param listener the callback
     */
    default void removeListener(Runnable listener) {
    }

    /** @return the system clock: {@link System#nanoTime()} and {@link Instant#now()} */
    static TimeSource system() {
        return SystemTimeSource.INSTANCE;
    }
}
