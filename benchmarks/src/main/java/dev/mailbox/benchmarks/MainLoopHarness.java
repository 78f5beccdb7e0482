package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.mainloop.RequestHandler;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;

/**
 * Request/response round trips through MainLoop and MainLoopClient next to the same exchange written by
 * hand on the raw mailboxes (same envelopes, same JSON codecs, same number of worker threads):
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.MainLoopHarness [--quick]
 * </pre>
 *
 * With N handlers, N caller threads each make one call at a time. The raw exchange gives each caller
 * its own response mailbox and each worker receives, sends the result and acknowledges; MainLoop adds
 * the reply-to routing, the completed-request memory, visibility extension and metrics, and the client
 * adds its receiving thread and futures.
 */
public final class MainLoopHarness {

    private static final Codec<MainLoopRequest<String>> REQUESTS = MainLoopCodecs.requests(String.class);
    private static final Codec<MainLoopResult<String>> RESULTS = MainLoopCodecs.results(String.class);

    private final Duration round;
    private final int rounds;
    /** Whether the raw exchange acknowledges with its next receive (acknowledgeAndReceive). */
    private final boolean combined;
    /** The loop's {@code receiveBatch}, or 0 for the builder's default. */
    private final int loopBatch;
    /** Voluntary context switches per call in the last {@link #callers} round (NaN if unknown). */
    private double lastSwitchesPerCall = Double.NaN;
    /** How long the last round's callers ran, in seconds. */
    private double lastSeconds = Double.NaN;
    /** Redis pairs run so far: odd ones run MainLoop first. */
    private int pairs;

    private MainLoopHarness(boolean quick) {
        this(quick ? Duration.ofMillis(700) : Duration.ofSeconds(3), quick ? 3 : 5, false, 0);
    }

    /**
     * @param combined whether the raw exchange's workers and callers acknowledge with their next receive
     *                 ({@code acknowledgeAndReceive}, one round trip on Redis) rather than on their own
     * @param loopBatch the loop's {@code receiveBatch} (1: every worker receives one request at a time, as the
     *                  raw exchange's handlers do), or 0 for the builder's default
     */
    MainLoopHarness(Duration round, int rounds, boolean combined, int loopBatch) {
        this.round = round;
        this.rounds = rounds;
        this.combined = combined;
        this.loopBatch = loopBatch;
    }

    /**
     * One paired round on Redis, for the peer harness: the raw exchange and MainLoop, taking turns to go first.
     *
     * @return calls per second of {raw exchange, MainLoop + client}, then scripts run on Redis per call by each
     *         (counting the round's set-up and tear-down too), then this JVM's voluntary context switches per
     *         call by each (see {@link #voluntarySwitches}), then this JVM's CPU microseconds per call by each,
     *         then redis-server's by each
     */
    double[] redisPair(JedisPooled jedis, int handlers, List<long[]> rawLatencies, List<long[]> loopLatencies)
            throws Exception {
        Opener opener = new Opener() {
            @Override
            public <T> Mailbox<T> open(String name, Codec<T> codec) {
                return RedisMailbox.builder(name, codec).client(jedis).build();
            }
        };
        // the two sides take turns going first, so neither always runs on a machine the other just warmed
        boolean loopFirst = pairs++ % 2 == 1;
        double[] loopSide = loopFirst ? redisSide(jedis, () -> mainLoop(opener, handlers, loopLatencies)) : null;
        double[] rawSide = redisSide(jedis, () -> raw(opener, handlers, rawLatencies));
        if (!loopFirst) {
            loopSide = redisSide(jedis, () -> mainLoop(opener, handlers, loopLatencies));
        }
        double raw = rawSide[0];
        double rawSwitches = rawSide[1];
        double rawCommands = rawSide[2];
        double loop = loopSide[0];
        double loopSwitches = loopSide[1];
        double loopCommands = loopSide[2];
        double seconds = round.toNanos() / 1e9;
        return new double[] {raw, loop, rawCommands / (raw * seconds), loopCommands / (loop * seconds), rawSwitches,
            loopSwitches, rawSide[3], loopSide[3], rawSide[4], loopSide[4]};
    }

    /**
     * One side of a Redis pair: {calls per second, context switches per call, scripts run, this JVM's CPU
     * microseconds per call, redis-server's main-thread CPU microseconds per call}. The CPU figures cover the
     * whole side, set-up and tear-down included, so they split a difference in rate between the client and the
     * server rather than price a call exactly.
     */
    private double[] redisSide(JedisPooled jedis, Side side) throws Exception {
        jedis.sendCommand(redis.clients.jedis.Protocol.Command.CONFIG, "RESETSTAT");
        double server = Rounds.serverCpuMicros(jedis);
        long jvm = processCpuNanos();
        double rate = side.run();
        double calls = rate * lastSeconds;
        double jvmPerCall = (processCpuNanos() - jvm) / 1e3 / calls;
        double serverPerCall = (Rounds.serverCpuMicros(jedis) - server) / calls;
        return new double[] {rate, lastSwitchesPerCall, Rounds.serverStats(jedis)[2], jvmPerCall, serverPerCall};
    }

