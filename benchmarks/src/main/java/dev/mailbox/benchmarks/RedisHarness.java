package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * RedisMailbox side by side with plain Jedis on the same kind of client, in one JVM run:
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.RedisHarness [--quick] [--uri redis://host:port]
 * </pre>
 *
 * Without {@code --uri} it starts its own redis-server (PATH, else the bundled one) on a free loopback
 * port with persistence off.
 */
public final class RedisHarness {

    private static final String BODY = "hello, mailbox";

    private final Duration round;
    private final int rounds;
    private final int latencySamples;

    private RedisHarness(boolean quick) {
        this.round = quick ? Duration.ofMillis(500) : Duration.ofSeconds(2);
        this.rounds = quick ? 3 : 5;
        this.latencySamples = quick ? 500 : 5_000;
    }

    /**
     * @param args {@code --quick}, {@code --uri redis://...}
     * @throws Exception if a benchmark fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("redis");
        List<String> a = Arrays.asList(args);
        boolean quick = a.contains("--quick");
        int u = a.indexOf("--uri");
        if (u >= 0) {
            new RedisHarness(quick).run(a.get(u + 1));
        } else {
            try (RedisServerProcess server = RedisServerProcess.start()) {
                new RedisHarness(quick).run(server.uri());
            }
        }
    }

    private void run(String uri) throws Exception {
        try (JedisPooled jedis = new JedisPooled(java.net.URI.create(uri));
             RedisMailbox<String> mailbox = RedisMailbox.builder("bench", Codec.utf8()).client(jedis).build()) {
            String info = new String((byte[]) jedis.sendCommand(Protocol.Command.INFO, "server"),
                    java.nio.charset.StandardCharsets.UTF_8);
            String version = info.lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("redis_version:?");
            System.out.printf(Locale.ROOT, "Mailbox Redis harness: %s, %s, JDK %s, %d cores, %d rounds of %d ms%n%n",
                    uri, version, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                    rounds, round.toMillis());
            mailbox.purge();

            double[] pair = Rounds.medianPair(rounds, () -> interleavedRound(jedis, mailbox));
            double plain = pair[0];
            double cycle = pair[1];
            System.out.println("1. one client thread, send -> receive -> ack, 3 round trips per cycle;");
            System.out.println("   baseline and mailbox alternate in blocks of 50 cycles within each round (median round)");
            Rounds.row("plain Jedis LPUSH + RPOP + DEL (baseline)", plain, "cycles/s", 1.0);
            Rounds.row("RedisMailbox send + receive + acknowledge", cycle, "cycles/s", cycle / plain);
            System.out.printf(Locale.ROOT, "   %-64s %.1f us (plain Jedis), %.1f us (mailbox)%n", "time per round trip",
                    1e6 / plain / 3, 1e6 / cycle / 3);
            Rounds.verdict("cycle ratio >= 0.7", cycle / plain, 0.7);

            double batched = Rounds.median(rounds, 1, () -> batchRound(mailbox));
            System.out.println();
            System.out.println("2. batches of 10: sendBatch(10) + receive(10) + acknowledgeBatch(10)");
            Rounds.row("RedisMailbox, unbatched (from 1.)", cycle, "msgs/s", 1.0);
            Rounds.row("RedisMailbox, batches of 10", batched, "msgs/s", batched / cycle);
            Rounds.verdict("batched / unbatched >= 5", batched / cycle, 5);

            long[] wake = wakeLatencies(mailbox);
            System.out.println();
            System.out.printf("3. long-poll wake latency, send -> blocked receive returns (%d samples)%n", latencySamples);
            Rounds.latencyRow("RedisMailbox.receive(wait 10 s)", wake);
            Rounds.verdict("wake p99 <= 10 ms", 10.0 / (Rounds.percentile(wake, 99) / 1e6), 1.0);
            mailbox.purge();
        }
    }

    private double[] interleavedRound(JedisPooled jedis, RedisMailbox<String> m) {
        return cycleRound(jedis, m, round);
    }

    /**
     * Round trips on this 2-core machine are bimodal (~30 us when both sides stay on a busy core,
     * ~100 us after a core idles), and the mode drifts over seconds; alternating short blocks of
     * baseline and mailbox gives both the same conditions. Three round trips a cycle on each side.
     *
     * @return cycles per second of {plain Jedis, mailbox}
     */
    static double[] cycleRound(JedisPooled jedis, RedisMailbox<String> m, Duration round) {
        ReceiveOptions one = ReceiveOptions.defaults();
        long plainNanos = 0;
        long mailboxNanos = 0;
        long cycles = 0;
        long end = System.nanoTime() + round.toNanos();
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 50; i++) {
                jedis.lpush("bench:plain", BODY);
                jedis.rpop("bench:plain");
                jedis.del("bench:plain:gone");
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < 50; i++) {
                m.send(BODY);
                m.receive(one).get(0).acknowledge();
            }
            long t2 = System.nanoTime();
            plainNanos += t1 - t0;
            mailboxNanos += t2 - t1;
            cycles += 50;
        }
        return new double[] {cycles / (plainNanos / 1e9), cycles / (mailboxNanos / 1e9)};
    }

    /**
     * Like {@link #cycleRound} with two round trips a cycle on each side: the mailbox sends, then
     * acknowledges the message it received last time with this receive ({@code acknowledgeAndReceive});
     * plain Jedis does LPUSH, then DEL and RPOP pipelined in one round trip.
     *
     * @return cycles per second of {plain Jedis, mailbox}
     */
    static double[] combinedCycleRound(JedisPooled jedis, RedisMailbox<String> m, Duration round) {
        ReceiveOptions one = ReceiveOptions.defaults();
        long plainNanos = 0;
        long mailboxNanos = 0;
        long cycles = 0;
        List<Message<String>> held = List.of();
        long end = System.nanoTime() + round.toNanos();
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 50; i++) {
                jedis.lpush("bench:plain", BODY);
                try (var p = jedis.pipelined()) {
                    p.del("bench:plain:gone");
                    p.rpop("bench:plain");
                    p.sync();
                }
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < 50; i++) {
                m.send(BODY);
                held = m.acknowledgeAndReceive(held, one, s -> {
                    throw new IllegalStateException("stale handle in the cycle: " + s.id());
                });
            }
            long t2 = System.nanoTime();
            plainNanos += t1 - t0;
            mailboxNanos += t2 - t1;
            cycles += 50;
        }
        if (!held.isEmpty()) {
            m.acknowledgeBatch(held);
        }
        return new double[] {cycles / (plainNanos / 1e9), cycles / (mailboxNanos / 1e9)};
    }

    private double batchRound(RedisMailbox<String> m) {
        List<String> ten = List.of(BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY);
        ReceiveOptions tenAtOnce = ReceiveOptions.defaults().withMaxMessages(10);
        long n = 0;
        long start = System.nanoTime();
        long end = start + round.toNanos();
        while (System.nanoTime() < end) {
            for (int i = 0; i < 20; i++) {
                m.sendBatch(ten);
                List<Message<String>> got = m.receive(tenAtOnce);
                if (!m.acknowledgeBatch(got).isEmpty() || got.size() != 10) {
                    throw new IllegalStateException("batch went wrong: " + got.size());
                }
                n += got.size();
            }
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }

    private long[] wakeLatencies(RedisMailbox<String> m) throws InterruptedException {
        ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10));
        int warmup = latencySamples / 5;
        LinkedBlockingQueue<Long> results = new LinkedBlockingQueue<>();
        Thread receiver = new Thread(() -> {
            for (int i = 0; i < warmup + latencySamples; i++) {
                Message<String> got = m.receive(wait).get(0);
                results.add(System.nanoTime() - Long.parseLong(got.body()));
                got.acknowledge();
            }
        }, "wake-receiver");
        receiver.start();
        long[] samples = new long[latencySamples];
        for (int i = 0; i < warmup + latencySamples; i++) {
            awaitBlocked(receiver);
            m.send(Long.toString(System.nanoTime()));
            long latency = results.take();
            if (i >= warmup) {
                samples[i - warmup] = latency;
            }
        }
        receiver.join();
        Arrays.sort(samples);
        return samples;
    }

    /** The receiver is blocked once it sleeps in the mailbox's wake hub, waiting for a notice. */
    private static void awaitBlocked(Thread t) {
        while (true) {
            if (t.getState() == Thread.State.TIMED_WAITING) {
                for (StackTraceElement f : t.getStackTrace()) {
                    if (f.getClassName().endsWith(".WakeHub") && f.getMethodName().equals("await")) {
                        return;
                    }
                }
            }
            Thread.onSpinWait();
        }
    }
}
