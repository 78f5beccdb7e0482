package dev.mailbox.mainloop;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * Someone else's blocking work (a parallel stream doing I/O, a blocking stage) holding every thread of the
 * JVM's common pool until closed: for tests that the loop and its client never wait on that pool.
 */
final class BusyCommonPool implements AutoCloseable {

    private final CountDownLatch release = new CountDownLatch(1);

    /** Returns once every common-pool thread is blocked. */
    BusyCommonPool() throws InterruptedException {
        int n = ForkJoinPool.getCommonPoolParallelism();
        CountDownLatch busy = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            ForkJoinPool.commonPool().execute(() -> {
                busy.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        if (!busy.await(10, TimeUnit.SECONDS)) {
            release.countDown();
            throw new AssertionError("the common pool's " + n + " threads did not all start within 10 s");
        }
    }

    @Override
    public void close() {
        release.countDown();
    }
}
