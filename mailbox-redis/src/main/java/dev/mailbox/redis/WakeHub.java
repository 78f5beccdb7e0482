package dev.mailbox.redis;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.util.Pool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wakes this process's blocked receives of one mailbox. The scripts PUBLISH on the mailbox's channel
 * when messages become visible ({@code r<n>}) or a deadline earlier than any before appears
 * ({@code t<due ms>}); one subscriber connection per mailbox hears it, and waiters sleep on a local
 * condition, so a blocked receive holds no Redis connection and sends no command while it waits.
 *
 * <p>A waiter reads {@link #generation()} before it runs the receive script and only sleeps if no
 * notice arrived since: a notice published between the script and the sleep cannot be missed. If the
 * subscription is down, waiters sleep at most {@link #DEGRADED_SLEEP_MS} and poll; when it comes (back)
 * up the generation moves, so everyone runs the script again and nothing sent meanwhile waits for a poll.
 * That is also why nobody waits for the subscription before its first script: a receive's
 * acknowledgements and the messages already there never wait for pub/sub.
 */
final class WakeHub implements AutoCloseable {

    /** Longest sleep while subscribed: a safety net for a lost notice, costing one script call. */
    static final long SUBSCRIBED_SLEEP_MS = 5_000;
    /** Longest sleep while not subscribed: two script calls a second at most. */
    static final long DEGRADED_SLEEP_MS = 500;

    private static final Logger LOG = LoggerFactory.getLogger(WakeHub.class);

    private final UnifiedJedis client;
    private final String channel;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // guarded by lock
    private long generation;
    private final List<long[]> plannedWakes = new ArrayList<>(); // server ms each waiter will wake at
    private boolean subscribed;
    private boolean closed;
    private Thread thread;
    private Listener listener;

    WakeHub(UnifiedJedis client, String channel) {
        this.client = client;
        this.channel = channel;
    }

    long generation() {
        lock.lock();
        try {
            return generation;
        } finally {
            lock.unlock();
        }
    }

    /** Starts the subscriber if it is not running; does not wait for it (see the class comment). */
    void start() {
        lock.lock();
        try {
            if (closed || thread != null) {
                return;
            }
            thread = new Thread(this::subscribeLoop, "mailbox-wake-" + channel);
            thread.setDaemon(true);
            thread.start();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sleeps until a notice arrives after generation {@code seen}, {@code sleepMs} pass, or the hub
     * closes.
     *
     * @param plannedWakeServerMs when, in the server's time, this waiter means to wake anyway
     */
    void await(long seen, long sleepMs, long plannedWakeServerMs) throws InterruptedException {
        lock.lock();
        try {
            if (generation != seen || closed) {
                return;
            }
            long cap = subscribed ? SUBSCRIBED_SLEEP_MS : DEGRADED_SLEEP_MS;
            long[] planned = {plannedWakeServerMs};
            plannedWakes.add(planned);
            try {
                changed.await(Math.max(1, Math.min(sleepMs, cap)), TimeUnit.MILLISECONDS);
            } finally {
                plannedWakes.remove(planned);
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the subscription is up and its confirmation handled (for tests) */
    boolean isSubscribed() {
        lock.lock();
        try {
            return subscribed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A waiter leaves without running a receive to the end (its pass threw): a notice that woke it
     * alone ({@code r<n>} wakes n waiters) is handed on to another waiter, which runs the script instead.
     */
    void passOn() {
        lock.lock();
        try {
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        Listener l;
        Thread t;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            changed.signalAll();
            l = listener;
            t = thread;
        } finally {
            lock.unlock();
        }
        if (l != null && l.isSubscribed()) {
            try {
                l.leave();
            } catch (RuntimeException e) {
                LOG.debug("unsubscribe from {} failed", channel, e);
            }
        }
        if (t != null) {
            try {
                t.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void subscribeLoop() {
        long backoff = 50;
        while (true) {
            Listener l = new Listener();
            lock.lock();
            try {
                if (closed) {
                    return;
                }
                listener = l;
            } finally {
                lock.unlock();
            }
            try {
                subscribe(l); // returns after unsubscribe, throws if the connection drops
            } catch (Exception e) {
                LOG.debug("subscription to {} lost", channel, e);
            }
            lock.lock();
            try {
                if (subscribed) {
                    backoff = 50; // it was up: a blip, not a server that keeps refusing
                }
                subscribed = false;
                generation++; // notices may have been missed: everyone re-reads
                changed.signalAll();
                if (closed) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                return;
            }
            backoff = Math.min(backoff * 2, 2_000);
        }
    }

    /**
     * Subscribes on a connection of its own: a pooled connection would be held for as long as the mailbox is
     * open, so that as many long-polling mailboxes as the pool has connections would leave every other call
     * on the client waiting for one, without end (a pool waits for a free connection without limit). The
     * pool's factory makes it (same server, credentials and timeouts) and it is closed, not returned,
     * afterwards. On a cluster client that is a random node's pool: a channel reaches every node.
     */
    private void subscribe(Listener l) throws Exception {
        Pool<Connection> pool;
        if (client instanceof JedisPooled pooled) {
            pool = pooled.getPool();
        } else if (client instanceof JedisCluster cluster) {
            List<ConnectionPool> pools = new ArrayList<>(cluster.getClusterNodes().values());
            if (pools.isEmpty()) {
                throw new JedisConnectionException("no cluster node known to subscribe to " + channel);
            }
            pool = pools.get(ThreadLocalRandom.current().nextInt(pools.size()));
        } else {
            client.subscribe(l, channel);
            return;
        }
        Connection own = pool.getFactory().makeObject().getObject();
        try {
            l.proceed(own, channel);
        } finally {
            own.close();
        }
    }

    private void onNotice(String message) {
        lock.lock();
        try {
            generation++;
            if (message.startsWith("r")) {
                long n = parse(message, 1);
                for (int i = 0; i < n && i < plannedWakes.size(); i++) {
                    changed.signal();
                }
            } else if (message.startsWith("t")) {
                long due = parse(message, 1);
                for (long[] planned : plannedWakes) {
                    if (planned[0] > due) { // someone would oversleep the new deadline
                        changed.signalAll();
                        break;
                    }
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private static long parse(String message, int from) {
        try {
            return Long.parseLong(message.substring(from));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private final class Listener extends JedisPubSub {
        /**
         * Whether UNSUBSCRIBE was sent. It must go out once: the first reply ends the subscription and the
         * connection goes back to the pool, where a second reply would be read by the next borrower as the
         * answer to its own command (close() and onSubscribe() may both want to leave at the same moment).
         */
        private final java.util.concurrent.atomic.AtomicBoolean left = new java.util.concurrent.atomic.AtomicBoolean();

        void leave() {
            if (left.compareAndSet(false, true)) {
                unsubscribe();
            }
        }

        @Override
        public void onSubscribe(String ch, int subscribedChannels) {
            boolean close;
            lock.lock();
            try {
                subscribed = true;
                generation++; // notices published before now were not heard: everyone re-reads
                changed.signalAll();
                close = closed;
            } finally {
                lock.unlock();
            }
            if (close) {
                leave();
            }
        }

        @Override
        public void onMessage(String ch, String message) {
            onNotice(message);
        }
    }
}
