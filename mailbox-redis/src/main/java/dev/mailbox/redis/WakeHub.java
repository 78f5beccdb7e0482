package dev.mailbox.redis;

import dev.mailbox.api.Limits;
import org.jspecify.annotations.Nullable;
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
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wakes the waiting receives of every {@link RedisMailbox} built on one client object (one
 * {@link JedisPooled} or {@link JedisCluster}), however many mailboxes they wait on. The scripts PUBLISH on
 * each mailbox's channel when messages become visible ({@code r<n>}: wake n waiters) or a deadline earlier
 * than any before appears ({@code t<due ms>}: wake those who would sleep past it). The hub hears them on at
 * most {@link #SUBSCRIBERS} subscriber connections of its own, each subscribed to a share of the channels
 * (a channel multiplexer, one thread per connection), and wakes the mailbox's waiters: threads blocked in
 * {@link #await}, and receives parked without a thread ({@link #park}), whose next pass runs on a pool of at
 * most {@link #PASS_THREADS} threads. So 10,000 mailboxes waiting cost at most 2 connections and a handful
 * of threads, and an idle waiter sends Redis nothing.
 *
 * <p>A waiter reads its channel's {@link Channel#generation()} before it runs the receive script and only
 * waits if no notice arrived since: a notice published between the script and the wait cannot be missed.
 * The generation also moves when the channel's subscription is confirmed (notices published before were not
 * heard) and when a subscriber connection drops; either way everyone re-reads. While a channel is not
 * subscribed its waiters sleep at most {@link #DEGRADED_SLEEP_MS} and poll; while it is, they sleep until
 * their wait ends or the earliest deadline they know of, with no safety-net poll on a standalone server (a
 * subscription on a live connection loses nothing; a connection that dies unseen is found by a PING every
 * {@link #PING_EVERY_MS}), and at most {@link #CLUSTER_SLEEP_MS} on a cluster, whose nodes relay
 * publications over the cluster bus. For the same reason the scripts announce every new earliest deadline
 * up to {@link #ANNOUNCE_HORIZON_MS} ahead, the longest wait there is.
 *
 * <p>Nobody waits for the subscription before its first script: a receive's acknowledgements and the
 * messages already there never wait for pub/sub.
 */
final class WakeHub {

    /** Longest sleep while not subscribed: two script calls a second at most. */
    static final long DEGRADED_SLEEP_MS = 500;
    /** Longest sleep while subscribed on a cluster: a safety net for a publication lost between nodes. */
    static final long CLUSTER_SLEEP_MS = 30_000;
    /** How far ahead a new earliest deadline is announced (the scripts' horizon): any wait's length. */
    static final long ANNOUNCE_HORIZON_MS = Limits.MAX_WAIT_TIME.toMillis();
    /** Subscriber connections (and threads) per client, at most. */
    static final int SUBSCRIBERS = 2;
    /** Threads that run parked receives' passes, per client, at most. */
    static final int PASS_THREADS = 4;
    /** How often an idle subscriber connection is pinged; one that does not answer in as long is dropped. */
    static final long PING_EVERY_MS = 15_000;

    private static final Logger LOG = LoggerFactory.getLogger(WakeHub.class);
    /** One hub per client object; guarded by itself. */
    private static final Map<UnifiedJedis, WakeHub> HUBS = new IdentityHashMap<>();

    private final UnifiedJedis client;
    private final boolean cluster;
    private final Shard[] shards = new Shard[SUBSCRIBERS];
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor timer;
    private final ThreadPoolExecutor passes;
    private int refs; // guarded by HUBS
    private volatile boolean closed;

    private WakeHub(UnifiedJedis client) {
        this.client = client;
        this.cluster = client instanceof JedisCluster;
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new Shard(i);
        }
        String name = "mailbox-wake-" + Integer.toHexString(System.identityHashCode(client));
        this.timer = new ScheduledThreadPoolExecutor(1, daemon(name + "-timer"));
        timer.setRemoveOnCancelPolicy(true);
        timer.setKeepAliveTime(30, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        this.passes = new ThreadPoolExecutor(PASS_THREADS, PASS_THREADS, 30, TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(), daemon(name + "-pass"));
        passes.allowCoreThreadTimeOut(true);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * @param client a client object
     * @return its hub, shared with every other mailbox on it; {@link #release()} it when done
     */
    static WakeHub acquire(UnifiedJedis client) {
        synchronized (HUBS) {
            WakeHub hub = HUBS.computeIfAbsent(client, WakeHub::new);
            hub.refs++;
            return hub;
        }
    }

    /** Gives up one {@link #acquire}; the last one closes the hub's connections and threads. */
    void release() {
        synchronized (HUBS) {
            if (--refs > 0) {
                return;
            }
            HUBS.remove(client);
        }
        closed = true;
        for (Shard s : shards) {
            s.close();
        }
        timer.shutdownNow();
        passes.shutdown(); // passes already queued finish: they find their mailbox closed and end at once
    }

    /**
     * @param name a mailbox's wake channel
     * @return the channel's waiters, shared by every mailbox object of that channel on this client;
     *         {@link #leave} it when the mailbox closes
     */
    Channel join(String name) {
        return channels.compute(name, (k, c) -> {
            if (c == null) {
                c = new Channel(k, shards[Math.floorMod(k.hashCode(), shards.length)]);
            }
            c.refs++;
            return c;
        });
    }

    /** A mailbox object closed: wakes its channel's waiters; the last one out unsubscribes. */
    void leave(Channel c) {
        c.wakeAll();
        boolean[] last = new boolean[1];
        channels.computeIfPresent(c.name, (k, v) -> {
            if (v == c && --v.refs == 0) {
                last[0] = true;
                return null;
            }
            return v;
        });
        if (last[0]) {
            c.shard.remove(c);
        }
    }

    /** Subscribes the channel if it is not yet: a mailbox's first waiting receive does. */
    void listen(Channel c) {
        if (!c.listening) {
            c.shard.add(c);
        }
    }

    /**
     * Sleeps until a notice arrives after generation {@code seen}, {@code sleepMs} pass, or the channel's
     * mailbox closes.
     *
     * @param plannedWakeServerMs when, in the server's time, this waiter means to wake anyway
     */
    void await(Channel c, long seen, long sleepMs, long plannedWakeServerMs) throws InterruptedException {
        c.lock.lock();
        try {
            if (c.generation != seen || c.closedWaiters) {
                return;
            }
            Blocked w = new Blocked(plannedWakeServerMs, c.lock.newCondition());
            c.waiters.add(w);
            try {
                long nanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(sleepMs, c.cap())));
                while (!w.woken && nanos > 0) {
                    nanos = w.condition.awaitNanos(nanos);
                }
            } finally {
                c.waiters.remove(w);
            }
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * Parks a receive without a thread: {@code next} runs on the hub's pass threads when a notice arrives
     * after generation {@code seen}, or {@code sleepMs} pass.
     *
     * @return the parked receive, to {@link Channel#unpark} if it is given up; null if a notice came since
     *         {@code seen} (or the mailbox closed), so the caller runs its next pass itself
     */
    @Nullable Parked park(Channel c, long seen, long sleepMs, long plannedWakeServerMs, Runnable next) {
        c.lock.lock();
        try {
            if (c.generation != seen || c.closedWaiters || closed) {
                return null;
            }
            Parked p = new Parked(plannedWakeServerMs, next);
            c.waiters.add(p);
            p.timer = timer.schedule(() -> c.timedOut(p), Math.max(1, Math.min(sleepMs, c.cap())),
                    TimeUnit.MILLISECONDS);
            return p;
        } finally {
            c.lock.unlock();
        }
    }

    /** Runs a parked receive's next pass; inline if the hub is closing (the pass then finds its mailbox closed). */
    private void runPass(Runnable next) {
        try {
            passes.execute(next);
        } catch (RejectedExecutionException e) {
            next.run();
        }
    }

    /**
     * A waiter leaves without running a receive to the end (its pass threw): a notice that woke it alone
     * ({@code r<n>} wakes n waiters) is handed on to the next waiter, which runs the script instead.
     */
    void passOn(Channel c) {
        c.lock.lock();
        try {
            c.wakeFirst(1);
        } finally {
            c.lock.unlock();
        }
    }

    /** @return how many subscriber connections are up now (for tests and the harness) */
    int subscriberConnections() {
        int n = 0;
        for (Shard s : shards) {
            if (s.isLive()) {
                n++;
            }
        }
        return n;
    }

    // --- one mailbox channel's waiters ------------------------------------------------------------------

    /** The waiters of one mailbox channel on this client, and what the hub knows of its subscription. */
    final class Channel {
        final String name;
        final Shard shard;
        final ReentrantLock lock = new ReentrantLock();
        int refs; // guarded by the channels map's compute
        volatile boolean listening; // its shard was asked to subscribe it
        // guarded by lock
        private long generation;
        private boolean subscribed;
        private boolean closedWaiters;
        /** Oldest first; a waiter woken by a notice is removed by whoever wakes it. */
        private final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>();

        Channel(String name, Shard shard) {
            this.name = name;
            this.shard = shard;
        }

        long generation() {
            lock.lock();
            try {
                return generation;
            } finally {
                lock.unlock();
            }
        }

        /** @return whether the subscription is up and its confirmation handled */
        boolean isSubscribed() {
            lock.lock();
            try {
                return subscribed;
            } finally {
                lock.unlock();
            }
        }

        /** @return how long a waiter may sleep without a notice; called with the lock held */
        private long cap() {
            if (!subscribed) {
                return DEGRADED_SLEEP_MS;
            }
            return cluster ? CLUSTER_SLEEP_MS : Long.MAX_VALUE;
        }

        /** Gives up a parked receive (its caller cancelled it); false if it was woken already. */
        boolean unpark(Parked p) {
            lock.lock();
            try {
                if (!waiters.remove(p)) {
                    return false;
                }
                if (p.timer != null) {
                    p.timer.cancel(false);
                }
                return true;
            } finally {
                lock.unlock();
            }
        }

        private void timedOut(Parked p) {
            lock.lock();
            try {
                if (!waiters.remove(p)) {
                    return; // woken meanwhile: that wake-up runs its pass
                }
            } finally {
                lock.unlock();
            }
            runPass(p.next);
        }

        void notice(String message) {
            lock.lock();
            try {
                generation++;
                if (message.startsWith("r")) {
                    wakeFirst(parse(message));
                } else if (message.startsWith("t")) {
                    long due = parse(message);
                    Iterator<Waiter> it = waiters.iterator();
                    while (it.hasNext()) {
                        Waiter w = it.next();
                        if (w.planned > due) { // it would oversleep the new deadline
                            it.remove();
                            w.wake();
                        }
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        /** Subscribed (true) or not: either way notices may have been missed, so everyone re-reads. */
        void subscription(boolean up) {
            lock.lock();
            try {
                subscribed = up;
                generation++;
                wakeFirst(Integer.MAX_VALUE);
            } finally {
                lock.unlock();
            }
        }

        /** The mailbox closed: every waiter wakes (and finds it closed). */
        void wakeAll() {
            lock.lock();
            try {
                generation++;
                wakeFirst(Integer.MAX_VALUE);
            } finally {
                lock.unlock();
            }
        }

        /** Wakes the {@code n} oldest waiters; called with the lock held. */
        private void wakeFirst(long n) {
            Iterator<Waiter> it = waiters.iterator();
            for (long i = 0; i < n && it.hasNext(); i++) {
                Waiter w = it.next();
                it.remove();
                w.wake();
            }
        }
    }

    /** Someone waiting on a channel: woken at most once, by whoever removes it from the waiters. */
    private abstract static class Waiter {
        /** When, in the server's time, it means to wake anyway. */
        final long planned;

        Waiter(long planned) {
            this.planned = planned;
        }

        /** Called with the channel's lock held; must not block. */
        abstract void wake();
    }

    private static final class Blocked extends Waiter {
        final Condition condition;
        boolean woken;

        Blocked(long planned, Condition condition) {
            super(planned);
            this.condition = condition;
        }

        @Override
        void wake() {
            woken = true;
            condition.signal();
        }
    }

    /** A receive parked without a thread. */
    final class Parked extends Waiter {
        final Runnable next;
        @Nullable ScheduledFuture<?> timer;

        Parked(long planned, Runnable next) {
            super(planned);
            this.next = next;
        }

        @Override
        void wake() {
            if (timer != null) {
                timer.cancel(false);
            }
            runPass(next);
        }
    }

    private static long parse(String message) {
        try {
            return Long.parseLong(message.substring(1));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    // --- subscriber connections -------------------------------------------------------------------------

    /**
     * One subscriber connection and the channels it carries. It always holds a subscription to a channel of
     * its own, so the connection stays subscribed when its last mailbox channel goes, and mailbox channels
     * come and go on it with SUBSCRIBE and UNSUBSCRIBE while it runs.
     */
    private final class Shard {
        final int index;
        final String own = "mailbox-wake-hub:" + UUID.randomUUID();
        final Object lock = new Object();
        // guarded by lock
        /**
         * The channels to subscribe, by name: a mailbox channel object that replaced another of the same name
         * (closed and opened again) takes its place, so the old one's leaving does not unsubscribe the name.
         */
        final Map<String, Channel> wanted = new java.util.LinkedHashMap<>();
        @Nullable Listener live;
        @Nullable Connection connection;
        @Nullable Thread thread;
        @Nullable ScheduledFuture<?> pinger;
        long pingSentAt; // 0: no ping outstanding
        boolean shut;

        Shard(int index) {
            this.index = index;
        }

        boolean isLive() {
            synchronized (lock) {
                return live != null;
            }
        }

        void add(Channel c) {
            synchronized (lock) {
                if (shut || wanted.get(c.name) == c) {
                    return;
                }
                wanted.put(c.name, c);
                c.listening = true;
                if (live != null) {
                    // also when the name is subscribed already (for an object it replaced): the confirmation is
                    // what tells this object that it is heard
                    send(live, true, c.name);
                } else if (thread == null) {
                    thread = new Thread(this::run, "mailbox-wake-" + Integer.toHexString(
                            System.identityHashCode(client)) + "-sub-" + index);
                    thread.setDaemon(true);
                    thread.start();
                }
            }
        }

        void remove(Channel c) {
            synchronized (lock) {
                if (wanted.remove(c.name, c) && live != null) {
                    send(live, false, c.name);
                }
            }
        }

        /**
         * Called with the lock held; a failure means the connection is going, and the run loop resubscribes.
         *
         * @param names the channels; none to unsubscribe from every channel (which ends the subscription loop)
         */
        private void send(Listener l, boolean subscribe, String... names) {
            try {
                if (subscribe) {
                    l.subscribe(names);
                } else if (names.length == 0) {
                    l.unsubscribe();
                } else {
                    l.unsubscribe(names);
                }
            } catch (RuntimeException e) {
                LOG.debug("wake subscriber {}: {} failed", index, subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE", e);
            }
        }

        void close() {
            Thread t;
            synchronized (lock) {
                shut = true;
                t = thread;
                if (live != null) {
                    send(live, false); // every channel: the subscription loop then returns
                } else if (connection != null) {
                    connection.close();
                }
            }
            if (t != null) {
                t.interrupt(); // out of a backoff sleep
                try {
                    t.join(2_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void run() {
            long backoff = 50;
            while (true) {
                Listener l = new Listener(this);
                Connection conn = null;
                boolean wasUp = false;
                try {
                    synchronized (lock) {
                        if (shut) {
                            return;
                        }
                    }
                    conn = connect(l);
                    if (conn != null) {
                        synchronized (lock) {
                            if (shut) {
                                return;
                            }
                            connection = conn;
                        }
                        l.proceed(conn, own); // returns after unsubscribe, throws if the connection drops
                    }
                } catch (Exception e) {
                    LOG.debug("wake subscriber {} lost its connection", index, e);
                } finally {
                    synchronized (lock) {
                        wasUp = l.up;
                        live = null;
                        connection = null;
                        pingSentAt = 0;
                        if (pinger != null) {
                            pinger.cancel(false);
                            pinger = null;
                        }
                    }
                    if (conn != null) {
                        try {
                            conn.close();
                        } catch (RuntimeException ignored) {
                            // gone already
                        }
                    }
                    List<Channel> heard;
                    synchronized (lock) {
                        heard = new ArrayList<>(wanted.values());
                    }
                    for (Channel c : heard) {
                        c.subscription(false); // notices may have been missed: everyone re-reads
                    }
                }
                synchronized (lock) {
                    if (shut || closed) {
                        return;
                    }
                }
                if (wasUp) {
                    backoff = 50; // it was up: a blip, not a server that keeps refusing
                }
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException e) {
                    synchronized (lock) {
                        if (shut) {
                            return;
                        }
                    }
                }
                backoff = Math.min(backoff * 2, 2_000);
            }
        }

        /**
         * Subscribes on a connection of its own, made by the pool's factory (same server, credentials and
         * timeouts) and closed, not returned, afterwards: a pooled connection would be held for as long as the
         * hub runs. On a cluster client that is a random node's pool: a channel reaches every node. Another
         * kind of client subscribes through its own {@code subscribe}, which returns when the loop ends.
         *
         * @return the connection, or null if the client subscribed by itself (and is done)
         */
        private @Nullable Connection connect(Listener l) throws Exception {
            Pool<Connection> pool;
            if (client instanceof JedisPooled pooled) {
                pool = pooled.getPool();
            } else if (client instanceof JedisCluster c) {
                List<ConnectionPool> pools = new ArrayList<>(c.getClusterNodes().values());
                if (pools.isEmpty()) {
                    throw new JedisConnectionException("no cluster node known to subscribe to");
                }
                pool = pools.get(ThreadLocalRandom.current().nextInt(pools.size()));
            } else {
                client.subscribe(l, own);
                return null;
            }
            return pool.getFactory().makeObject().getObject();
        }

        /** The connection is up: every wanted channel is subscribed, and a ping checks it now and then. */
        void up(Listener l) {
            synchronized (lock) {
                if (shut) {
                    send(l, false);
                    return;
                }
                l.up = true;
                live = l;
                if (!wanted.isEmpty()) {
                    send(l, true, wanted.keySet().toArray(String[]::new));
                }
                try {
                    pinger = timer.scheduleWithFixedDelay(() -> ping(l), PING_EVERY_MS, PING_EVERY_MS,
                            TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException closing) {
                    // the hub is closing
                }
            }
        }

        private void ping(Listener l) {
            synchronized (lock) {
                if (live != l) {
                    return;
                }
                long now = System.nanoTime();
                if (pingSentAt != 0 && now - pingSentAt > TimeUnit.MILLISECONDS.toNanos(PING_EVERY_MS)) {
                    LOG.info("wake subscriber {} got no answer to a PING in {} ms: reconnecting", index, PING_EVERY_MS);
                    if (connection != null) {
                        connection.close(); // the subscription loop fails, and run() reconnects
                    }
                    return;
                }
                if (pingSentAt == 0) {
                    try {
                        l.ping();
                        pingSentAt = now;
                    } catch (RuntimeException e) {
                        LOG.debug("wake subscriber {}: PING failed", index, e);
                    }
                }
            }
        }

        void pong() {
            synchronized (lock) {
                pingSentAt = 0;
            }
        }
    }

    private final class Listener extends JedisPubSub {
        final Shard shard;
        boolean up; // guarded by shard.lock

        Listener(Shard shard) {
            this.shard = shard;
        }

        @Override
        public void onSubscribe(String ch, int subscribedChannels) {
            if (ch.equals(shard.own)) {
                shard.up(this);
                return;
            }
            Channel c = channels.get(ch);
            if (c != null && c.shard == shard) {
                c.subscription(true); // notices published before now were not heard: everyone re-reads
            }
        }

        @Override
        public void onMessage(String ch, String message) {
            Channel c = channels.get(ch);
            if (c != null) {
                c.notice(message);
            }
        }

        @Override
        public void onPong(String pattern) {
            shard.pong();
        }
    }
}