    /** This JVM's CPU time so far, all threads, in nanoseconds, or -1 where the platform does not say. */
    private static long processCpuNanos() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
    }

    /** Runs one side of a round. */
    private interface Side {
        /** @return calls per second */
        double run() throws Exception;
    }

    /**
     * @param args {@code --quick}
     * @throws Exception if a benchmark fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("mainloop");
        MainLoopHarness h = new MainLoopHarness(Arrays.asList(args).contains("--quick"));
        System.out.println("MainLoop round trips vs the raw mailbox exchange (median of " + h.rounds + " paired rounds of "
                + h.round.toMillis() + " ms)");
        Map<String, Mailbox<?>> memory = new ConcurrentHashMap<>();
        h.backend("InMemoryMailbox", new Opener() {
            @Override
            @SuppressWarnings("unchecked")
            public <T> Mailbox<T> open(String name, Codec<T> codec) {
                return (Mailbox<T>) memory.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, codec).build());
            }
        });
        try (RedisServerProcess server = RedisServerProcess.start()) {
            GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
            pool.setMaxTotal(64);
            pool.setMaxIdle(64);
            try (JedisPooled jedis = new JedisPooled(pool, server.host(), server.port())) {
                h.backend("RedisMailbox", new Opener() {
                    @Override
                    public <T> Mailbox<T> open(String name, Codec<T> codec) {
                        return RedisMailbox.builder(name, codec).client(jedis).build();
                    }
                });
            }
        }
    }

    /** Opens the mailbox of a name on one backend. */
    interface Opener {
        <T> Mailbox<T> open(String name, Codec<T> codec);
    }

    private void backend(String label, Opener opener) throws Exception {
        System.out.println();
        System.out.println(label);
        for (int handlers : new int[] {1, 4}) {
            List<long[]> rawLatencies = new ArrayList<>();
            List<long[]> loopLatencies = new ArrayList<>();
            int n = handlers;
            double[] pair = Rounds.medianPair(rounds, () -> {
                double raw = raw(opener, n, rawLatencies);
                double rawSwitches = lastSwitchesPerCall;
                double loop = mainLoop(opener, n, loopLatencies);
                return new double[] {raw, loop, rawSwitches, lastSwitchesPerCall};
            });
            String what = handlers + " handler" + (handlers == 1 ? "" : "s") + ", " + handlers + " caller"
                    + (handlers == 1 ? "" : "s");
            Rounds.row("raw exchange, " + what, pair[0], "calls/s", 1.0);
            Rounds.row("MainLoop + MainLoopClient, " + what, pair[1], "calls/s", pair[1] / pair[0]);
            System.out.printf(java.util.Locale.ROOT, "   %-64s %.2f (raw), %.2f (MainLoop)%n",
                    "JVM threads' voluntary context switches per call, that round", pair[2], pair[3]);
            Rounds.latencyRow("raw exchange latency, " + what, merged(rawLatencies));
            Rounds.latencyRow("MainLoop latency, " + what, merged(loopLatencies));
        }
    }

    private double raw(Opener opener, int handlers, List<long[]> latencies) throws Exception {
        String id = Long.toString(System.nanoTime(), 36);
        Mailbox<MainLoopRequest<String>> requests = opener.open("raw-" + id, REQUESTS);
        List<Mailbox<?>> opened = new java.util.concurrent.CopyOnWriteArrayList<>(List.of(requests));
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < handlers; w++) {
            Thread t = new Thread(() -> {
                Map<String, Mailbox<MainLoopResult<String>>> replies = new ConcurrentHashMap<>();
                ReceiveOptions options = ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(100));
                List<Message<MainLoopRequest<String>>> answered = List.of();
                while (running.get()) {
                    List<Message<MainLoopRequest<String>>> got = combined
                            ? requests.acknowledgeAndReceive(answered, options, MainLoopHarness::stale)
                            : requests.receive(options);
                    for (Message<MainLoopRequest<String>> m : got) {
                        MainLoopRequest<String> r = m.body();
                        replies.computeIfAbsent(r.replyTo(), name -> track(opened, opener.open(name, RESULTS)))
                                .send(MainLoopResult.success(r.requestId(), r.body(), Instant.now()));
                        if (!combined) {
                            m.acknowledge();
                        }
                    }
                    answered = got;
                }
                if (combined && !answered.isEmpty()) {
                    requests.acknowledgeBatch(answered);
                }
            });
            t.start();
            workers.add(t);
        }
        double rate = callers(handlers, latencies, (caller, stop) -> {
            Mailbox<MainLoopResult<String>> mine = track(opened, opener.open("raw-" + id + "-reply-" + caller, RESULTS));
            ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10));
            List<List<Message<MainLoopResult<String>>>> last = new ArrayList<>(List.of(List.of()));
            return () -> {
                MainLoopRequest<String> r = MainLoopRequest.of("ping").withReplyTo(mine.name());
                requests.send(r);
                // combined: the previous reply is acknowledged with this receive (a caller's last one stays)
                List<Message<MainLoopResult<String>>> got = combined
                        ? mine.acknowledgeAndReceive(last.get(0), wait, MainLoopHarness::stale) : mine.receive(wait);
                if (got.size() != 1 || !got.get(0).body().requestId().equals(r.requestId())) {
                    throw new IllegalStateException("raw exchange lost its reply");
                }
                if (combined) {
                    last.set(0, got);
                } else {
                    got.get(0).acknowledge();
                }
            };
        });
        running.set(false);
        for (Thread t : workers) {
            t.join();
        }
        opened.forEach(Mailbox::close);
        return rate;
    }

    private static void stale(Message<?> m) {
        throw new IllegalStateException("a handle went stale in the raw exchange: " + m.id());
    }

    private static <T> Mailbox<T> track(List<Mailbox<?>> opened, Mailbox<T> m) {
        opened.add(m);
        return m;
    }

    private double mainLoop(Opener opener, int handlers, List<long[]> latencies) throws Exception {
        String id = Long.toString(System.nanoTime(), 36);
        Mailbox<MainLoopRequest<String>> requests = opener.open("loop-" + id, REQUESTS);
        MainLoop.Builder<String, String> builder = MainLoop.builder(requests, RequestHandler.<String, String>ofBody(s -> s))
                .replyTo(name -> opener.open(name, RESULTS)).concurrency(handlers)
                .waitTime(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(5));
        MainLoop<String, String> loop = (loopBatch > 0 ? builder.receiveBatch(loopBatch) : builder).build();
        Thread runner = new Thread(loop::run);
        runner.start();
        double rate;
        try (MainLoopClient<String, String> client = MainLoopClient.builder(requests,
                name -> opener.open(name, RESULTS)).receiveWait(Duration.ofMillis(200)).build()) {
            rate = callers(handlers, latencies, (caller, stop) -> () -> {
                // the caller waits for its own result, as the raw exchange's callers do: callAndWait receives on
                // this thread while it waits
                if (!"ping".equals(client.callAndWait("ping", Duration.ofSeconds(10)))) {
                    throw new IllegalStateException("wrong reply");
                }
            });
        }
        loop.close();
        runner.join();
        requests.close();
        return rate;
    }

    /** One call, made repeatedly by a caller thread. */
    interface Call {
        void run() throws Exception;
    }

    /** Runs {@code n} callers for one round; returns calls per second and adds each caller's latencies. */
    private double callers(int n, List<long[]> latencies, BiFunction<Integer, AtomicBoolean, Call> make)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        long[][] samples = new long[n][];
        long[] counts = new long[n];
        Throwable[] failure = new Throwable[1];
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < n; c++) {
            int caller = c;
            Call call = make.apply(caller, stop);
            Thread t = new Thread(() -> {
                long[] lat = new long[1 << 16];
                int k = 0;
                try {
                    while (!stop.get()) {
                        long t0 = System.nanoTime();
                        call.run();
                        if (k < lat.length) {
                            lat[k] = System.nanoTime() - t0;
                        }
                        k++;
                    }
                } catch (Throwable e) {
                    failure[0] = e;
                }
                counts[caller] = k;
                samples[caller] = Arrays.copyOf(lat, Math.min(k, lat.length));
            });
            threads.add(t);
        }
        long start = System.nanoTime();
        long switchesBefore = voluntarySwitches();
        threads.forEach(Thread::start);
        Thread.sleep(round.toMillis());
        stop.set(true);
        long switches = voluntarySwitches() - switchesBefore; // before the callers end, so theirs count
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        lastSeconds = seconds;
        if (failure[0] != null) {
            throw new IllegalStateException("a caller failed", failure[0]);
        }
        latencies.addAll(Arrays.asList(samples));
        long calls = Arrays.stream(counts).sum();
        lastSwitchesPerCall = switches < 0 || calls == 0 ? Double.NaN : (double) switches / calls;
        return calls / seconds;
    }

    /**
     * Voluntary context switches of every live thread of this JVM ({@code /proc/self/task/}*{@code /status}),
     * or -1 where there is no /proc. Each is a thread that blocked and had to be woken, so the count per call
     * shows the thread hand-offs of an exchange however busy the machine is, which its rate does not.
     */
    static long voluntarySwitches() {
        java.nio.file.Path tasks = java.nio.file.Path.of("/proc/self/task");
        if (!java.nio.file.Files.isDirectory(tasks)) {
            return -1;
        }
        long sum = 0;
        try (var list = java.nio.file.Files.list(tasks)) {
            for (java.nio.file.Path task : list.toList()) {
                try {
                    for (String line : java.nio.file.Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (java.io.IOException | RuntimeException gone) {
                    // the thread ended meanwhile
                }
            }
        } catch (java.io.IOException e) {
            return -1;
        }
        return sum;
    }

    private static long[] merged(List<long[]> parts) {
        long[] all = parts.stream().flatMapToLong(Arrays::stream).toArray();
        Arrays.sort(all);
        return all;
    }
}
