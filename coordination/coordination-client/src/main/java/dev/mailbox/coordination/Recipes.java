package dev.mailbox.coordination;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What the recipes of this package ({@link LeaseKeeper}, {@link RoutingTable}, {@link LeasedRunner}) share:
 * one daemon timer thread for all of them in a JVM (its tasks never block) and the backoff they retry with.
 * They use nothing of a client but its public interfaces.
 */
final class Recipes {

    private static final ScheduledThreadPoolExecutor TIMER = newTimer();

    private Recipes() {
    }

    private static ScheduledThreadPoolExecutor newTimer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "mailbox-coordination-recipes");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /** @return the shared timer; tasks must be short and must not block */
    static ScheduledThreadPoolExecutor timer() {
        return TIMER;
    }

    /**
     * @param failures how many attempts in a row have failed (1 or more)
     * @return how long to wait before the next: none after the first failure, then 50 ms doubling to 1 s,
     *         with jitter
     */
    static long backoffMillis(int failures) {
        if (failures <= 1) {
            return 0;
        }
        long pause = Math.min(1_000, 50L << Math.min(failures - 2, 10));
        return pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
    }
}
