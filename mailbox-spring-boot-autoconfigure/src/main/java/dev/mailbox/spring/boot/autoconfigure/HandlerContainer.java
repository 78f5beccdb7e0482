package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.FencedException;
import dev.mailbox.mainloop.MainLoop;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs one {@code @MainLoopHandler} method's {@link MainLoop} on a thread of its own. */
final class HandlerContainer implements Runner {

    private static final Logger LOG = LoggerFactory.getLogger(HandlerContainer.class);

    private final MainLoop<?, ?> loop;
    private final String description;
    private @Nullable Thread thread; // guarded by this

    HandlerContainer(MainLoop<?, ?> loop, String description) {
        this.loop = loop;
        this.description = description;
    }

    @Override
    public String mailbox() {
        return loop.name();
    }

    @Override
    public synchronized void start(long epoch) {
        if (thread != null && thread.isAlive()) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                if (epoch > 0) {
                    loop.runFenced(epoch);
                } else {
                    loop.run();
                }
            } catch (FencedException e) {
                LOG.warn("{}: a later lease holder has used the mailbox; this instance stops answering it: {}",
                        description, e.getMessage());
            } catch (RuntimeException e) {
                LOG.error("{} stopped: {}", description, e.toString(), e);
            }
        }, "mailbox-handler-" + loop.name());
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    @Override
    public void stop(Duration grace) {
        Thread t;
        synchronized (this) {
            t = thread;
            thread = null;
        }
        if (t == null) {
            return;
        }
        // a thread that had not yet entered run() when shutdown was called enters it afterwards: ask again
        long until = System.nanoTime() + grace.toNanos() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        boolean first = true;
        while (t.isAlive() && System.nanoTime() - until < 0) {
            loop.shutdown(first ? grace : Duration.ZERO);
            first = false;
            try {
                t.join(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (t.isAlive()) {
            LOG.warn("{} did not stop within {}", description, grace);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return thread != null && thread.isAlive();
    }

    @Override
    public void close() {
        stop(Duration.ZERO);
        loop.close();
    }

    @Override
    public String toString() {
        return description;
    }
}
