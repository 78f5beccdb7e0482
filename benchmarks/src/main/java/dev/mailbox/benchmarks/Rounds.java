package dev.mailbox.benchmarks;

import java.util.Arrays;
import java.util.Locale;

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

    private Rounds() {
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

    static void verdict(String what, double value, double target) {
        verdict(what, value, target, target);
    }

    static void verdict(String what, double value, double floor, double target) {
        String v = value >= target ? "MET" : value >= floor ? "FLOOR MET, TARGET MISSED" : "MISSED";
        System.out.printf(Locale.ROOT, "   %-64s %s (%.3f)%n", what, v, value);
    }
}
