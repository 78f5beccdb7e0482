package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.SendOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * RedisMailbox side by side with plain Jedis on the same kind of client, in one JVM run:
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.RedisHarness [--quick] [--uri redis://host:port] [section...]
 * </pre>
 *
 * Without {@code --uri} it starts its own redis-server (PATH, else the bundled one) on a free loopback
 * port with persistence off. Sections run alone by name: {@code cycle} (1. and 2.), {@code wake} (3.),
 * {@code fifo} (4.: FIFO mailboxes next to a standard one on the same server, producers and consumers, with
 * an order checker that fails the run on a group out of order).
 */
public final class RedisHarness {

    private static final String BODY = "hello, mailbox";

    private final Duration round;
    private final int rounds;
    private final int latencySamples;
    private final List<String> sections;

    private RedisHarness(boolean quick, List<String> sections) {
        this.round = quick ? Duration.ofMillis(500) : Duration.ofSeconds(2);
        this.rounds = quick ? 3 : 5;
        this.latencySamples = quick ? 500 : 5_000;
        this.sections = sections;
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
        List<String> sections = new ArrayList<>(a);
        if (u >= 0) {
            sections.remove(u + 1);
        }
        sections.removeIf(x -> x.startsWith("--"));
        String uri = new Options(args).string("--uri", null); // --uri URI or --uri=URI
        if (uri != null) {
            new RedisHarness(quick, sections).run(uri);
        } else {
            try (RedisServerProcess server = RedisServerProcess.start()) {
                new RedisHarness(quick, sections).run(server.uri());
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
            if (wanted("cycle")) {
                cycleSections(jedis, mailbox);
            }
            if (wanted("wake")) {
                wakeSection(mailbox);
            }
            if (wanted("fifo")) {
                fifoSection(jedis);
            }
            mailbox.purge();
        }
    }

    private boolean wanted(String section) {
        return sections.isEmpty() || sections.contains(section);
    }

    private void cycleSections(JedisPooled jedis, RedisMailbox<String> mailbox) throws Exception {
        {
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
            System.out.println();
        }
    }

    private void wakeSection(RedisMailbox<String> mailbox) throws Exception {
        {
            long[] wake = wakeLatencies(mailbox);
            System.out.println();
            System.out.printf("3. long-poll wake latency, send -> blocked receive returns (%d samples)%n", latencySamples);
            Rounds.latencyRow("RedisMailbox.receive(wait 10 s)", wake);
            Rounds.verdict("wake p99 <= 10 ms", 10.0 / (Rounds.percentile(wake, 99) / 1e6), 1.0);
            System.out.println();
        }
    }

    // ---- 4. FIFO mailboxes next to a standard one

    /**
     * Issue 31's targets: a FIFO mailbox over 1,000 groups with 8 consumers, and over 1 group with 1
     * consumer, each at least 0.7 of a standard mailbox's throughput on the same server. Each round runs the
     * standard mailbox, then the FIFO one, with the same producers, bodies and consumers; the round with the
     * median ratio is shown.
     */
    private void fifoSection(JedisPooled jedis) throws Exception {
        double[] wide = Rounds.medianPair(rounds, () -> flowPair(jedis, 1000, 4, 8));
        double[] narrow = Rounds.medianPair(rounds, () -> flowPair(jedis, 1, 1, 1));
        System.out.println("4. FIFO mailboxes next to a standard one, same server: producers send one message a call,"
                + " consumers receive up to 10 and acknowledge them in one call; both run in alternating 50 ms slices"
                + " of each round; FIFO consumers fail the run on a group out of order (median-ratio round)");
        Rounds.row("standard, 4 producers, 8 consumers (baseline of the next line)", wide[0], "msgs/s", 1.0);
        Rounds.row("FIFO, 1,000 groups, 4 producers, 8 consumers", wide[1], "msgs/s", wide[1] / wide[0]);
        Rounds.row("standard, 1 producer, 1 consumer (baseline of the next line)", narrow[0], "msgs/s", 1.0);
        Rounds.row("FIFO, 1 group, 1 producer, 1 consumer", narrow[1], "msgs/s", narrow[1] / narrow[0]);
        Rounds.verdict("FIFO (1,000 groups, 8 consumers) / standard >= 0.7", wide[1] / wide[0], 0.7);
        Rounds.verdict("FIFO (1 group, 1 consumer) / standard >= 0.7", narrow[1] / narrow[0], 0.7);
        System.out.println();
    }

    /**
     * One round: a standard and a FIFO mailbox, each with its own producers and consumers, taking turns in
     * 50 ms slices for twice the round, so that both meet the same conditions of a machine whose load
     * swings (as {@link #cycleRound} does for one thread). Producer {@code p} sends to its own share of the
     * groups in turn, numbering each group's messages; the bodies are the same on both sides (the standard
     * mailbox gets no group ids), so both do the same work but the mailbox's. At most 5,000 messages are
     * outstanding on a side. A side's threads wait outside its slices; what completes in its slices counts.
     *
     * @return messages received and acknowledged per second of its own slices: {standard, FIFO}
     */
    private double[] flowPair(JedisPooled jedis, int groups, int producers, int consumers) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        int[] active = {-1};
        Side[] sides = {new Side(jedis, false, groups), new Side(jedis, true, groups)};
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (Side side : sides) {
                for (int p = 0; p < producers; p++) {
                    int first = p * groups / producers;
                    int end = (p + 1) * groups / producers;
                    threads.add(new Thread(() -> side.produce(first, end, stop, active, failures)));
                }
                for (int c = 0; c < consumers; c++) {
                    threads.add(new Thread(() -> side.consume(stop, active, failures)));
                }
            }
            threads.forEach(Thread::start);
            long slice = TimeUnit.MILLISECONDS.toNanos(50);
            long slices = Math.max(4, 2 * round.toNanos() / slice);
            for (int i = 0; i < slices + 2; i++) { // the first slice of each side fills its pipeline
                Side side = sides[i % 2];
                synchronized (active) {
                    active[0] = i % 2;
                    side.counting = i >= 2;
                    active.notifyAll();
                }
                long start = System.nanoTime();
                LockSupport.parkNanos(slice);
                side.counting = false;
                if (i >= 2) {
                    side.nanos += System.nanoTime() - start;
                }
            }
        } finally {
            stop.set(true);
            synchronized (active) {
                active.notifyAll();
            }
            for (Thread t : threads) {
                t.join();
            }
            for (Side side : sides) {
                side.mailbox.purge();
                side.mailbox.close();
            }
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("benchmark thread failed", failures.get(0));
        }
        return new double[] {sides[0].consumed.sum() / (sides[0].nanos / 1e9),
            sides[1].consumed.sum() / (sides[1].nanos / 1e9)};
    }

    /** One side of {@link #flowPair}: a mailbox, its bodies' order checker and its counts. */
    private static final class Side {
        private static final ReceiveOptions TEN = ReceiveOptions.defaults().withMaxMessages(10)
                .withWaitTime(Duration.ofMillis(20));
        final RedisMailbox<String> mailbox;
        final boolean fifo;
        final int index;
        final SendOptions[] options;
        final java.util.concurrent.ConcurrentHashMap<Integer, Long> last = new java.util.concurrent.ConcurrentHashMap<>();
        final Semaphore window = new Semaphore(5_000);
        final LongAdder consumed = new LongAdder();
        volatile boolean counting;
        long nanos;

        Side(JedisPooled jedis, boolean fifo, int groups) {
            RedisMailbox.Builder<String> b = RedisMailbox.builder("bench-flow-" + UUID.randomUUID(), Codec.utf8())
                    .client(jedis);
            if (fifo) {
                b.fifo(FifoOptions.defaults());
            }
            this.mailbox = b.build();
            this.fifo = fifo;
            this.index = fifo ? 1 : 0;
            this.options = new SendOptions[groups];
            for (int g = 0; g < groups; g++) {
                options[g] = fifo ? SendOptions.defaults().withGroupId("g" + g) : SendOptions.defaults();
            }
        }

        /** Waits outside this side's slices; returns false once the round is over. */
        private boolean myTurn(AtomicBoolean stop, int[] active) throws InterruptedException {
            synchronized (active) {
                while (active[0] != index && !stop.get()) {
                    active.wait();
                }
            }
            return !stop.get();
        }

        void produce(int first, int end, AtomicBoolean stop, int[] active, List<Throwable> failures) {
            long[] next = new long[end - first];
            try {
                for (int i = 0; myTurn(stop, active); i = (i + 1) % next.length) {
                    if (window.tryAcquire(20, TimeUnit.MILLISECONDS)) {
                        mailbox.send((first + i) + ":" + next[i]++, options[first + i]);
                    }
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        }

        void consume(AtomicBoolean stop, int[] active, List<Throwable> failures) {
            try {
                while (myTurn(stop, active)) {
                    List<Message<String>> got = mailbox.receive(TEN);
                    for (Message<String> msg : got) {
                        String body = msg.body();
                        int colon = body.indexOf(':');
                        int group = Integer.parseInt(body, 0, colon, 10);
                        long seq = Long.parseLong(body, colon + 1, body.length(), 10);
                        Long before = last.put(group, seq);
                        if (fifo && before != null && before >= seq) {
                            throw new IllegalStateException("FIFO order broken in group g" + group + ": " + seq
                                    + " delivered after " + before);
                        }
                    }
                    if (!got.isEmpty()) {
                        List<Message<String>> stale = mailbox.acknowledgeBatch(got);
                        if (!stale.isEmpty()) {
                            throw new IllegalStateException(stale.size() + " stale acknowledgements");
                        }
                        if (counting) {
                            consumed.add(got.size());
                        }
                        window.release(got.size());
                    }
                }
            } catch (Throwable t) {
                failures.add(t);
            }
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
