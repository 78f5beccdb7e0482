package dev.mailbox.coordination.server.internal;

import org.apache.ratis.server.impl.MailboxFollowerProbe;
import org.apache.ratis.server.impl.MailboxFollowerProbe.Silence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * Starts an election on a follower as soon as its leader has been silent for this follower's election
 * timeout, instead of when Ratis's own timer next looks (between one and about two timeouts after the last
 * heartbeat: see {@link MailboxFollowerProbe}). Ratis's timer stays as it is and still fires when it comes
 * first.
 *
 * <p>The timeout is drawn anew after each contact from a leader, within {@code [min, max]}, never below
 * {@code min} (the leader lease relies on that) and a sixteenth of it over when the range allows, and members
 * take turns: the member of rank {@code r} among {@code n} voters draws from the first half of the
 * {@code r}-th of {@code n} equal slices of what remains of the range. Two
 * followers who lost the same leader therefore stand at least half a slice apart (25 ms for three members
 * and 150–300 ms) rather than at two independent random moments, which coincide within a vote's round trip
 * often enough to cost a failover a second round. A member whose log is behind stands first and loses; the
 * next one stands at its own time.
 *
 * <p>Thread-safety: {@link #tick} runs on one thread (the watch's own, once {@link #start}ed).
 */
public final class ElectionWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ElectionWatch.class);

    /** How often the follower's silence is read: the granularity of the detection. */
    static final long TICK_MILLIS = 10;

    /** This node's division, as the watch sees it. */
    public interface Follower {
        /** @return the follower's silence now, or null if it is not a voting follower */
        Silence silence();

        /**
         * @param read what {@link #silence} returned
         * @return true if the follower became a candidate
         */
        boolean stand(Silence read);
    }

    private final String nodeId;
    private final long minMillis;
    private final long maxMillis;
    private final DoubleSupplier random;
    private final AtomicLong elections = new AtomicLong();
    private ScheduledExecutorService thread;

    private Object contact; // the last contact seen, by identity
    private long timeoutMillis;
    private boolean declined; // this contact's silence was already acted on (or refused)

    /**
     * @param nodeId     for the log
     * @param minMillis  the shortest election timeout
     * @param maxMillis  the longest
     * @param random     values in [0, 1) for the draw
     */
    public ElectionWatch(String nodeId, long minMillis, long maxMillis, DoubleSupplier random) {
        if (minMillis <= 0 || maxMillis < minMillis) {
            throw new IllegalArgumentException("election timeouts must satisfy 0 < min <= max, got " + minMillis
                    + " and " + maxMillis);
        }
        this.nodeId = nodeId;
        this.minMillis = minMillis;
        this.maxMillis = maxMillis;
        this.random = random;
    }

    /** A watch drawing from {@link ThreadLocalRandom}. */
    public ElectionWatch(String nodeId, long minMillis, long maxMillis) {
        this(nodeId, minMillis, maxMillis, () -> ThreadLocalRandom.current().nextDouble());
    }

    /** Looks at the follower every {@link #TICK_MILLIS} on a daemon thread of its own until {@link #close}. */
    public synchronized void start(Follower follower) {
        if (thread != null) {
            throw new IllegalStateException("already started");
        }
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "coordinator-election-watch-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(() -> {
            try {
                tick(follower);
            } catch (RuntimeException e) {
                LOG.debug("election watch on {}: {}", nodeId, e.toString());
            }
        }, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * One look: draws a timeout for a new contact, and makes the follower stand once the silence since that
     * contact reached it (once per contact).
     */
    void tick(Follower follower) {
        Silence now = follower.silence();
        if (now == null) {
            contact = null;
            return;
        }
        if (now.contact() != contact) {
            contact = now.contact();
            timeoutMillis = draw(now.rank(), now.voters());
            declined = false;
        }
        if (declined || now.silentMillis() < timeoutMillis) {
            return;
        }
        declined = true; // stand at most once per contact; Ratis's own timer covers a refusal
        if (follower.stand(now)) {
            elections.incrementAndGet();
            LOG.info("coordinator {} stands for election: no word from a leader for {} ms (its timeout {} ms)", nodeId,
                    now.silentMillis(), timeoutMillis);
        }
    }

    /** @return the timeout for a member of {@code rank} among {@code voters}, in [min, max] */
    long draw(int rank, int voters) {
        // a little over min: the other followers heard the dead leader's last heartbeat a moment later, and
        // one whose silence is still under min rejects the (pre-)vote ("its leader is still valid")
        long margin = Math.min(minMillis / 16, maxMillis - minMillis);
        double slice = (double) (maxMillis - minMillis - margin) / Math.max(1, voters);
        int r = Math.max(0, Math.min(rank, voters - 1));
        return minMillis + margin + (long) (slice * (r + 0.5 * random.getAsDouble()));
    }

    /** @return how many elections this watch started (Ratis's own timer's are not counted) */
    public long electionsStarted() {
        return elections.get();
    }

    @Override
    public synchronized void close() {
        if (thread != null) {
            thread.shutdownNow();
        }
    }
}
