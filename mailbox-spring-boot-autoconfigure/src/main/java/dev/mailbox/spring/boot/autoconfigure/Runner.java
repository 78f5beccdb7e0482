package dev.mailbox.spring.boot.autoconfigure;

import java.time.Duration;

/** A listener or handler that can be started (under a fencing epoch, or 0 for none) and stopped again. */
interface Runner extends AutoCloseable {

    /** @return the mailbox it consumes */
    String mailbox();

    /**
     * Starts consuming; does nothing while it runs.
     *
     * @param epoch the lease's epoch to fence every receive and acknowledgement with, or 0 for none
     */
    void start(long epoch);

    /**
     * Stops receiving, lets running methods finish within {@code grace}, then interrupts them and returns their
     * messages, and waits until the workers have ended. Idempotent.
     *
     * @param grace how long running methods may take
     */
    void stop(Duration grace);

    /** @return whether it consumes now */
    boolean isRunning();

    /** Stops at once and releases what it holds. */
    @Override
    void close();
}
