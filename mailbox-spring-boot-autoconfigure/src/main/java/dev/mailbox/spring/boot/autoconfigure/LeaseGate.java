package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinated mode's gate: a thread acquires the application's lease (waiting while another instance
 * holds it), starts every runner fenced by the lease's epoch, and when the lease is lost stops them and waits
 * for the lease again. Closing it stops the runners within the grace period and then releases the lease, so
 * that a waiting instance takes over at once rather than after the lease's TTL.
 */
final class LeaseGate implements Gate {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseGate.class);

    /** Where the gate is, for health. */
    enum State { NEW, WAITING, HOLDING, CLOSED }

    private final CoordinationClient client;
    private final String leaseId;
    private final LeaseHolder holder;
    private final Duration ttl;
    private final Object lock = new Object();
    /** Held while the runners are started or stopped, so a close never overtakes a start. */
    private final Object runLock = new Object();
    private @Nullable Thread thread; // guarded by lock
    private @Nullable LeaseKeeper keeper; // guarded by lock
    private @Nullable Lease held; // guarded by lock
    private State state = State.NEW; // guarded by lock
    private boolean closing; // guarded by lock
    private boolean lost; // guarded by lock
    private @Nullable Consumer<Duration> stopAll; // guarded by lock

    LeaseGate(CoordinationClient client, String leaseId, LeaseHolder holder, Duration ttl) {
        this.client = client;
        this.leaseId = leaseId;
        this.holder = holder;
        this.ttl = ttl;
    }

    @Override
    public void open(LongConsumer startAll, Consumer<Duration> stopAll) {
        synchronized (lock) {
            if (thread != null) {
                return;
            }
            this.stopAll = stopAll;
            closing = false;
            state = State.WAITING;
            Thread t = new Thread(() -> loop(startAll, stopAll), "mailbox-lease-" + leaseId);
            t.setDaemon(true);
            thread = t;
            t.start();
        }
    }

    private void loop(LongConsumer startAll, Consumer<Duration> stopAll) {
        while (true) {
            LeaseKeeper k;
            synchronized (lock) {
                if (closing) {
                    return;
                }
                LeaseKeeper.Builder b = client.leases().keeper(leaseId, holder).listener(this::lost);
                if (!ttl.isZero()) {
                    b.ttl(ttl);
                }
                k = b.build();
                keeper = k;
                lost = false;
                state = State.WAITING;
            }
            Lease lease;
            try {
                lease = k.acquire(Duration.ofMinutes(1));
            } catch (CoordinationException e) {
                if (e.reason() == CoordinationException.Reason.INVALID_ARGUMENT) {
                    LOG.error("the coordinator refuses the lease '{}' for {}: {}; listeners will not run", leaseId,
                            holder, e.getMessage());
                    return;
                }
                k.close();
                continue; // held by another instance, or no coordinator yet: keep waiting
            } catch (IllegalStateException closedWhileWaiting) {
                return;
            }
            synchronized (runLock) {
                synchronized (lock) {
                    if (closing) {
                        k.close();
                        return;
                    }
                    held = lease;
                    state = State.HOLDING;
                }
                LOG.info("holding lease '{}' (epoch {}): mailbox listeners start", leaseId, lease.epoch());
                startAll.accept(lease.epoch());
            }
            synchronized (lock) {
                while (!lost && !closing) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closing) {
                    return; // close() stops the runners and releases
                }
            }
            LOG.warn("lost lease '{}' (epoch {}): mailbox listeners stop until it is held again", leaseId, lease.epoch());
            // the lease is not ours any more: a successor fences us out, so there is nothing to finish gracefully
            synchronized (runLock) {
                stopAll.accept(Duration.ZERO);
            }
            k.close();
            synchronized (lock) {
                held = null;
            }
        }
    }

    private void lost(Lease lease, String reason) {
        synchronized (lock) {
            lost = true;
            lock.notifyAll();
        }
    }

    @Override
    public void close(Duration grace) {
        Thread t;
        LeaseKeeper k;
        Consumer<Duration> stop;
        synchronized (lock) {
            if (state == State.CLOSED || thread == null) {
                state = State.CLOSED;
                return;
            }
            closing = true;
            lock.notifyAll();
            t = thread;
            k = keeper;
            stop = stopAll;
        }
        // stop first, release after: the successor must not start while our methods still run
        synchronized (runLock) {
            if (stop != null) {
                stop.accept(grace);
            }
        }
        if (k != null) {
            k.close(); // releases a held lease; ends a waiting acquire
        }
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (lock) {
            state = State.CLOSED;
            held = null;
            thread = null;
        }
    }

    State state() {
        synchronized (lock) {
            return state;
        }
    }

    @Override
    public Map<String, Object> details() {
        Map<String, Object> d = new LinkedHashMap<>();
        synchronized (lock) {
            d.put("lease", leaseId);
            d.put("runnerId", holder.runnerId());
            d.put("state", state == State.HOLDING && keeper != null && !keeper.isHeld() ? "LOSING" : state.name());
            if (held != null && state == State.HOLDING) {
                d.put("epoch", held.epoch());
            }
        }
        return d;
    }

    CoordinationClient client() {
        return client;
    }
}
