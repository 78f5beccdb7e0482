package dev.mailbox.benchmarks;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** What every harness shares: repeated rounds, medians, percentiles and the report lines. */
final class Rounds {

    /** One measured round giving one figure. */
    interface Round {
        double run() throws Exception;
    }

    /** One measured round giving a baseline and a candidate figure from the same time window. */
    interface PairRound {
        double[] run() throws Exception;
    }

    /** One part of a harness, run when named on the command line. */
    interface Section {
        void run() throws Exception;
    }

    /** How many threads {@link #compareCycles} runs cycles on. */
    static final int CYCLE_THREADS = 8;

    private Rounds() {
    }

    /**
     * Runs, in order, the sections named among the arguments that do not start with "--", or all of them
     * when none is named.
     */
    static void sections(String[] args, List<Map.Entry<String, Section>> sections) throws Exception {
        List<String> only = Arrays.stream(args).filter(a -> !a.startsWith("--")).toList();
        for (Map.Entry<String, Section> s : sections) {
            if (only.isEmpty() || only.contains(s.getKey())) {
                s.getValue().run();
            }
        }
    }

    /** Runs {@code warmups} discarded rounds, then {@code rounds} measured ones; returns the median. */
    static double median(int rounds, int warmups, Round r) throws Exception {
        for (int i = 0; i < warmups; i++) {
            r.run();
        }
        double[] results = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            results[i] = r.run();
        }
        Arrays.sort(results);
        return results[rounds / 2];
    }

    /** After one warm-up, the measured round whose candidate/baseline ratio is the median. */
    static double[] medianPair(int rounds, PairRound r) throws Exception {
        r.run();
        double[][] results = new double[rounds][];
        for (int i = 0; i < rounds; i++) {
            results[i] = r.run();
        }
        Arrays.sort(results, (a, b) -> Double.compare(a[1] / a[0], b[1] / b[0]));
        return results[rounds / 2];
    }

    /**
     * Send + receive + acknowledge cycles on {@code threads} threads for {@code millis}.
     *
     * @return cycles per second
     */
    static double cycles(Mailbox<String> m, int threads, long millis) throws InterruptedException {
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<Thread> list = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                ReceiveOptions once = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(1));
                while (System.nanoTime() < end) {
                    m.send("x");
                    for (Message<String> msg : m.receive(once)) {
                        msg.acknowledge();
                    }
                    done.incrementAndGet();
                }
            });
            list.add(thread);
            thread.start();
        }
        for (Thread t : list) {
            t.join();
        }
        return done.get() / ((System.nanoTime() - start) / 1e9);
    }

    /**
     * Compares two mailboxes by {@link #cycles} on {@link #CYCLE_THREADS} threads, baseline then candidate in
     * each round (the median round of {@link #medianPair}), and prints both and the verdict on candidate / baseline.
     */
    static void compareCycles(int rounds, long millis, String baselineLabel, Mailbox<String> baseline,
                              String candidateLabel, Mailbox<String> candidate, String verdictLabel, double target)
            throws Exception {
        double[] pair = medianPair(rounds, () -> new double[] {
            cycles(baseline, CYCLE_THREADS, millis), cycles(candidate, CYCLE_THREADS, millis)});
        row(baselineLabel, pair[0], "cycles/s", 1.0);
        row(candidateLabel, pair[1], "cycles/s", pair[1] / pair[0]);
        verdict(verdictLabel, pair[1] / pair[0], target);
    }

    /**
     * What redis-server did since the last {@code CONFIG RESETSTAT}, from {@code INFO commandstats}.
     *
     * @return {commands run (each script's own calls included), microseconds spent in them, scripts run
     *         (EVAL and EVALSHA)}
     */
    static double[] serverStats(redis.clients.jedis.UnifiedJedis jedis) {
        String stats = new String((byte[]) jedis.sendCommand(redis.clients.jedis.Protocol.Command.INFO, "commandstats"),
                java.nio.charset.StandardCharsets.UTF_8);
        double calls = 0;
        double micros = 0;
        double scripts = 0;
        for (String line : stats.split("\\r?\\n")) {
            if (line.startsWith("cmdstat_")) {
                calls += field(line, "calls=");
                micros += field(line, "usec=");
                if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                    scripts += field(line, "calls=");
                }
            }
        }
        return new double[] {calls, micros, scripts};
    }

    /**
     * redis-server's main-thread CPU time so far ({@code INFO cpu}), in microseconds: unlike the sum of
     * {@code INFO commandstats}, it does not count a script's own calls twice, and it covers only what the
     * server did, whoever asked.
     */
    static double serverCpuMicros(redis.clients.jedis.UnifiedJedis jedis) {
        String info = new String((byte[]) jedis.sendCommand(redis.clients.jedis.Protocol.Command.INFO, "cpu"),
                java.nio.charset.StandardCharsets.UTF_8);
        double seconds = 0;
        for (String line : info.split("\\r?\\n")) {
            if (line.startsWith("used_cpu_sys_main_thread:") || line.startsWith("used_cpu_user_main_thread:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds * 1e6;
    }

    private static double field(String line, String name) {
        int at = line.indexOf(name, line.indexOf(':'));
        int end = line.indexOf(',', at);
        return Double.parseDouble(line.substring(at + name.length(), end < 0 ? line.length() : end));
    }

    static long percentile(long[] sorted, double p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static void row(String label, double value, String unit, double ratio) {
        System.out.printf(Locale.ROOT, "   %-64s %,14.0f %-9s ratio %.3f%n", label, value, unit, ratio);
    }

    static void latencyRow(String label, long[] sortedNanos) {
        System.out.printf(Locale.ROOT, "   %-64s p50 %7.1f us   p99 %7.1f us   max %8.1f us%n", label,
                percentile(sortedNanos, 50) / 1e3, percentile(sortedNanos, 99) / 1e3,
                sortedNanos[sortedNanos.length - 1] / 1e3);
    }

    /** Like {@link #latencyRow} for figures of seconds, in milliseconds. */
    static void latencyRowMillis(String label, long[] sortedNanos) {
        System.out.printf(Locale.ROOT, "   %-64s p50 %7.0f ms   p99 %7.0f ms   max %8.0f ms%n", label,
                percentile(sortedNanos, 50) / 1e6, percentile(sortedNanos, 99) / 1e6,
                sortedNanos[sortedNanos.length - 1] / 1e6);
    }

    static void verdict(String what, double value, double target) {
        verdict(what, value, target, target);
    }

    static void verdict(String what, double value, double floor, double target) {
        String v = value >= target ? "MET" : value >= floor ? "FLOOR MET, TARGET MISSED" : "MISSED";
        System.out.printf(Locale.ROOT, "   %-64s %s (%.3f)%n", what, v, value);
    }
}
