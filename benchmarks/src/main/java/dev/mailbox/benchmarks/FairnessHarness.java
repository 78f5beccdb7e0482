package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Fairness between tenants (issue 31): ten tenants send to one standard mailbox, one of them twenty times as
 * much as each other, so that together they offer more than the consumers can take, and the harness measures
 * how long the quiet tenants' messages wait (dwell: from send to receive). Three runs side by side:
 * <ol>
 *   <li><b>no noisy tenant</b>: all ten send at the quiet rate (the consumers keep up);</li>
 *   <li><b>noisy, fair</b>: the tenth sends 20 times as much, every message with its tenant as group id;</li>
 *   <li><b>noisy, plain</b>: the same traffic without group ids, as a mailbox without fairness sees it.</li>
 * </ol>
 * Targets: the quiet tenants' p99 dwell with the noisy tenant, on the fair mailbox, at most 2 times what it is
 * without one, and at least 5 times better than on the plain mailbox.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.FairnessHarness [--backend memory|redis]
 *     [--uri redis://host:port] [--seconds 10] [--consumers 64] [--work-ms N] [--overload 1.25] [--quick]
 * </pre>
 *
 * Consumers receive one message at a time and hold it for a simulated piece of work (sleeping) before
 * acknowledging it, so a tenant's messages in flight are what SQS's rule counts. The work takes between 0 and
 * twice {@code --work-ms} (2 ms on memory, 20 ms on Redis by default), uniformly: with one fixed time the
 * consumers of a saturated mailbox fall into step and receive in bursts, and a message arriving just after a
 * burst would wait for the next one whatever the mailbox did. Their capacity is measured first, by letting them drain a backlog (at most
 * {@code consumers / work} a second, less where the machine cannot keep up); the noisy runs offer
 * {@code --overload} times the measured capacity (9 quiet tenants at r, the noisy one at 20 r), and the first
 * run the same r per tenant, ten of them. Each tenant has its own producer thread, pacing its sends. The first
 * fifth of each run is not measured. Redis runs start their own redis-server unless given {@code --uri}, and
 * use a connection pool with a connection per thread.
 */
public final class FairnessHarness {

    private static final int TENANTS = 10;
    private static final int NOISY_FACTOR = 20;

    private final String backend;
    private final Duration run;
    private final int consumers;
    private final long workNanos;
    private final double overload;

    private FairnessHarness(String backend, Duration run, int consumers, long workNanos, double overload) {
        this.backend = backend;
        this.run = run;
        this.consumers = consumers;
        this.workNanos = workNanos;
        this.overload = overload;
    }

    /**
     * @param args see the class comment
     * @throws Exception if a thread of the harness fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("fairness");
        Options o = new Options(args);
        boolean quick = Arrays.asList(args).contains("--quick");
        String backend = o.string("--backend", "memory");
        if (!backend.equals("memory") && !backend.equals("redis")) {
            throw new IllegalArgumentException("--backend must be memory or redis, was " + backend);
        }
        int seconds = o.integer("--seconds", quick ? 4 : 10);
        int consumers = o.integer("--consumers", 64);
        int workMs = o.integer("--work-ms", backend.equals("memory") ? 2 : 20);
        double overload = Double.parseDouble(o.string("--overload", "1.25"));
        FairnessHarness h = new FairnessHarness(backend, Duration.ofSeconds(seconds), consumers,
                TimeUnit.MILLISECONDS.toNanos(workMs), overload);
        String uri = o.string("--uri", null);
        if (backend.equals("memory")) {
            h.runAll(() -> InMemoryMailbox.builder("fair-" + UUID.randomUUID(), Codec.utf8()).build());
        } else {
            redis.clients.jedis.ConnectionPoolConfig pool = new redis.clients.jedis.ConnectionPoolConfig();
            pool.setMaxTotal(consumers + TENANTS + 4);
            pool.setMaxIdle(consumers + TENANTS + 4);
            try (RedisServerProcess server = uri == null ? RedisServerProcess.start() : null;
                 JedisPooled jedis = new JedisPooled(pool, redis.clients.jedis.HostAndPort.from(
                         java.net.URI.create(uri == null ? server.uri() : uri).getAuthority()),
                         redis.clients.jedis.DefaultJedisClientConfig.builder().build())) {
                h.runAll(() -> RedisMailbox.builder("fair-" + UUID.randomUUID(), Codec.utf8()).client(jedis).build());
            }
        }
    }

    private void runAll(Supplier<Mailbox<String>> mailboxes) throws Exception {
        double nominal = consumers * 1e9 / workNanos;
        double capacity = capacity(mailboxes.get(), nominal);
        double quietRate = overload * capacity / (TENANTS - 1 + NOISY_FACTOR);
        System.out.printf(Locale.ROOT, "Mailbox fairness harness: %s, JDK %s, %d cores; %d consumers holding each message %.1f ms on average"
                        + " (capacity %,.0f msgs/s measured, %,.0f nominal); quiet tenants at %,.1f msgs/s each, the noisy"
                        + " one at %,.0f (%.2f x capacity in all); %d s a run%n%n", backend,
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), consumers,
                workNanos / 1e6, capacity, nominal, quietRate, quietRate * NOISY_FACTOR, overload, run.toSeconds());
        long[] calm = run(mailboxes.get(), quietRate, 1, true);
        long[] fair = run(mailboxes.get(), quietRate, NOISY_FACTOR, true);
        long[] plain = run(mailboxes.get(), quietRate, NOISY_FACTOR, false);
        System.out.printf(Locale.ROOT, "quiet tenants' dwell (send to receive), %s mailbox%n", backend);
        Rounds.latencyRow("no noisy tenant, group ids (baseline)", calm);
        Rounds.latencyRow("one tenant sending 20x, group ids (fair)", fair);
        Rounds.latencyRow("one tenant sending 20x, no group ids (plain)", plain);
        double fairP99 = Rounds.percentile(fair, 99);
        double calmP99 = Rounds.percentile(calm, 99);
        double plainP99 = Rounds.percentile(plain, 99);
        System.out.printf(Locale.ROOT, "   %-64s %.2f (target <= 2)%n", "fair p99 / baseline p99", fairP99 / calmP99);
        System.out.printf(Locale.ROOT, "   %-64s %.1f (target >= 5)%n", "plain p99 / fair p99", plainP99 / fairP99);
        Rounds.verdict("fair p99 <= 2 x baseline p99", 2 * calmP99 / fairP99, 1.0);
        Rounds.verdict("plain p99 >= 5 x fair p99", plainP99 / fairP99, 5.0);
    }

    /** @return one piece of work: uniform between 0 and twice the mean */
    private long work() {
        return java.util.concurrent.ThreadLocalRandom.current().nextLong(2 * workNanos + 1);
    }

    /**
     * What the consumers take per second when there is always work: they drain a backlog of two seconds'
     * worth of their nominal capacity for about a second.
     */
    private double capacity(Mailbox<String> m, double nominal) throws Exception {
        int backlog = (int) (2 * nominal);
        try (m) {
            List<String> ten = java.util.Collections.nCopies(10, "0:0");
            for (int i = 0; i < backlog; i += 10) {
                m.sendBatch(ten);
            }
            AtomicBoolean stop = new AtomicBoolean();
            java.util.concurrent.atomic.LongAdder done = new java.util.concurrent.atomic.LongAdder();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            ReceiveOptions one = ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(5));
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < consumers; c++) {
                threads.add(new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            for (Message<String> msg : m.receive(one)) {
                                LockSupport.parkNanos(work());
                                msg.acknowledge();
                                done.increment();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            threads.forEach(Thread::start);
            Thread.sleep(200);
            long before = done.sum();
            long start = System.nanoTime();
            Thread.sleep(1000);
            double rate = (done.sum() - before) / ((System.nanoTime() - start) / 1e9);
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            m.purge();
            if (!failures.isEmpty()) {
                throw new IllegalStateException("a consumer failed", failures.get(0));
            }
            return rate;
        }
    }

    /**
     * One run on a fresh mailbox: a producer per tenant (tenant 0 sends {@code noisyFactor} times the rate of
     * the others), the consumers, and the quiet tenants' dwell times once the first fifth has passed.
     *
     * @return the quiet tenants' dwell times in nanoseconds, sorted
     */
    private long[] run(Mailbox<String> m, double quietRate, int noisyFactor, boolean groupIds) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<long[]> dwellPerConsumer = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        long measureFrom = start + run.toNanos() / 5;
        long end = start + run.toNanos();
        try (m) {
            for (int t = 0; t < TENANTS; t++) {
                int tenant = t;
                double rate = t == 0 ? quietRate * noisyFactor : quietRate;
                SendOptions options = groupIds ? SendOptions.defaults().withGroupId("tenant-" + t) : SendOptions.defaults();
                threads.add(new Thread(() -> {
                    try {
                        long interval = (long) (1e9 / rate);
                        long next = start;
                        while (!stop.get()) {
                            long now = System.nanoTime();
                            if (now < next) {
                                LockSupport.parkNanos(next - now);
                                continue;
                            }
                            m.send(tenant + ":" + System.nanoTime(), options);
                            next += interval; // behind schedule: catch up without sleeping
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "tenant-" + t));
            }
            ReceiveOptions one = ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(100))
                    .withVisibilityTimeout(Duration.ofMinutes(5));
            for (int c = 0; c < consumers; c++) {
                long[] dwell = new long[1 << 16];
                dwellPerConsumer.add(dwell);
                threads.add(new Thread(() -> {
                    long[] samples = dwell;
                    int n = 0;
                    try {
                        while (!stop.get()) {
                            for (Message<String> msg : m.receive(one)) {
                                long received = System.nanoTime();
                                String body = msg.body();
                                int colon = body.indexOf(':');
                                long sent = Long.parseLong(body, colon + 1, body.length(), 10);
                                if (body.charAt(0) != '0' && sent >= measureFrom) {
                                    if (n == samples.length) {
                                        samples = Arrays.copyOf(samples, n * 2);
                                    }
                                    samples[n++] = received - sent;
                                }
                                LockSupport.parkNanos(work());
                                msg.acknowledge();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        synchronized (dwellPerConsumer) {
                            dwellPerConsumer.set(dwellPerConsumer.indexOf(dwell), Arrays.copyOf(samples, n));
                        }
                    }
                }, "consumer-" + c));
            }
            threads.forEach(Thread::start);
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()));
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            m.purge();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a thread of the harness failed", failures.get(0));
        }
        long[] all = dwellPerConsumer.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        if (all.length == 0) {
            throw new IllegalStateException("no quiet tenant's message was received in the measured part of the run");
        }
        return all;
    }
}
