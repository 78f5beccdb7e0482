package dev.mailbox.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/** What listener methods saw, for a test thread to wait on. Thread-safe. */
public final class Recorder<T> {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition added = lock.newCondition();
    private final List<T> seen = new ArrayList<>();

    public void add(T value) {
        lock.lock();
        try {
            seen.add(value);
            added.signalAll();
        } finally {
            lock.unlock();
        }
    }

    public List<T> all() {
        lock.lock();
        try {
            return List.copyOf(seen);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until {@code done} holds for what was seen, and returns it; fails after the timeout. */
    public List<T> await(Predicate<List<T>> done, Duration timeout, String what) {
        long until = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (!done.test(seen)) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("timed out after " + timeout + " waiting for " + what + "; saw " + seen);
                }
                added.await(left, TimeUnit.NANOSECONDS);
            }
            return List.copyOf(seen);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            lock.unlock();
        }
    }

    public List<T> awaitCount(int n, Duration timeout) {
        return await(s -> s.size() >= n, timeout, n + " items");
    }
}
