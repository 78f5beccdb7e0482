package dev.mailbox.api;

import java.time.Instant;

/** The system clock. */
enum SystemTimeSource implements TimeSource {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Instant now() {
        return Instant.now();
    }

    @Override
    public long currentTimeMillis() {
        return System.currentTimeMillis();
    }
}
