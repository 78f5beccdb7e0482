package dev.mailbox.sqs;

import dev.mailbox.api.FencedException;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * The fence of one {@link SqsMailbox} object: the highest epoch any of its fenced views has used. SQS has
 * no conditional writes, so the fence cannot live with the messages; it lives here, and holds only for
 * calls made through this object.
 *
 * <p>A fenced call holds the read lock for as long as it talks to SQS, and raising the fence takes the
 * write lock. So raising waits until every call already admitted under the older epoch has finished,
 * and once the fence is raised no call under an older epoch reaches SQS: a compare-and-set on a plain
 * counter would let a call that passed the check just before the rise land at SQS just after it. The
 * exception is a receive, which must not hold the lock through a long poll (it would stall the new
 * holder for up to 20 s): it is admitted, then checked again when its response arrives (see
 * {@link SqsMailbox}).
 *
 * <p>The lock is fair so that a raise is not starved by a stream of calls under the old epoch; calls at
 * the same epoch share it.
 */
final class Fence {

    private final String mailbox;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
    /** Written only under the write lock; read without it by the receive's second check. */
    private volatile long value;

    Fence(String mailbox) {
        this.mailbox = mailbox;
    }

    /** @return the highest epoch used through a view so far, 0 if none */
    long value() {
        return value;
    }

    /**
     * Runs {@code action} under {@code epoch}: refuses it if the fence is higher, otherwise raises the
     * fence to {@code epoch} and runs it while holding off any further raise.
     *
     * @param epoch  the caller's epoch, or 0 for a call that is not fenced (runs at once, unchecked)
     * @param action the call to SQS
     * @throws FencedException if the fence is above {@code epoch}; {@code action} did not run
     */
    <R> R call(long epoch, Supplier<R> action) {
        return call(epoch, epoch, action);
    }

    /**
     * Runs {@code action} under the epochs {@code lowest..highest} (a batch of deliveries received under
     * several): refuses it if the fence is above {@code lowest}, otherwise raises the fence to
     * {@code highest} and runs it while holding off any further raise. One step, so a raise between the
     * check and the call cannot let an overtaken delivery through.
     *
     * @throws FencedException if the fence is above {@code lowest}; {@code action} did not run and the
     *                         fence did not move
     */
    <R> R call(long lowest, long highest, Supplier<R> action) {
        if (highest == 0) {
            return action.get();
        }
        enter(lowest, highest);
        try {
            return action.get();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** {@link #call} for an action without a result. */
    void run(long epoch, Runnable action) {
        call(epoch, () -> {
            action.run();
            return null;
        });
    }

    /**
     * Checks {@code epoch} and raises the fence to it, without holding off later raises: for a receive,
     * which checks again with {@link #check(long)} when its messages arrive.
     *
     * @throws FencedException if the fence is above {@code epoch}
     */
    void admit(long epoch) {
        if (epoch == 0) {
            return;
        }
        enter(epoch, epoch);
        lock.readLock().unlock();
    }

    /**
     * @throws FencedException if the fence has risen above {@code epoch} (0 is never fenced)
     */
    void check(long epoch) {
        long fence = value;
        if (epoch != 0 && fence > epoch) {
            throw new FencedException(mailbox, epoch, fence);
        }
    }

    /**
     * On return the caller holds the read lock and the fence is exactly {@code highest}, having been at most
     * {@code lowest} (1 or more, at most {@code highest}) before.
     */
    private void enter(long lowest, long highest) {
        lock.readLock().lock();
        long fence = value;
        if (fence == highest && lowest == highest) {
            return;
        }
        lock.readLock().unlock();
        if (fence > lowest) {
            throw new FencedException(mailbox, lowest, fence);
        }
        lock.writeLock().lock();
        try {
            fence = value;
            if (fence > lowest) {
                throw new FencedException(mailbox, lowest, fence);
            }
            value = highest;
            // downgrade: no other raise can slip in between raising and running the action
            lock.readLock().lock();
        } finally {
            lock.writeLock().unlock();
        }
    }
}
