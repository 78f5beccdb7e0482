package dev.mailbox.redis;


import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** What both Redis contract runs share: time steps and a precise "blocked in receive" check. */
final class RedisContractSupport {

    /** Half a second: Redis keeps milliseconds, and this leaves margin on a busy 2-core machine. */
    static final Duration TICK = Duration.ofMillis(500);

    private RedisContractSupport() {
    }

    /** A receive is blocked once its thread sleeps inside WakeHub.await, waiting for a notice. */
    static void awaitBlockedInReceive(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            if (thread.getState() == Thread.State.TERMINATED) {
                return;
            }
            for (StackTraceElement frame : thread.getStackTrace()) {
                if (frame.getClassName().equals(WakeHub.class.getName()) && frame.getMethodName().equals("await")
                        && (thread.getState() == Thread.State.TIMED_WAITING || thread.getState() == Thread.State.WAITING)) {
                    return;
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError(thread.getName() + " never blocked in a receive");
    }

}
