package dev.mailbox.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * RedisMailbox next to BullMQ, its closest peer on Redis, against one redis-server in one run:
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.PeerHarness [--quick] [--peer-dir DIR] [--pin CPU] [--baselines-only]
 * </pre>
 *
 * It starts its own redis-server (persistence off) and a Node process running BullMQ (the version
 * pinned in {@code peer/package.json}, installed with {@code npm install} into {@code DIR}, by default
 * {@code <tmpdir>/mailbox-peer-bullmq}, on first use). Both sides do the same work on the same server,
 * one leg at a time, the other side idle: every row runs BullMQ and RedisMailbox alternately, first one
 * then the other, 3 repetitions after a warm-up; the table gives each side's median, the ratio of
 * medians (above 1: RedisMailbox ahead) and the ratios of the repetitions paired in the order they ran,
 * and for the rates the CPU time redis-server's main thread spent per message inside the timed region
 * ({@code INFO cpu} read at both ends by the side that times it, so filling, set-up and clean-up are not
 * charged, and a script's own calls are not counted twice). Where {@code node} or {@code npm} is missing
 * or BullMQ cannot be installed, it says so, runs the RedisMailbox side alone and prints no ratios.
 *
 * <p>The legs, 20,000 messages each (5,000 with {@code --quick}), bodies of 14 bytes:
 * <ul>
 *   <li>produce one at a time: {@code queue.add} / {@code send}, each awaited;</li>
 *   <li>consume with 1 and with 8 workers, everything queued beforehand: a BullMQ {@code Worker} with that
 *       concurrency and a no-op processor, jobs removed on completion; N threads that each acknowledge
 *       the message they hold with their next receive ({@code acknowledgeAndReceive}, one message at a
 *       time, one round trip per message). One Node process runs on one core where our 8 threads may use
 *       both, so the 8-worker row also runs BullMQ as two processes with a Worker of concurrency 4 each,
 *       timed from the first start to the last completion, and the ratio is against the faster of the two
 *       BullMQ set-ups;</li>
 *   <li>produce batches of 10: {@code queue.addBulk} / {@code sendBatch};</li>
 *   <li>send → received: one consumer idle and blocked (BullMQ's worker on its marker key, ours in a
 *       long-polling receive), one message sent every 2 ms or so, timed from just before the send to
 *       the processor's start / the receive's return. BullMQ runs it both ways, the adds from the worker's
 *       own process and from the second one (as ours come from another thread; both processes read the
 *       same monotonic clock), and the ratio is against the faster.</li>
 * </ul>
 * Then, on the same server, two rows against our own baselines (no BullMQ): RedisMailbox's cycle
 * against plain Jedis making the same round trips (3 a cycle, and 2 with {@code acknowledgeAndReceive}
 * against a pipelined DEL + RPOP), and MainLoop against the exchange written by hand (see
 * {@link MainLoopHarness}), with 1 and 4 handlers.
 *
 * <p>{@code --pin CPU} puts the redis-server, this JVM and the Node process on one CPU with
 * {@code taskset}. Unpinned, a round trip costs ~10 µs when client and server share a core and
 * 0.1 ms to several ms when they do not (see {@link SendSwing}), and the scheduler moves them mid-run, which is
 * what makes single-client rates swing 2× from one leg to the next.
 */
public final class PeerHarness {

    private static final String BODY = "hello, mailbox";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int REPETITIONS = 3;
    private static final String BULLMQ = "BullMQ";
    /** BullMQ on two Node processes: 4 workers each in the 8-worker row, adding and receiving apart in latency. */
    private static final String BULLMQ_TWO_PROCESSES = "BullMQ 2 proc";
    private static final String OURS = "RedisMailbox";

    private final int messages;
    private final int latencySamples;

    private PeerHarness(boolean quick) {
        this.messages = quick ? 5_000 : 20_000;
        this.latencySamples = quick ? 300 : 2_000;
    }

    /**
     * @param args {@code --quick}, {@code --peer-dir DIR}, {@code --pin CPU}, {@code --baselines-only} (only the
     *             rows against plain Jedis and the hand-written exchange)
     * @throws Exception if a leg fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("peer");
        List<String> a = Arrays.asList(args);
        int d = a.indexOf("--peer-dir");
        Path dir = d >= 0 ? Path.of(a.get(d + 1))
                : Path.of(System.getProperty("java.io.tmpdir"), "mailbox-peer-bullmq");
        PeerHarness h = new PeerHarness(a.contains("--quick"));
        int p = a.indexOf("--pin");
        String pin = p >= 0 ? a.get(p + 1) : null;
        if (pin != null && !pin.matches("[0-9]+")) {
            throw new IllegalArgumentException("--pin takes one CPU number, was " + pin);
        }
        try (RedisServerProcess server = RedisServerProcess.start()) {
            Peer peer = Peer.start(dir, server.host(), server.port());
            // a second BullMQ process: the 8-worker row also runs BullMQ as 2 processes of 4, and the latency
            // row adds from one process while the other's worker receives
            Peer second = peer == null ? null : Peer.start(dir, server.host(), server.port());
            try {
                if (pin != null) {
                    // one CPU for the server and both clients: every round trip stays on one core
                    taskset(server.pid(), pin);
                    taskset(ProcessHandle.current().pid(), pin);
                    if (peer != null) {
                        taskset(peer.process.pid(), pin);
                        taskset(second.process.pid(), pin);
                    }
                    System.out.println("pinned: redis-server, this JVM and the BullMQ peer on CPU " + pin);
                }
                if (!a.contains("--baselines-only")) {
                    h.run(server, peer, second);
                }
                h.baselines(server);
            } finally {
                if (peer != null) {
                    peer.close();
                    second.close();
                }
            }
        }
    }

    private static void taskset(long pid, String cpu) throws IOException, InterruptedException {
        Process t = new ProcessBuilder("taskset", "-a", "-p", "-c", cpu, Long.toString(pid)).redirectErrorStream(true)
                .start();
        String out = new String(t.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (t.waitFor() != 0) {
            throw new IllegalStateException("taskset failed for pid " + pid + ": " + out);
        }
    }

    /**
     * The rows against our own baselines, on the same server after the peer rows: RedisMailbox against
     * plain Jedis with the same round trips (blocks of 50 cycles alternating inside each round), and
     * MainLoop against the same request/response exchange written by hand on the mailboxes.
     */
    private void baselines(RedisServerProcess server) throws Exception {
        Duration round = messages == 20_000 ? Duration.ofSeconds(2) : Duration.ofMillis(500);
        int rounds = messages == 20_000 ? 5 : 3;
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        try (JedisPooled jedis = new JedisPooled(pool, server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("peer-cycle", Codec.utf8()).client(jedis).build()) {
            System.out.printf(Locale.ROOT, "RedisMailbox against plain Jedis, one thread, median of %d rounds of %d ms,"
                    + " blocks of 50 cycles alternating%n", rounds, round.toMillis());
            double[] three = Rounds.medianPair(rounds, () -> RedisHarness.cycleRound(jedis, m, round));
            Rounds.row("plain Jedis LPUSH + RPOP + DEL", three[0], "cycles/s", 1.0);
            Rounds.row("send + receive + acknowledge (3 round trips)", three[1], "cycles/s", three[1] / three[0]);
            double[] two = Rounds.medianPair(rounds, () -> RedisHarness.combinedCycleRound(jedis, m, round));
            Rounds.row("plain Jedis LPUSH + pipelined (DEL, RPOP)", two[0], "cycles/s", 1.0);
            Rounds.row("send + acknowledgeAndReceive (2 round trips)", two[1], "cycles/s", two[1] / two[0]);
            m.purge();
            System.out.println();

            for (boolean combined : new boolean[] {true, false}) {
                System.out.printf(Locale.ROOT, "MainLoop + MainLoopClient against the exchange written by hand (%s),"
                        + " median of %d paired rounds of %d ms%n", combined
                        ? "acknowledgeAndReceive on both sides" : "receive, then acknowledge, as in issue 5",
                        rounds, round.toMillis());
                // {handlers, the loop's receiveBatch (0: the default)}: the hand-written handlers each receive one
                // request at a time, and so do the loop's workers with receiveBatch(1); the default batch (up to
                // 10, never more than idle workers) has one thread receive for all and hand requests out
                int[][] shapes = combined ? new int[][] {{1, 1}, {4, 1}, {4, 0}} : new int[][] {{1, 0}, {4, 0}};
                for (int[] shape : shapes) {
                    int handlers = shape[0];
                    MainLoopHarness loops = new MainLoopHarness(round, rounds, combined, shape[1]);
                    List<long[]> raw = new ArrayList<>();
                    List<long[]> loop = new ArrayList<>();
                    double[] pair = Rounds.medianPair(rounds, () -> loops.redisPair(jedis, handlers, raw, loop));
                    String what = handlers + " handler(s), " + handlers + " caller(s)";
                    String batch = handlers == 1 ? "" : shape[1] == 1 ? ", receiveBatch(1)" : ", default batch";
                    Rounds.row("raw exchange, " + what, pair[0], "calls/s", 1.0);
                    Rounds.row("MainLoop, " + what + batch, pair[1], "calls/s", pair[1] / pair[0]);
                    System.out.printf(Locale.ROOT, "   %-64s %.1f (raw), %.1f (MainLoop)%n",
                            "scripts run on Redis per call, that round", pair[2], pair[3]);
                    System.out.printf(Locale.ROOT, "   %-64s %.2f (raw), %.2f (MainLoop)%n",
                            "JVM threads' voluntary context switches per call, that round", pair[4], pair[5]);
                    System.out.printf(Locale.ROOT, "   %-64s %.1f / %.1f (raw), %.1f / %.1f (MainLoop)%n",
                            "CPU us per call, this JVM / redis-server, that round", pair[6], pair[8], pair[7], pair[9]);
                }
                System.out.println();
            }
        }
    }

    /** One row: what one leg measures, run on either side. */
    private interface Leg {
        /** @return the figure: per second for rates, or {p50, p99} in microseconds for latency */
        double[] run(String side, int n, int repetition) throws Exception;
    }

    private void run(RedisServerProcess server, Peer peer, Peer second) throws Exception {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(32);
        pool.setMaxIdle(32);
        try (JedisPooled jedis = new JedisPooled(pool, server.host(), server.port())) {
            String info = new String((byte[]) jedis.sendCommand(Protocol.Command.INFO, "server"), StandardCharsets.UTF_8);
            String version = info.lines().filter(l -> l.startsWith("redis_version:")).findFirst()
                    .orElse("redis_version:?").substring("redis_version:".length());
            System.out.printf(Locale.ROOT, "Peer harness: redis-server %s on %s, %s, JDK %s, %d cores; %,d messages a leg,"
                            + " %d repetitions after a warm-up, sides alternating%n", version, server.uri(),
                    peer == null ? "BullMQ skipped" : "BullMQ " + peer.version + " on Node " + peer.nodeVersion,
                    System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), messages, REPETITIONS);
            if (peer == null) {
                System.out.println("   (no ratios: only the RedisMailbox side runs)");
            }
            System.out.println();
            Ours ours = new Ours(jedis);
            List<String> sides = peer == null ? List.of(OURS) : List.of(BULLMQ, OURS);
            // BullMQ scales a worker past one core with processes, not threads, and its producer and worker may
            // share a process or not: those rows run it both ways, and the ratio is against the faster
            List<String> bothWays = peer == null ? sides : List.of(BULLMQ, BULLMQ_TWO_PROCESSES, OURS);
            String[] labels = {
                "produce one at a time, msgs/s",
                "consume, 1 worker, msgs/s",
                "consume, 8 workers, msgs/s",
                "produce batches of 10, msgs/s",
                "send -> received, p50 / p99 us (ratio: BullMQ / ours)",
            };
            Leg[] legs = {
                (side, n, r) -> rate(n, side.equals(OURS) ? ours.produce(n) : peer.timed("produce", n, Map.of())),
                (side, n, r) -> rate(n, side.equals(OURS) ? ours.consume(n, 1)
                        : peer.timed("consume", n, Map.of("concurrency", 1))),
                (side, n, r) -> rate(n, side.equals(OURS) ? ours.consume(n, 8)
                        : side.equals(BULLMQ) ? peer.timed("consume", n, Map.of("concurrency", 8))
                        : Peer.consumeShared(jedis, n, 4, peer, second)),
                (side, n, r) -> rate(n, side.equals(OURS) ? ours.produceBatches(n)
                        : peer.timed("produceBatches", n, Map.of("batch", 10))),
                (side, n, r) -> {
                    int samples = n == messages ? latencySamples : latencySamples / 5;
                    long[] nanos = side.equals(OURS) ? ours.latency(samples, samples / 5)
                            : side.equals(BULLMQ) ? peer.latency(samples, samples / 5)
                            : Peer.latency(samples, samples / 5, peer, second);
                    Arrays.sort(nanos);
                    return new double[] {percentile(nanos, 50) / 1e3, percentile(nanos, 99) / 1e3};
                },
            };
            for (int row = 0; row < legs.length; row++) {
                List<String> rowSides = row == 2 || row == legs.length - 1 ? bothWays : sides;
                // a short warm-up of both sides: the JIT on ours, V8's on theirs
                for (String side : rowSides) {
                    legs[row].run(side, messages / 4, -1);
                }
                Map<String, List<double[]>> results = new java.util.LinkedHashMap<>();
                for (int r = 0; r < REPETITIONS; r++) {
                    List<String> order = new ArrayList<>(rowSides);
                    if (r % 2 == 1) {
                        Collections.reverse(order);
                    }
                    for (String side : order) {
                        results.computeIfAbsent(side, s -> new ArrayList<>()).add(legs[row].run(side, messages, r));
                    }
                }
                report(labels[row], row == legs.length - 1, results);
            }
        }
    }

    /**
     * @param timed {seconds, microseconds of redis-server main-thread CPU in that time}
     * @return {messages per second, server microseconds per message}
     */
    private static double[] rate(int n, double[] timed) {
        return new double[] {n / timed[0], timed[1] / n};
    }

    /**
     * Prints each side's median (and its repetitions), then the ratio of medians against BullMQ's best
     * configuration, and the ratios of the repetitions paired in the order they ran.
     */
    private void report(String label, boolean latency, Map<String, List<double[]>> results) {
        List<double[]> ours = results.get(OURS);
        String best = null;
        for (String side : results.keySet()) {
            if (!side.equals(OURS) && (best == null || (latency ? median(results.get(side), 0) < median(results.get(best), 0)
                    : median(results.get(side), 0) > median(results.get(best), 0)))) {
                best = side;
            }
        }
        List<double[]> theirs = best == null ? null : results.get(best);
        System.out.println(label);
        for (Map.Entry<String, List<double[]>> side : results.entrySet()) {
            List<double[]> r = side.getValue();
            if (latency) {
                System.out.printf(Locale.ROOT, "   %-14s p50 %7.0f   p99 %7.0f   (runs: p50 %s; p99 %s)%n", side.getKey(),
                        median(r, 0), median(r, 1), runs(r, 0), runs(r, 1));
            } else {
                System.out.printf(Locale.ROOT, "   %-14s %,10.0f   (runs: %s; redis-server CPU %.1f us/msg)%n", side.getKey(),
                        median(r, 0), runs(r, 0), median(r, 1));
            }
        }
        if (theirs != null) {
            String against = results.size() > 2 ? " (against the faster BullMQ set-up: " + best + ")" : "";
            if (latency) {
                System.out.printf(Locale.ROOT, "   %-14s p50 %7.2f   p99 %7.2f   (paired runs: p50 %s; p99 %s)%n", "ratio",
                        median(theirs, 0) / median(ours, 0), median(theirs, 1) / median(ours, 1),
                        paired(theirs, ours, 0), paired(theirs, ours, 1));
            } else {
                System.out.printf(Locale.ROOT, "   %-14s %10.2f   (paired runs: %s)%s%n", "ratio",
                        median(ours, 0) / median(theirs, 0), paired(ours, theirs, 0), against);
            }
        }
        System.out.println();
    }

    /** Each repetition's {@code top / bottom}, in the order they ran. */
    private static String paired(List<double[]> top, List<double[]> bottom, int i) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < top.size(); r++) {
            b.append(r == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%.2f", top.get(r)[i] / bottom.get(r)[i]));
        }
        return b.toString();
    }

    private static double median(List<double[]> runs, int i) {
        double[] v = runs.stream().mapToDouble(r -> r[i]).sorted().toArray();
        return v[v.length / 2];
    }

    private static String runs(List<double[]> runs, int i) {
        StringBuilder b = new StringBuilder();
        for (double[] r : runs) {
            b.append(b.length() == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%,.0f", r[i]));
        }
        return b.toString();
    }

    private static long percentile(long[] sorted, double p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    /** The RedisMailbox legs; each uses a fresh mailbox and leaves nothing behind. */
    private static final class Ours {
        private static final ReceiveOptions ONE = ReceiveOptions.defaults();
        private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10));
        private static final List<String> TEN = Collections.nCopies(10, BODY);

        private final JedisPooled jedis;
        private int serial;

        Ours(JedisPooled jedis) {
            this.jedis = jedis;
        }

        private RedisMailbox<String> fresh() {
            return RedisMailbox.builder("peer-" + ++serial, Codec.utf8()).client(jedis).build();
        }

        /** @return {seconds, redis-server main-thread CPU microseconds}, as the BullMQ side answers */
        double[] produce(int n) {
            try (RedisMailbox<String> m = fresh()) {
                double cpu = Rounds.serverCpuMicros(jedis);
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    m.send(BODY);
                }
                double[] timed = timed(start, cpu);
                m.purge();
                return timed;
            }
        }

        double[] produceBatches(int n) {
            try (RedisMailbox<String> m = fresh()) {
                double cpu = Rounds.serverCpuMicros(jedis);
                long start = System.nanoTime();
                for (int i = 0; i < n; i += 10) {
                    m.sendBatch(TEN);
                }
                double[] timed = timed(start, cpu);
                m.purge();
                return timed;
            }
        }

        private double[] timed(long start, double cpu) {
            double seconds = (System.nanoTime() - start) / 1e9;
            return new double[] {seconds, Rounds.serverCpuMicros(jedis) - cpu};
        }

        double[] consume(int n, int workers) throws InterruptedException {
            try (RedisMailbox<String> m = fresh()) {
                for (int i = 0; i < n; i += 10) {
                    m.sendBatch(TEN);
                }
                LongAdder consumed = new LongAdder();
                LongAdder stale = new LongAdder();
                List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
                List<Thread> threads = new ArrayList<>();
                for (int w = 0; w < workers; w++) {
                    threads.add(new Thread(() -> {
                        try {
                            List<Message<String>> held = List.of();
                            while (true) {
                                // settle the message held with the next receive: one round trip each
                                List<Message<String>> got = m.acknowledgeAndReceive(held, ONE, s -> stale.increment());
                                if (got.isEmpty()) {
                                    return;
                                }
                                consumed.add(got.size());
                                held = got;
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    }, "peer-consumer-" + w));
                }
                double cpu = Rounds.serverCpuMicros(jedis);
                long start = System.nanoTime();
                threads.forEach(Thread::start);
                for (Thread t : threads) {
                    t.join();
                }
                double[] timed = timed(start, cpu);
                if (!failures.isEmpty()) {
                    throw new IllegalStateException("a consumer failed", failures.get(0));
                }
                if (consumed.sum() != n || stale.sum() != 0 || m.approximateCount() != 0) {
                    throw new IllegalStateException("consumed " + consumed.sum() + " of " + n + ", " + stale.sum()
                            + " stale, " + m.approximateCount() + " left");
                }
                return timed;
            }
        }

        long[] latency(int samples, int warmup) throws InterruptedException {
            try (RedisMailbox<String> m = fresh()) {
                LinkedBlockingQueue<Long> results = new LinkedBlockingQueue<>();
                Thread consumer = new Thread(() -> {
                    List<Message<String>> held = List.of();
                    for (int i = 0; i < warmup + samples; i++) {
                        List<Message<String>> got = m.acknowledgeAndReceive(held, WAIT, s -> { });
                        results.add(System.nanoTime() - Long.parseLong(got.get(0).body()));
                        held = got;
                    }
                    m.acknowledgeBatch(held);
                }, "peer-latency-consumer");
                consumer.start();
                long[] out = new long[samples];
                for (int i = 0; i < warmup + samples; i++) {
                    // the same 2 ms pause as the BullMQ side, then make sure the consumer is parked
                    Thread.sleep(2);
                    while (!blocked(consumer)) {
                        Thread.sleep(1);
                    }
                    m.send(Long.toString(System.nanoTime()));
                    long nanos = results.take();
                    if (i >= warmup) {
                        out[i - warmup] = nanos;
                    }
                }
                consumer.join();
                return out;
            }
        }

        /** A receive is blocked once its thread sleeps in the mailbox's wake hub, waiting for a notice. */
        private static boolean blocked(Thread t) {
            if (t.getState() != Thread.State.TIMED_WAITING) {
                return false;
            }
            for (StackTraceElement f : t.getStackTrace()) {
                if (f.getClassName().endsWith(".WakeHub") && f.getMethodName().equals("await")) {
                    return true;
                }
            }
            return false;
        }
    }

    /** The Node process running BullMQ: one JSON command a line in, one JSON answer a line out. */
    private static final class Peer implements AutoCloseable {
        private static final String[] FILES = {"package.json", "bullmq-peer.mjs"};
        /** Queue names, unique across both processes. */
        private static final java.util.concurrent.atomic.AtomicInteger QUEUES = new java.util.concurrent.atomic.AtomicInteger();

        private final Process process;
        private final Writer in;
        private final BufferedReader out;
        private final String nodeVersion;
        private String version = "?";

        private Peer(Process process, String nodeVersion) {
            this.process = process;
            this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            this.nodeVersion = nodeVersion;
        }

        /** @return the running peer, or null (having said why) where BullMQ cannot run here */
        static Peer start(Path dir, String host, int port) throws IOException, InterruptedException {
            String node = output(List.of("node", "--version"), null);
            if (node == null) {
                System.out.println("BullMQ leg skipped: no 'node' on the PATH (on Debian or Ubuntu: apt-get install"
                        + " nodejs npm; elsewhere Node.js 18 or later from https://nodejs.org, npm included)");
                return null;
            }
            Files.createDirectories(dir);
            for (String file : FILES) {
                try (InputStream resource = PeerHarness.class.getResourceAsStream("peer/" + file)) {
                    Files.copy(resource, dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            if (output(List.of("npm", "--version"), null) == null) {
                System.out.println("BullMQ leg skipped: no 'npm' on the PATH (on Debian or Ubuntu: apt-get install npm)");
                return null;
            }
            // quick when node_modules already matches package.json
            List<String> install = List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error");
            if (output(install, dir) == null || !Files.exists(dir.resolve("node_modules/bullmq/package.json"))) {
                System.out.println("BullMQ leg skipped: 'npm install' of bullmq in " + dir + " failed (see above);"
                        + " it needs the npm registry, or a proxy set with npm config set proxy, or a DIR"
                        + " (--peer-dir) where bullmq is installed already");
                return null;
            }
            Process p = new ProcessBuilder("node", "bullmq-peer.mjs", host, Integer.toString(port)).directory(dir.toFile())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Peer peer = new Peer(p, node.trim());
            peer.version = peer.read().get("bullmq").asText();
            return peer;
        }

        /** Runs a command; returns its stdout, or null (after printing why) if it cannot run or fails. */
        private static String output(List<String> command, Path dir) throws InterruptedException {
            try {
                Process p = new ProcessBuilder(command).directory(dir == null ? null : dir.toFile())
                        .redirectErrorStream(true).start();
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    System.out.print(text);
                    return null;
                }
                return text;
            } catch (IOException e) {
                System.out.println(String.join(" ", command) + ": " + e.getMessage());
                return null;
            }
        }

        /** @return {seconds, redis-server main-thread CPU microseconds in that time} */
        double[] timed(String op, int n, Map<String, Object> extra) throws IOException {
            Map<String, Object> command = new java.util.HashMap<>(extra);
            command.put("op", op);
            command.put("n", n);
            JsonNode reply = call(command);
            return new double[] {reply.get("seconds").asDouble(), reply.get("serverMicros").asDouble()};
        }

        /**
         * n jobs taken by two processes with a Worker of {@code concurrency} each, started together; timed from
         * the first worker's start to the last completion, in the processes' own monotonic clocks.
         */
        static double[] consumeShared(JedisPooled jedis, int n, int concurrency, Peer a, Peer b) throws IOException {
            String queue = "shared-" + QUEUES.incrementAndGet();
            a.call(Map.of("op", "fill", "queue", queue, "n", n));
            for (Peer p : List.of(a, b)) {
                p.call(Map.of("op", "prepare", "queue", queue, "concurrency", concurrency));
            }
            double cpu = Rounds.serverCpuMicros(jedis);
            a.send(Map.of("op", "start", "queue", queue));
            b.send(Map.of("op", "start", "queue", queue));
            JsonNode ra = a.read();
            JsonNode rb = b.read();
            double micros = Rounds.serverCpuMicros(jedis) - cpu;
            a.call(Map.of("op", "obliterate", "queue", queue));
            long completed = ra.get("completed").asLong() + rb.get("completed").asLong();
            if (completed != n) {
                throw new IllegalStateException("two BullMQ processes completed " + completed + " of " + n + " jobs");
            }
            long start = Math.min(Long.parseLong(ra.get("start").asText()), Long.parseLong(rb.get("start").asText()));
            long end = Math.max(Long.parseLong(ra.get("end").asText()), Long.parseLong(rb.get("end").asText()));
            return new double[] {(end - start) / 1e9, micros};
        }

        /** One process adds and runs the Worker (the add and the job's arrival share one event loop). */
        long[] latency(int samples, int warmup) throws IOException {
            return nanos(call(Map.of("op", "latency", "samples", samples, "warmup", warmup)));
        }

        /**
         * One process's Worker receives while the other process adds, so an add's promise chain never shares
         * the worker's event loop, and each needs a CPU of its own to wake on.
         */
        static long[] latency(int samples, int warmup, Peer worker, Peer producer) throws IOException {
            String queue = "latency-" + QUEUES.incrementAndGet();
            worker.call(Map.of("op", "prepareLatency", "queue", queue));
            producer.call(Map.of("op", "produceTimed", "queue", queue, "count", warmup + samples));
            return nanos(worker.call(Map.of("op", "collectLatency", "queue", queue, "count", warmup + samples,
                    "warmup", warmup)));
        }

        private static long[] nanos(JsonNode reply) {
            JsonNode nanos = reply.get("nanos");
            long[] out = new long[nanos.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = nanos.get(i).asLong();
            }
            return out;
        }

        private JsonNode call(Map<String, Object> command) throws IOException {
            send(command);
            return read();
        }

        private void send(Map<String, Object> command) throws IOException {
            Map<String, Object> c = new java.util.HashMap<>(command);
            c.putIfAbsent("queue", "peer-" + QUEUES.incrementAndGet());
            in.write(JSON.writeValueAsString(c) + "\n");
            in.flush();
        }

        private JsonNode read() throws IOException {
            String line = out.readLine();
            if (line == null) {
                throw new IOException("the BullMQ peer exited (exit code " + exitCode() + ")");
            }
            JsonNode reply = JSON.readTree(line);
            if (!reply.get("ok").asBoolean()) {
                throw new IOException("the BullMQ peer failed: " + reply.get("error").asText());
            }
            return reply;
        }

        private String exitCode() {
            try {
                return process.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "still running";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "?";
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroy();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroy();
            }
        }
    }
}
