package dev.mailbox.coordination;

import dev.mailbox.mainloop.MainLoop;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MainLoop} that consumes its request mailbox only while it holds the mailbox's lease.
 *
 * <p>On {@link #start()} a thread acquires the lease (waiting, while another runner holds it, to take
 * over when that lease ends), keeps it with a {@link LeaseKeeper}, and runs the loop. If the lease is
 * lost (not renewed in time, revoked, or expired) the loop is told to stop receiving at once (handlers
 * under way get the loop's grace period) and the runner goes back to waiting for the lease. On
 * {@link #close()} it stops the loop, gives running handlers up to the shutdown grace, and releases the
 * lease, within {@link Builder#shutdownGrace} plus one coordinator call (5 s by default in all).
 *
 * <p>The lease is fenced at the mailbox: the loop runs with {@link MainLoop#runFenced} under the
 * lease's epoch, so once a runner holding a later lease has used the mailbox, this one's receives and
 * acknowledgements are refused ({@link dev.mailbox.api.FencedException}), even if it has not yet heard
 * that its lease is gone (paused, partitioned). A handler already running may still finish its own side
 * effects, so handlers stay idempotent as at-least-once delivery requires anyway; its result is not
 * acknowledged, and the request goes to the new holder.
 */
public final class LeasedRunner implements AutoCloseable {

    /** What happens to the runner, for logs and demos. Called on the runner's or the client's thread. */
    public interface Listener {
        /** @param lease the lease it now holds; the loop starts */
        default void acquired(Lease lease) {
        }

        /**
         * @param lease  the lease it lost; the loop stops receiving
         * @param reason why
         */
        default void lost(Lease lease, String reason) {
        }

        /** @param lease the lease it released on close */
        default void released(Lease lease) {
        }
    }

    /** Where the runner is. */
    public enum State {
        /** Not started. */
        NEW,
        /** Waiting for the lease (another runner holds it, or the coordinator is unreachable). */
        WAITING,
        /** Holding the lease and running the loop. */
        RUNNING,
        /** Closed. */
        STOPPED
    }

    private static final Logger LOG = LoggerFactory.getLogger(LeasedRunner.class);

    private final CoordinationClient client;
    private final MainLoop<?, ?> loop;
    private final String mailboxId;
    private final LeaseHolder holder;
    private final Duration ttl;
    private final Duration shutdownGrace;
    private final Listener listener;
    private final Thread thread;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile State state = State.NEW;
    private volatile boolean stopping;
    private volatile @Nullable LeaseKeeper keeper;
    private volatile @Nullable Lease held;

    private LeasedRunner(Builder b) {
        this.client = b.client;
        this.loop = b.loop;
        this.mailboxId = b.mailboxId != null ? b.mailboxId : b.loop.name();
        this.holder = b.holder;
        this.ttl = b.ttl;
        this.shutdownGrace = b.shutdownGrace;
        this.listener = b.listener;
        this.thread = new Thread(this::runLoop, "leased-runner-" + holder.runnerId());
        thread.setDaemon(true);
    }

    /**
     * @param client the coordinator client (not closed by the runner)
     * @param loop   the loop to run (closed by the runner)
     * @param holder who the runner is: its id, its node, and the address routes should name for the
     *               mailbox (usually the address of the node that hosts it)
     * @return a builder
     */
    public static Builder builder(CoordinationClient client, MainLoop<?, ?> loop, LeaseHolder holder) {
        return new Builder(client, loop, holder);
    }

    /**
     * Starts the runner's thread.
     *
     * @return this runner
     * @throws IllegalStateException if started before
     */
    public LeasedRunner start() {
        synchronized (this) {
            if (state != State.NEW) {
                throw new IllegalStateException("runner " + holder.runnerId() + " was started before");
            }
            state = State.WAITING;
        }
        thread.start();
        return this;
    }

    private void runLoop() {
        try {
            while (!stopping) {
                LeaseKeeper.Builder kb = client.leases().keeper(mailboxId, holder).listener(this::onLost);
                if (!ttl.isZero()) {
                    kb.ttl(ttl);
                }
                LeaseKeeper k = kb.build();
                keeper = k;
                Lease lease;
                try {
                    lease = k.acquire(Duration.ofMinutes(1));
                } catch (CoordinationException e) {
                    if (e.reason() == CoordinationException.Reason.INVALID_ARGUMENT) {
                        LOG.error("runner {}: the coordinator refuses the lease of '{}': {}", holder.runnerId(),
                                mailboxId, e.getMessage());
                        return;
                    }
                    k.close();
                    continue; // still held by another, or no coordinator: keep waiting
                } catch (IllegalStateException closedWhileWaiting) {
                    return;
                }
                if (stopping) {
                    k.close();
                    return;
                }
                held = lease;
                state = State.RUNNING;
                LOG.info("runner {} holds '{}' (lease {}, epoch {})", holder.runnerId(), mailboxId, lease.leaseId(),
                        lease.epoch());
                listener.acquired(lease);
                // the listener stops the loop when the lease is lost; this check covers a loss that
                // lands before run() has started, when stop() would find nothing to stop
                java.util.concurrent.ScheduledFuture<?> check = Recipes.timer().scheduleWithFixedDelay(() -> {
                    if (!k.isHeld()) {
                        loop.stop();
                    }
                }, 100, 100, TimeUnit.MILLISECONDS);
                try {
                    if (k.isHeld()) {
                        // fenced: once a later holder has used the mailbox, this loop can neither receive
                        // nor acknowledge, even if it has not heard yet that its lease is gone
                        loop.runFenced(lease.epoch());
                    }
                } catch (RuntimeException e) {
                    LOG.warn("runner {}: loop of '{}' failed: {}", holder.runnerId(), mailboxId, e.toString());
                } finally {
                    check.cancel(false);
                }
                if (!stopping) {
                    // the lease was lost: give it up for good (it is not ours) and wait to take it again
                    k.close();
                    held = null;
                    state = State.WAITING;
                }
            }
        } catch (RuntimeException e) {
            LOG.error("runner {} of '{}' failed and stops: {}", holder.runnerId(), mailboxId, e.toString(), e);
        } finally {
            finished.countDown();
        }
    }

    private void onLost(Lease lease, String reason) {
        LOG.warn("runner {} lost '{}' (lease {}): {}; it stops receiving", holder.runnerId(), mailboxId,
                lease.leaseId(), reason);
        loop.stop(); // does not wait: the loop stops receiving now, and run() returns after the grace
        listener.lost(lease, reason);
    }

    /** @return where the runner is */
    public State state() {
        return state;
    }

    /** @return the lease it holds, or empty */
    public java.util.Optional<Lease> lease() {
        LeaseKeeper k = keeper;
        return state == State.RUNNING && k != null && k.isHeld() ? java.util.Optional.ofNullable(held)
                : java.util.Optional.empty();
    }

    /** @return the mailbox it runs */
    public String mailboxId() {
        return mailboxId;
    }

    /** @return its runner id */
    public String runnerId() {
        return holder.runnerId();
    }

    /**
     * Stops the loop (running handlers get up to the shutdown grace), releases the lease, and closes
     * the loop. Idempotent.
     */
    @Override
    public void close() {
        if (state == State.STOPPED) {
            return;
        }
        stopping = true;
        loop.stop();
        LeaseKeeper k = keeper;
        Lease lease = held;
        try {
            if (state != State.NEW && !finished.await(shutdownGrace.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("runner {}: loop of '{}' did not stop within {}; releasing its lease anyway",
                        holder.runnerId(), mailboxId, shutdownGrace);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (k != null) {
            k.close(); // releases if still held; a waiting acquire gives up
        }
        if (lease != null) {
            listener.released(lease);
        }
        state = State.STOPPED;
        loop.shutdown(Duration.ZERO);
        thread.interrupt();
    }

    @Override
    public String toString() {
        return "LeasedRunner[" + holder.runnerId() + " on '" + mailboxId + "', " + state + "]";
    }

    /** Builds a {@link LeasedRunner}. */
    public static final class Builder {
        private final CoordinationClient client;
        private final MainLoop<?, ?> loop;
        private final LeaseHolder holder;
        private @Nullable String mailboxId;
        private Duration ttl = Duration.ZERO;
        private Duration shutdownGrace = Duration.ofSeconds(4);
        private Listener listener = new Listener() {
        };

        private Builder(CoordinationClient client, MainLoop<?, ?> loop, LeaseHolder holder) {
            this.client = Objects.requireNonNull(client, "client");
            this.loop = Objects.requireNonNull(loop, "loop");
            this.holder = Objects.requireNonNull(holder, "holder");
        }

        /**
         * @param mailboxId the lease's mailbox id, if not the loop's request mailbox name
         * @return this builder
         */
        public Builder mailboxId(String mailboxId) {
            this.mailboxId = Objects.requireNonNull(mailboxId, "mailboxId");
            return this;
        }

        /**
         * @param ttl the lease's TTL; zero (default) for the namespace's policy
         * @return this builder
         */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl.isZero() ? ttl : CoordinationLimits.requireTtl(ttl);
            return this;
        }

        /**
         * @param grace how long {@link #close()} lets running handlers finish before it releases the
         *              lease anyway; default 4 s
         * @return this builder
         */
        public Builder shutdownGrace(Duration grace) {
            if (grace.isNegative()) {
                throw new IllegalArgumentException("shutdownGrace must not be negative, was " + grace);
            }
            this.shutdownGrace = grace;
            return this;
        }

        /**
         * @param listener told when the lease is acquired, lost and released
         * @return this builder
         */
        public Builder listener(Listener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** @return the runner, not started */
        public LeasedRunner build() {
            return new LeasedRunner(this);
        }
    }
}
