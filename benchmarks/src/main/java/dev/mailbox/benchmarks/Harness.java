package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs a backend side by side with its physical baseline in one JVM run and prints the ratios.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.Harness [--quick]
 * </pre>
 *
 * The in-memory suite: send→receive→ack cycles on one thread and with 2 producers + 2 consumers,
 * next to {@link LinkedBlockingQueue} offer+poll; long-poll wake latency next to a blocked
 * {@link BlockingQueue#poll(long, TimeUnit)}; heap per queued message next to the queue's own; and FIFO
 * mailboxes (1,000 groups and 1 group) and tenants of a fair standard mailbox next to a plain standard
 * mailbox, with an order checker on the FIFO consumers that fails the run on a violation. Sections run
 * alone by name: {@code cycle}, {@code producers}, {@code wake}, {@code heap}, {@code fifo}.
 */
public final class Harness {

    private static final ReceiveOptions ONE = ReceiveOptions.defaults();
    private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10));

    private final Duration round;
    private final int rounds;
    private final int latencySamples;
    private final int heapMessages;

    private Harness(boolean quick) {
        this.round = quick ? Duration.ofMillis(300) : Duration.ofSeconds(1);
        this.rounds = quick ? 3 : 7;
        this.latencySamples = quick ? 1_000 : 10_000;
        this.heapMessages = quick ? 100_000 : 1_000_000;
    }

    /**
     * @param args {@code --quick} for a short smoke run
     * @throws Exception if a benchmark thread fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("inmemory");
        boolean quick = Arrays.asList(args).contains("--quick");
        Harness h = new Harness(quick);
        System.out.printf("Mailbox in-memory harness: JDK %s, %d cores, max heap %d MiB, %d rounds of %d ms%n%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20, h.rounds, h.round.toMillis());
        Rounds.sections(args, List.of(Map.entry("cycle", h::cycle), Map.entry("producers", h::producers),
                Map.entry("wake", h::wake), Map.entry("heap", h::heap), Map.entry("fifo", h::fifo)));
    }

    private void cycle() throws Exception {
        // 1. one thread, send -> receive -> ack
        double lbq = Rounds.median(rounds, 2, this::lbqCycleRound);
        double utf8 = Rounds.median(rounds, 2, () -> mailboxCycleRound(InMemoryMailbox.builder("bench", Codec.utf8()).build()));
        double ref = Rounds.median(rounds, 2, () -> mailboxCycleRound(new InMemoryMailbox<>("bench")));
        System.out.println("1. single thread, one message per cycle (median of rounds)");
        Rounds.row("LinkedBlockingQueue offer+poll (baseline)", lbq, "cycles/s", 1.0);
        Rounds.row("InMemoryMailbox, Codec.utf8(): send+receive+ack", utf8, "cycles/s", utf8 / lbq);
        Rounds.row("InMemoryMailbox, by reference: send+receive+ack", ref, "cycles/s", ref / lbq);
        Rounds.verdict("single-thread cycle ratio (utf8 codec) >= 0.05, target 0.20", utf8 / lbq, 0.05, 0.20);
        System.out.println();
    }

    private void producers() throws Exception {
        // 2. two producers and two consumers
        double lbq22 = Rounds.median(rounds, 2, this::lbqProducerConsumerRound);
        double mb22 = Rounds.median(rounds, 2, () -> mailboxProducerConsumerRound(InMemoryMailbox.builder("bench", Codec.utf8()).build()));
        System.out.println();
        System.out.println("2. 2 producers + 2 consumers, at most 10,000 messages outstanding (median of rounds)");
        Rounds.row("LinkedBlockingQueue put+take (baseline)", lbq22, "msgs/s", 1.0);
        Rounds.row("InMemoryMailbox, Codec.utf8(): send+receive+ack", mb22, "msgs/s", mb22 / lbq22);
        System.out.println();
    }

    private void wake() throws Exception {
        // 3. wake latency
        long[] lbqWake = lbqWakeLatencies();
        long[] mbWake = mailboxWakeLatencies();
        System.out.println();
        System.out.printf("3. long-poll wake latency, send -> blocked receive returns (%d samples)%n", latencySamples);
        Rounds.latencyRow("LinkedBlockingQueue.poll(timeout) (baseline)", lbqWake);
        Rounds.latencyRow("InMemoryMailbox.receive(wait 10 s)", mbWake);
        double p99ms = Rounds.percentile(mbWake, 99) / 1e6;
        System.out.printf("   %-60s %s (p99 %.3f ms, target <= 2 ms)%n", "wake p99", p99ms <= 2 ? "MET" : "MISSED", p99ms);
        System.out.println();
    }

    private void heap() {
        // 4. heap per queued message
        System.out.println();
        System.out.printf("4. heap per queued message, %,d messages with a 16-byte body%n", heapMessages);
        double lbqBytes = heapPerElement(() -> {
            LinkedBlockingQueue<byte[]> q = new LinkedBlockingQueue<>();
            for (int i = 0; i < heapMessages; i++) {
                q.offer(new byte[16]);
            }
            return q;
        });
        double utf8Bytes = heapPerElement(() -> {
            InMemoryMailbox<String> m = InMemoryMailbox.builder("heap", Codec.utf8()).build();
            for (int i = 0; i < heapMessages; i++) {
                m.send("0123456789abcdef");
            }
            return m;
        });
        double refBytes = heapPerElement(() -> {
            InMemoryMailbox<byte[]> m = new InMemoryMailbox<>("heap");
            for (int i = 0; i < heapMessages; i++) {
                m.send(new byte[16]);
            }
            return m;
        });
        // the body itself is the 16 payload bytes; everything else, byte[] header included, is overhead
        System.out.printf("   %-60s %8.1f bytes total, %6.1f overhead%n", "LinkedBlockingQueue<byte[16]> (baseline)", lbqBytes, lbqBytes - 16);
        System.out.printf("   %-60s %8.1f bytes total, %6.1f overhead%n", "InMemoryMailbox, Codec.utf8(), 16-char body", utf8Bytes, utf8Bytes - 16);
        System.out.printf("   %-60s %8.1f bytes total, %6.1f overhead%n", "InMemoryMailbox, by reference, byte[16] body", refBytes, refBytes - 16);
        double overhead = utf8Bytes - 16;
        System.out.printf("   %-60s %s (%.1f bytes, target <= 200 bytes)%n", "heap overhead per message (utf8 codec)",
                overhead <= 200 ? "MET" : "MISSED", overhead);
        System.out.println();
    }

    // ---- 5. FIFO and fairness, next to a plain standard mailbox

    private void fifo() throws Exception {
        SendOptions[] none = {SendOptions.defaults()};
        SendOptions[] thousand = groups(1000);
        SendOptions[] one = groups(1);
        // each round runs the standard mailbox, then the other, and the round with the median ratio is shown,
        // so a noisy machine moves both sides of a ratio together
        double[] tenants = Rounds.medianPair(rounds, () -> new double[] {
                groupCycleRound(standardMailbox(), none), groupCycleRound(standardMailbox(), thousand)});
        double[] fifo1000 = Rounds.medianPair(rounds, () -> new double[] {
                groupCycleRound(standardMailbox(), none), groupCycleRound(fifoMailbox(), thousand)});
        double[] fifo1 = Rounds.medianPair(rounds, () -> new double[] {
                groupCycleRound(standardMailbox(), none), groupCycleRound(fifoMailbox(), one)});
        System.out.println("5. FIFO and fair mailboxes, Codec.utf8(), each next to a standard one in the same rounds"
                + " (the round with the median ratio)");
        System.out.println("   a. single thread, send+receive+ack, one message per cycle");
        pairRows("standard, 1,000 tenants (fairness bookkeeping)", tenants, "cycles/s");
        pairRows("FIFO, 1,000 groups", fifo1000, "cycles/s");
        pairRows("FIFO, 1 group", fifo1, "cycles/s");
        Rounds.verdict("FIFO (1,000 groups) / standard >= 0.5", fifo1000[1] / fifo1000[0], 0.5);
        Rounds.verdict("FIFO (1 group) / standard >= 0.5", fifo1[1] / fifo1[0], 0.5);

        double[] fifo22 = Rounds.medianPair(rounds, () -> new double[] {
                groupProducersConsumersRound(standardMailbox(), false), groupProducersConsumersRound(fifoMailbox(), true)});
        System.out.println("   b. 2 producers + 2 consumers, batches of up to 10, at most 10,000 outstanding, the same"
                + " numbered bodies; FIFO consumers fail the run on a group out of order");
        pairRows("FIFO, 1,000 groups (500 per producer)", fifo22, "msgs/s");
        Rounds.verdict("FIFO (1,000 groups) / standard, 2+2 threads >= 0.5", fifo22[1] / fifo22[0], 0.5);
        System.out.println();
    }

    private static void pairRows(String label, double[] pair, String unit) {
        Rounds.row("standard, no group ids (baseline of the next line)", pair[0], unit, 1.0);
        Rounds.row(label, pair[1], unit, pair[1] / pair[0]);
    }

    private static InMemoryMailbox<String> standardMailbox() {
        return InMemoryMailbox.builder("bench", Codec.utf8()).build();
    }

    private static InMemoryMailbox<String> fifoMailbox() {
        return InMemoryMailbox.builder("bench", Codec.utf8()).fifo(FifoOptions.defaults()).build();
    }

    private static SendOptions[] groups(int n) {
        SendOptions[] options = new SendOptions[n];
        for (int i = 0; i < n; i++) {
            options[i] = SendOptions.defaults().withGroupId("g" + i);
        }
        return options;
    }

    private double groupCycleRound(Mailbox<String> m, SendOptions[] groups) {
        String body = "hello, mailbox";
        long ops = 0;
        long start = System.nanoTime();
        long end = start + round.toNanos();
        try (m) {
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    m.send(body, groups[i % groups.length]);
                    m.receive(ONE).get(0).acknowledge();
                }
                ops += 1000;
            }
        }
        return ops / ((System.nanoTime() - start) / 1e9);
    }

    /**
     * Producer {@code p} numbers the messages of its own half of 1,000 groups and sends them with those group
     * ids ({@code grouped}) or without; consumers check each group's order, and a violation fails the run where
     * it is promised (FIFO). Both sides do the same work either way, so the ratio is the mailbox's.
     */
    private double groupProducersConsumersRound(Mailbox<String> m, boolean grouped) throws InterruptedException {
        int groups = 1000;
        int half = groups / 2;
        ReceiveOptions opts = ReceiveOptions.defaults().withMaxMessages(10).withWaitTime(Duration.ofMillis(100));
        java.util.concurrent.atomic.AtomicInteger producers = new java.util.concurrent.atomic.AtomicInteger();
        ThreadLocal<long[]> counters = ThreadLocal.withInitial(() -> new long[half + 1]);
        ThreadLocal<Integer> producerIndex = ThreadLocal.withInitial(producers::getAndIncrement);
        java.util.concurrent.ConcurrentHashMap<String, Long> last = new java.util.concurrent.ConcurrentHashMap<>();
        SendOptions[] options = grouped ? groups(groups) : new SendOptions[groups];
        java.util.Arrays.fill(options, 0, grouped ? 0 : groups, SendOptions.defaults());
        boolean ordered = m.capabilities().fifo();
        try (m) {
            return producersConsumers(unused -> {
                long[] c = counters.get();
                int g = (int) (c[half]++ % half);
                int group = producerIndex.get() * half + g;
                m.send(group + ":" + c[g]++, options[group]);
            }, () -> {
                List<Message<String>> got = m.receive(opts);
                for (Message<String> msg : got) {
                    String b = msg.body();
                    int colon = b.indexOf(':');
                    long seq = Long.parseLong(b, colon + 1, b.length(), 10);
                    Long before = last.put(b.substring(0, colon), seq);
                    if (ordered && before != null && before >= seq) {
                        throw new IllegalStateException("FIFO order broken in group " + b.substring(0, colon)
                                + ": " + seq + " after " + before);
                    }
                    msg.acknowledge();
                }
                return got.size();
            });
        }
    }

    // ---- 1. single-thread cycle

    private double lbqCycleRound() {
        LinkedBlockingQueue<String> q = new LinkedBlockingQueue<>();
        String body = "hello, mailbox";
        long ops = 0;
        long end = System.nanoTime() + round.toNanos();
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                q.offer(body);
                if (q.poll() == null) {
                    throw new IllegalStateException();
                }
            }
            ops += 1000;
        }
        return ops / (round.toNanos() / 1e9);
    }

    private double mailboxCycleRound(Mailbox<String> m) {
        String body = "hello, mailbox";
        long ops = 0;
        long start = System.nanoTime();
        long end = start + round.toNanos();
        try (m) {
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    m.send(body);
                    List<Message<String>> got = m.receive(ONE);
                    got.get(0).acknowledge();
                }
                ops += 1000;
            }
        }
        return ops / ((System.nanoTime() - start) / 1e9);
    }

    // ---- 2. producers and consumers

    private double lbqProducerConsumerRound() throws InterruptedException {
        LinkedBlockingQueue<String> q = new LinkedBlockingQueue<>();
        return producersConsumers(q::put, () -> q.poll(100, TimeUnit.MILLISECONDS) == null ? 0 : 1);
    }

    private double mailboxProducerConsumerRound(Mailbox<String> m) throws InterruptedException {
        ReceiveOptions opts = ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(100));
        try (m) {
            return producersConsumers(m::send, () -> {
                List<Message<String>> got = m.receive(opts);
                for (Message<String> msg : got) {
                    msg.acknowledge();
                }
                return got.size();
            });
        }
    }

    private interface Producer {
        void put(String s) throws InterruptedException;
    }

    private interface Consumer {
        int take() throws InterruptedException;
    }

    /** Producers are throttled by a shared window so neither side can run away with the heap. */
    private double producersConsumers(Producer producer, Consumer consumer) throws InterruptedException {
        Semaphore window = new Semaphore(10_000);
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder consumed = new LongAdder();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < 2; i++) {
            threads.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        if (window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                            producer.put("hello, mailbox");
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
            threads.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        int n = consumer.take();
                        consumed.add(n);
                        window.release(n);
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        threads.forEach(Thread::start);
        Thread.sleep(round.toMillis() / 5); // let the pipeline fill
        long before = consumed.sum();
        long start = System.nanoTime();
        Thread.sleep(round.toMillis());
        long after = consumed.sum();
        double seconds = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("benchmark thread failed", failures.get(0));
        }
        return (after - before) / seconds;
    }

    // ---- 3. wake latency

    private long[] lbqWakeLatencies() throws InterruptedException {
        LinkedBlockingQueue<Long> q = new LinkedBlockingQueue<>();
        return wakeLatencies(t -> q.offer(t), () -> {
            Long t0 = q.poll(10, TimeUnit.SECONDS);
            return System.nanoTime() - t0;
        });
    }

    private long[] mailboxWakeLatencies() throws InterruptedException {
        try (InMemoryMailbox<String> m = InMemoryMailbox.builder("wake", Codec.utf8()).build()) {
            return wakeLatencies(t -> m.send(Long.toString(t)), () -> {
                Message<String> got = m.receive(WAIT).get(0);
                long latency = System.nanoTime() - Long.parseLong(got.body());
                got.acknowledge();
                return latency;
            });
        }
    }

    private interface Sender {
        void send(long sentAtNanos);
    }

    private interface Waiter {
        long awaitOne() throws InterruptedException;
    }

    /** For each sample: wait until the receiver is parked in its wait, then send and time the wake-up. */
    private long[] wakeLatencies(Sender sender, Waiter waiter) throws InterruptedException {
        int warmup = latencySamples / 5;
        long[] samples = new long[latencySamples];
        LinkedBlockingQueue<Long> results = new LinkedBlockingQueue<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread receiver = new Thread(() -> {
            try {
                for (int i = 0; i < warmup + latencySamples; i++) {
                    results.put(waiter.awaitOne());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.countDown();
            }
        }, "wake-receiver");
        receiver.start();
        for (int i = 0; i < warmup + latencySamples; i++) {
            while (receiver.getState() != Thread.State.TIMED_WAITING) {
                Thread.onSpinWait();
            }
            sender.send(System.nanoTime());
            long latency = results.take();
            if (i >= warmup) {
                samples[i - warmup] = latency;
            }
        }
        done.await();
        Arrays.sort(samples);
        return samples;
    }

    // ---- 4. heap

    private interface Filler {
        Object fill();
    }

    private double heapPerElement(Filler filler) {
        long before = usedHeapAfterGc();
        Object keep = filler.fill();
        long after = usedHeapAfterGc();
        double perElement = (after - before) / (double) heapMessages;
        if (keep.hashCode() == 42) { // keeps the structure reachable until measured
            System.out.print("");
        }
        if (keep instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return perElement;
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
