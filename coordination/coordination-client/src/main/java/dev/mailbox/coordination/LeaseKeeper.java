package dev.mailbox.coordination;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acquires one mailbox's lease and keeps it: renews it on a schedule, tells a {@link Listener} as soon
 * as it is lost, and releases it on {@link #close()}.
 *
 * <p>The keeper counts the lease as held until the TTL has passed since it sent the last renewal the
 * coordinator accepted (or the acquire). The coordinator expires a lease only after TTL plus grace
 * from the last renewal it <em>received</em>, and a new leader restarts every lease's clock, so while
 * {@link #isHeld()} is true no other runner can have been granted the mailbox. The lease is lost when
 * a renewal is refused (expired, revoked, a stale epoch) or when no renewal gets through before that
 * time; the listener is called once, on the shared recipe timer thread, and must not block.
 *
 * <p>Made by {@link Leases#keeper}, on nothing but the {@link Leases} interface. Timers run on one shared
 * daemon thread. Thread-safe.
 */
public final class LeaseKeeper implements AutoCloseable {

    /** Told when a kept lease is lost. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param lease  the lease that was lost
         * @param reason why, for people
         */
        void leaseLost(Lease lease, String reason);
    }

    private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);

    private final Leases leases;
    private final String mailboxId;
    private final LeaseHolder holder;
    private final Duration ttl;
    private final @Nullable Duration heartbeat;
    private final Listener listener;
    /** One incarnation: every acquire attempt of this keeper carries it, so a late one changes nothing. */
    private final String incarnation = java.util.UUID.randomUUID().toString();

    private final Object lock = new Object();
    private @Nullable Lease lease; // guarded by lock
    private long validUntil; // nanoTime; guarded by lock
    private boolean lost; // guarded by lock
    private boolean closed; // guarded by lock
    private @Nullable ScheduledFuture<?> renewals; // guarded by lock
    private @Nullable ScheduledFuture<?> watchdog; // guarded by lock

    private LeaseKeeper(Builder b) {
        this.leases = b.leases;
        this.mailboxId = b.mailboxId;
        this.holder = b.holder;
        this.ttl = b.ttl;
        this.heartbeat = b.heartbeat;
        this.listener = b.listener;
    }

    /**
     * Tries once to acquire the lease and starts keeping it.
     *
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if another runner holds the mailbox, or
     *                               UNAVAILABLE if no coordinator answered
     * @throws IllegalStateException if this keeper already holds or held a lease, or is closed
     */
    public Lease acquire() {
        synchronized (lock) {
            if (closed || lease != null) {
                throw new IllegalStateException("this keeper of '" + mailboxId + "' is "
                        + (closed ? "closed" : "already used") + "; make a new one");
            }
        }
        long sent = System.nanoTime();
        Lease granted = CoordinationException.await(leases.acquireAsync(mailboxId, holder, ttl, incarnation));
        start(granted, sent);
        return granted;
    }

    /**
     * Acquires the lease, waiting while another runner holds it (trying again every heartbeat
     * interval), and starts keeping it.
     *
     * @param maxWait how long to keep trying
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if it is still held by another at the end of
     *                               the wait, or the last failure
     * @throws IllegalStateException if this keeper already holds or held a lease, or is closed
     */
    public Lease acquire(Duration maxWait) {
        long until = System.nanoTime() + maxWait.toNanos();
        long pause = Math.max(50, heartbeatMillis(ttl.isZero() ? LeasePolicy.DEFAULT.ttl().toMillis() : ttl.toMillis()) / 2);
        while (true) {
            try {
                return acquire();
            } catch (CoordinationException e) {
                boolean worthWaiting = e.reason() == CoordinationException.Reason.FAILED_PRECONDITION || e.isRetryable();
                if (!worthWaiting || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause) - until > 0) {
                    throw e;
                }
            }
            try {
                Thread.sleep(pause); // the coordinator has no "tell me when it is free" call (yet)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CoordinationException(CoordinationException.Reason.UNAVAILABLE,
                        "interrupted while waiting for the lease of '" + mailboxId + "'", e);
            }
            synchronized (lock) {
                if (closed) {
                    throw new IllegalStateException("this keeper of '" + mailboxId + "' was closed while waiting");
                }
            }
        }
    }

    private void start(Lease granted, long sent) {
        synchronized (lock) {
            if (closed) {
                // closed while acquiring: give it back at once
                releaseQuietly(granted);
                throw new IllegalStateException("this keeper of '" + mailboxId + "' was closed while acquiring");
            }
            lease = granted;
            validUntil = sent + TimeUnit.MILLISECONDS.toNanos(granted.ttlMillis());
            long every = heartbeat != null ? heartbeat.toMillis() : heartbeatMillis(granted.ttlMillis());
            renewals = Recipes.timer().scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
            armWatchdog();
        }
    }

    private static long heartbeatMillis(long ttlMillis) {
        return Math.max(1, ttlMillis / 3);
    }

    private void renew() {
        Lease l;
        synchronized (lock) {
            if (closed || lost || lease == null) {
                return;
            }
            l = lease;
        }
        long sent = System.nanoTime();
        leases.renewAsync(l).whenComplete((renewed, failure) -> {
            if (failure == null) {
                synchronized (lock) {
                    if (!lost && !closed) {
                        validUntil = Math.max(validUntil, sent + TimeUnit.MILLISECONDS.toNanos(l.ttlMillis()));
                        armWatchdog();
                    }
                }
                return;
            }
            CoordinationException e = CoordinationException.of(failure);
            if (!e.isRetryable()) {
                lose(l, "renewal refused: " + e.getMessage());
            } else {
                LOG.debug("renewal of the lease of '{}' failed; trying again: {}", mailboxId, e.getMessage());
            }
        });
    }

    /** Fires when the lease's local validity ends without a renewal getting through. Holds lock. */
    private void armWatchdog() {
        if (watchdog != null) {
            watchdog.cancel(false);
        }
        long delay = validUntil - System.nanoTime();
        Lease l = Objects.requireNonNull(lease);
        watchdog = Recipes.timer().schedule(() -> {
            boolean expired;
            synchronized (lock) {
                expired = !lost && !closed && System.nanoTime() - validUntil >= 0;
            }
            if (expired) {
                lose(l, "no renewal got through within the TTL of " + l.ttlMillis() + " ms");
            }
        }, Math.max(0, delay), TimeUnit.NANOSECONDS);
    }

    private void lose(Lease l, String reason) {
        synchronized (lock) {
            if (lost || closed) {
                return;
            }
            lost = true;
            cancelTimers();
        }
        LOG.warn("lost the lease {} of '{}' (epoch {}): {}", l.leaseId(), mailboxId, l.epoch(), reason);
        try {
            listener.leaseLost(l, reason);
        } catch (RuntimeException e) {
            LOG.warn("lease listener of '{}' failed", mailboxId, e);
        }
    }

    private void cancelTimers() {
        if (renewals != null) {
            renewals.cancel(false);
        }
        if (watchdog != null) {
            watchdog.cancel(false);
        }
    }

    /**
     * @return whether the lease is held now: granted, not lost, not closed, and within the TTL of the
     *         last renewal that got through
     */
    public boolean isHeld() {
        synchronized (lock) {
            return lease != null && !lost && !closed && System.nanoTime() - validUntil < 0;
        }
    }

    /** @return the lease as granted, or null before {@link #acquire()} */
    public @Nullable Lease lease() {
        synchronized (lock) {
            return lease;
        }
    }

    /** @return the mailbox this keeper is for */
    public String mailboxId() {
        return mailboxId;
    }

    /**
     * Stops renewing and releases the lease if it is still held. The listener is not called. Idempotent.
     */
    @Override
    public void close() {
        Lease l;
        boolean release;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            cancelTimers();
            l = lease;
            release = l != null && !lost;
        }
        if (release) {
            releaseQuietly(l);
        }
    }

    private void releaseQuietly(Lease l) {
        try {
            leases.release(l);
        } catch (CoordinationException e) {
            // it expires by itself; nothing to fence: we stopped renewing before releasing
            LOG.info("could not release the lease {} of '{}': {}", l.leaseId(), mailboxId, e.getMessage());
        }
    }

    /**
     * Starts building a keeper; {@link Leases#keeper} is the usual way in.
     *
     * @param leases    the leases to acquire and renew through
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @return the builder
     */
    public static Builder builder(Leases leases, String mailboxId, LeaseHolder holder) {
        return new Builder(leases, mailboxId, holder);
    }

    /** Builds a {@link LeaseKeeper}; get one from {@link Leases#keeper}. */
    public static final class Builder {
        private final Leases leases;
        private final String mailboxId;
        private final LeaseHolder holder;
        private Duration ttl = Duration.ZERO;
        private @Nullable Duration heartbeat;
        private Listener listener = (lease, reason) -> { };

        private Builder(Leases leases, String mailboxId, LeaseHolder holder) {
            this.leases = Objects.requireNonNull(leases, "leases");
            this.mailboxId = CoordinationLimits.requireMailboxId(mailboxId);
            this.holder = Objects.requireNonNull(holder, "holder");
        }

        /**
         * @param ttl the lease's TTL (default: the namespace's policy)
         * @return this builder
         */
        public Builder ttl(Duration ttl) {
            this.ttl = CoordinationLimits.requireTtl(ttl);
            return this;
        }

        /**
         * @param interval how often to renew (default a third of the TTL)
         * @return this builder
         */
        public Builder heartbeat(Duration interval) {
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("heartbeat must be positive, was " + interval);
            }
            this.heartbeat = interval;
            return this;
        }

        /**
         * @param listener told when the lease is lost
         * @return this builder
         */
        public Builder listener(Listener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * @return a keeper that has not acquired yet
         */
        public LeaseKeeper build() {
            if (heartbeat != null && !ttl.isZero() && heartbeat.compareTo(ttl) >= 0) {
                throw new IllegalArgumentException("heartbeat " + heartbeat + " must be shorter than the ttl " + ttl);
            }
            return new LeaseKeeper(this);
        }
    }
}
