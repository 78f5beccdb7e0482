package dev.mailbox.testkit;

import java.time.Duration;
import java.util.function.Predicate;

/** Waiting for another thread to reach a blocking point, without sleeping for a guessed time. */
public final class Threads {

    private Threads() {
    }

    /**
     * Waits until {@code thread} is parked (WAITING or TIMED_WAITING) with a frame on its stack that
     * {@code where} accepts, or has ended.
     *
     * @param thread  the thread to watch
     * @param where   which stack frame marks the blocking point, e.g. the backend's wait method
     * @param timeout how long to wait at most
     * @throws AssertionError if the thread did not get there in time
     */
    public static void awaitParkedIn(Thread thread, Predicate<StackTraceElement> where, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            Thread.State state = thread.getState();
            if (state == Thread.State.TERMINATED) {
                return;
            }
            if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
                for (StackTraceElement frame : thread.getStackTrace()) {
                    if (where.test(frame)) {
                        return;
                    }
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError(thread.getName() + " did not block where expected within " + timeout
                + "; it is " + thread.getState());
    }

    /**
     * Waits until {@code thread} is parked anywhere, or has ended.
     *
     * @param thread  the thread to watch
     * @param timeout how long to wait at most
     * @throws AssertionError if the thread did not park in time
     */
    public static void awaitParked(Thread thread, Duration timeout) {
        awaitParkedIn(thread, frame -> true, timeout);
    }
}
