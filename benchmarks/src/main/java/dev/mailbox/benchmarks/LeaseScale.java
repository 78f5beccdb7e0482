package dev.mailbox.benchmarks;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Issue 33 item 1: N leases at the default TTL (10 s, heartbeat 3 s, grace 2 s), each renewed by its runner every
 * heartbeat, while R acquires a second run, on three coordinators in child JVMs, for a while. Prints what the
 * runners saw (renewal latency, renewals that were late or refused, leases lost), what the coordinators logged
 * (Ratis's log appender failures and restarts, INCONSISTENCY replies, snapshots sent to followers, elections),
 * and the targets with MET or MISSED: every lease renewed on time, 0 spurious expiries, the acquire rate held.
 *
 * <p>The leases are made in bulk, as one imported backup of a table with N grants (acquiring 100,000 one by one
 * would take minutes of this machine before the measurement starts); the import gives every lease a full TTL
 * from when it lands, and the runners start renewing at once, spread evenly over the heartbeat. Runners are
 * {@code --clients} {@link CoordinationClient}s (as many runner processes), each renewing its share of the
 * leases with {@code renewAsync} (which batches). The acquires are fresh grants on a pool of other mailboxes,
 * each released once granted (so the table stays the same size): R grants and R releases a second.
 *
 * <p>A renewal is on time when it is answered OK within the heartbeat (3 s) of being sent. A lease is lost
 * when a renewal is refused (the coordinator expired it); the loss is spurious when the runner's previous
 * accepted renewal was sent less than a TTL before, i.e. the runner did everything right.
 */
final class LeaseScale {

    private static final LeasePolicy POLICY = LeasePolicy.DEFAULT;
    private static final String NAMESPACES = "scale-";
    private static final int NAMESPACE_COUNT = 50;

    private final int leases;
    private final int acquireRate;
    private final int seconds;
    private final int clientCount;
    private final int pool;
    private final List<String> coordinatorJvm;

    private LeaseScale(Options options, boolean quick) {
        this.leases = options.integer("--leases", quick ? 5_000 : 100_000);
        this.acquireRate = options.integer("--acquires", quick ? 200 : 1_000);
        this.seconds = options.integer("--seconds", quick ? 45 : 600);
        this.clientCount = options.integer("--lease-clients", 8);
        this.pool = Math.max(1_000, acquireRate * 20);
        // the coordinators' logs (kept after the run) with times, to line Ratis's warnings up with the figures
        List<String> jvm = new ArrayList<>(List.of("-Xmx1g", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"));
        String more = options.string("--coordinator-jvm", "");
        if (!more.isBlank()) {
            jvm.addAll(List.of(more.trim().split("\\s+")));
        }
        this.coordinatorJvm = List.copyOf(jvm);
    }

    static void run(Options options, boolean quick) throws Exception {
        new LeaseScale(options, quick).run();
    }

    private void run() throws Exception {
        System.out.printf(Locale.ROOT, "%n1. leases: %,d at the default TTL (%d s, heartbeat %d s, grace %d s) renewed by "
                        + "%d clients while %,d acquires/s run (each released), %d s, 3 coordinators in child JVMs (%s)%n",
                leases, POLICY.ttl().toSeconds(), POLICY.heartbeatInterval().toSeconds(), POLICY.grace().toSeconds(),
                clientCount, acquireRate, seconds, String.join(" ", coordinatorJvm));
        // N grants, as the import will hold them (the same ids and epochs)
        LeaseTable table = new LeaseTable();
        long index = 1;
        for (int i = 0; i < leases; i++) {
            table.apply(index++, 1, new Command.Acquire(NAMESPACES + (i % NAMESPACE_COUNT) + "@m" + i, "runner-" + i,
                    "node-" + (i % 100), "127.0.0.1:" + (10_000 + i % 1_000), POLICY.ttl().toMillis(), 1_000));
        }
        List<Lease> held = table.leases();
        Path backup = Files.createTempFile("lease-scale", ".backup");
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(backup))) {
            table.writeExport(out);
        }
        Path logs = Files.createTempDirectory("lease-scale-logs");
        try (TestingCluster cluster = TestingCluster.builder().size(3).processes(true)
                .javaOptions(coordinatorJvm.toArray(String[]::new)).start()) {
            cluster.awaitLeader(Duration.ofSeconds(60));
            try (CoordinationClient admin = CoordinationClient.builder().endpoints(cluster.endpoints())
                    .callTimeout(Duration.ofSeconds(60)).build()) {
                long t0 = System.nanoTime();
                int imported = admin.cluster().importState(backup).leases();
                System.out.printf(Locale.ROOT, "   %-64s %,d in %.1f s%n", "leases imported", imported,
                        (System.nanoTime() - t0) / 1e9);
            } finally {
                Files.deleteIfExists(backup);
            }
            try {
                measure(cluster, held);
            } finally {
                for (String id : cluster.nodeIds()) {
                    Path log = cluster.dataDir(id).getParent().resolve(id + ".log");
                    if (Files.isRegularFile(log)) {
                        Files.copy(log, logs.resolve(id + ".log"));
                    }
                }
                System.out.println("   the coordinators' logs: " + logs);
            }
        }
    }

    private void measure(TestingCluster cluster, List<Lease> held) throws Exception {
        long heartbeat = POLICY.heartbeatInterval().toNanos();
        long ttl = POLICY.ttl().toNanos();
        int n = held.size();
        AtomicLongArray lastOkSent = new AtomicLongArray(n);
        AtomicIntegerArray inFlight = new AtomicIntegerArray(n);
        AtomicIntegerArray lost = new AtomicIntegerArray(n);
        Histogram renewLatency = new Histogram();
        AtomicLong renewed = new AtomicLong();
        AtomicLong late = new AtomicLong();
        AtomicLong unavailable = new AtomicLong();
        AtomicLong skipped = new AtomicLong(); // due while the previous renewal of that lease was still unanswered
        AtomicLong lostCount = new AtomicLong();
        AtomicLong spurious = new AtomicLong();
        Map<String, String> lossReasons = new ConcurrentHashMap<>();
        AtomicBoolean running = new AtomicBoolean(true);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            lastOkSent.set(i, start); // the import gave each a full TTL from about now
        }

        List<CoordinationClient> clients = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            clients.add(CoordinationClient.builder().endpoints(cluster.endpoints()).callTimeout(Duration.ofSeconds(10))
                    .build());
        }
        List<Thread> renewers = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            CoordinationClient client = clients.get(c);
            int from = (int) ((long) c * n / clientCount);
            int to = (int) ((long) (c + 1) * n / clientCount);
            Thread t = new Thread(() -> {
                // lease i (of this client's share) is due at start + round * heartbeat + its phase
                int share = to - from;
                long round = 0;
                int cursor = 0;
                while (running.get()) {
                    long now = System.nanoTime();
                    while (running.get()) {
                        long due = start + round * heartbeat + (long) cursor * heartbeat / share;
                        if (due - now > 0) {
                            break;
                        }
                        int i = from + cursor;
                        if (lost.get(i) == 0) {
                            if (inFlight.compareAndSet(i, 0, 1)) {
                                renew(client, held.get(i), i, renewLatency, renewed, late, unavailable, lostCount,
                                        spurious, lossReasons, lastOkSent, inFlight, lost, heartbeat, ttl);
                            } else {
                                skipped.incrementAndGet();
                            }
                        }
                        if (++cursor == share) {
                            cursor = 0;
                            round++;
                        }
                    }
                    sleepQuietly(5);
                }
            }, "renewer-" + c);
            t.setDaemon(true);
            renewers.add(t);
        }
        renewers.forEach(Thread::start);

        // acquires: fresh grants of a pool of mailboxes, each released once granted, at the given rate
        Histogram acquireLatency = new Histogram();
        AtomicLong acquired = new AtomicLong();
        AtomicLong acquireFailed = new AtomicLong();
        AtomicLong acquireSkipped = new AtomicLong();
        AtomicLong released = new AtomicLong();
        Map<String, String> acquireErrors = new ConcurrentHashMap<>();
        CoordinationClient acquirer = CoordinationClient.builder().endpoints(cluster.endpoints())
                .callTimeout(Duration.ofSeconds(10)).build();
        ExecutorService releasers = Executors.newFixedThreadPool(64, r -> {
            Thread t = new Thread(r, "releaser");
            t.setDaemon(true);
            return t;
        });
        Semaphore acquireWindow = new Semaphore(1_024);
        Thread acquires = new Thread(() -> {
            long issued = 0;
            while (running.get()) {
                long shouldHave = (System.nanoTime() - start) * acquireRate / 1_000_000_000L;
                for (; issued < shouldHave && running.get(); issued++) {
                    if (!acquireWindow.tryAcquire()) {
                        acquireSkipped.incrementAndGet(); // 1,024 unanswered already: the rate is not held
                        continue;
                    }
                    long k = issued;
                    String mailbox = "churn@c" + (k % pool);
                    long t0 = System.nanoTime();
                    acquirer.leases().acquireAsync(mailbox, new LeaseHolder("churn-" + k, "node-churn", "127.0.0.1:2"),
                            Duration.ZERO).whenComplete((lease, e) -> {
                                acquireWindow.release();
                                acquireLatency.record(System.nanoTime() - t0);
                                if (e != null) {
                                    acquireFailed.incrementAndGet();
                                    acquireErrors.putIfAbsent(String.valueOf(CoordinationException.of(e).reason()),
                                            String.valueOf(e.getMessage()));
                                    return;
                                }
                                acquired.incrementAndGet();
                                releasers.execute(() -> {
                                    try {
                                        acquirer.leases().release(lease);
                                        released.incrementAndGet();
                                    } catch (RuntimeException x) {
                                        acquireErrors.putIfAbsent("release " + x.getClass().getSimpleName(),
                                                String.valueOf(x.getMessage()));
                                    }
                                });
                            });
                }
                sleepQuietly(1);
            }
        }, "acquirer");
        acquires.setDaemon(true);
        acquires.start();

        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long nextReport = start + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() - end < 0) {
            sleepQuietly(200);
            if (System.nanoTime() - nextReport >= 0) {
                nextReport += TimeUnit.SECONDS.toNanos(15);
                System.out.printf(Locale.ROOT, "   ... %3d s: %,d renewed (%,d late, %,d unavailable, %,d lost), %,d "
                                + "acquired, renewal p99 %.1f ms max %.1f ms%n",
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), renewed.get(), late.get(),
                        unavailable.get(), lostCount.get(), acquired.get(), renewLatency.percentile(99) / 1e6,
                        renewLatency.max() / 1e6);
            }
        }
        running.set(false);
        double elapsed = (System.nanoTime() - start) / 1e9;
        for (Thread t : renewers) {
            t.join(5_000);
        }
        acquires.join(5_000);
        // the answers still on their way count too (a renewal may be late, not lost)
        long drain = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() - drain < 0 && (inFlightCount(inFlight) > 0 || acquireWindow.availablePermits() < 1_024)) {
            sleepQuietly(100);
        }
        releasers.shutdown();
        releasers.awaitTermination(15, TimeUnit.SECONDS);
        int stillOut = inFlightCount(inFlight);

        // what the table says at the end: a lease of a runner that was never told it lost it must be active
        long expiredInTable = 0;
        try (CoordinationClient admin = CoordinationClient.builder().endpoints(cluster.endpoints())
                .callTimeout(Duration.ofSeconds(60)).build()) {
            for (int ns = 0; ns < NAMESPACE_COUNT; ns++) {
                for (Lease l : admin.leases().list(NAMESPACES + ns)) {
                    if (l.state() != LeaseState.ACTIVE) {
                        expiredInTable++;
                    }
                }
            }
        }
        Map<String, Long> ratis = ratisLog(cluster);
        clients.forEach(CoordinationClient::close);
        acquirer.close();

        System.out.printf(Locale.ROOT, "   %-64s %,d (%,.0f /s)%n", "renewals answered OK", renewed.get(),
                renewed.get() / elapsed);
        System.out.printf(Locale.ROOT, "   %-64s p50 %8.1f ms   p99 %8.1f ms   max %8.1f ms%n", "renewal latency",
                renewLatency.percentile(50) / 1e6, renewLatency.percentile(99) / 1e6, renewLatency.max() / 1e6);
        System.out.printf(Locale.ROOT, "   %-64s %,d late (> %d s), %,d unavailable, %,d due while the last was unanswered"
                        + ", %,d unanswered at the end%n", "renewals not on time", late.get(),
                POLICY.heartbeatInterval().toSeconds(), unavailable.get(), skipped.get(), stillOut);
        System.out.printf(Locale.ROOT, "   %-64s %,d (%,d spurious: refused though the runner renewed on time)%s%n",
                "leases lost (a renewal refused)", lostCount.get(), spurious.get(),
                lossReasons.isEmpty() ? "" : ", e.g. " + lossReasons.values().stream().limit(2).toList());
        System.out.printf(Locale.ROOT, "   %-64s %,d%n", "leases not ACTIVE in the table at the end", expiredInTable);
        System.out.printf(Locale.ROOT, "   %-64s %,d granted (%,.0f /s), %,d released, %,d failed, %,d not sent (window "
                        + "full)%s%n", "acquires", acquired.get(), acquired.get() / elapsed, released.get(),
                acquireFailed.get(), acquireSkipped.get(), acquireErrors.isEmpty() ? "" : ", e.g. " + acquireErrors);
        System.out.printf(Locale.ROOT, "   %-64s p50 %8.1f ms   p99 %8.1f ms   max %8.1f ms%n", "acquire latency",
                acquireLatency.percentile(50) / 1e6, acquireLatency.percentile(99) / 1e6, acquireLatency.max() / 1e6);
        ratis.forEach((what, count) -> System.out.printf(Locale.ROOT, "   %-64s %,d%n", "coordinators' log: " + what,
                count));

        boolean onTime = late.get() == 0 && unavailable.get() == 0 && skipped.get() == 0 && stillOut == 0
                && lostCount.get() == 0;
        target(String.format(Locale.ROOT, "%,d leases renewed on time (each renewal OK within %d s)", n,
                POLICY.heartbeatInterval().toSeconds()), onTime, String.format(Locale.ROOT,
                "%,d late, %,d unavailable, %,d lost; max %.0f ms", late.get(), unavailable.get(), lostCount.get(),
                renewLatency.max() / 1e6));
        // a lease the table ended that its runner was never told of (no refusal) was lost behind its back
        long unseen = Math.max(0, expiredInTable - lostCount.get());
        target(String.format(Locale.ROOT, "0 spurious expiries over %d s", seconds), spurious.get() + unseen == 0,
                String.format(Locale.ROOT, "%,d refused on time, %,d ended unseen", spurious.get(), unseen));
        double rate = acquired.get() / elapsed;
        target(String.format(Locale.ROOT, "%,d acquires/s meanwhile", acquireRate), rate >= 0.95 * acquireRate,
                String.format(Locale.ROOT, "%,.0f /s", rate));
        long restarts = ratis.getOrDefault("log appender failed (restarted)", 0L);
        target("Ratis log appender restarts: none", restarts == 0, restarts + " restarts, "
                + ratis.getOrDefault("INCONSISTENCY replies", 0L) + " INCONSISTENCY replies");
    }

    private static int inFlightCount(AtomicIntegerArray inFlight) {
        int c = 0;
        for (int i = 0; i < inFlight.length(); i++) {
            c += inFlight.get(i);
        }
        return c;
    }

    private static void renew(CoordinationClient client, Lease lease, int i, Histogram latency, AtomicLong renewed,
                              AtomicLong late, AtomicLong unavailable, AtomicLong lostCount, AtomicLong spurious,
                              Map<String, String> reasons, AtomicLongArray lastOkSent, AtomicIntegerArray inFlight,
                              AtomicIntegerArray lost, long heartbeat, long ttl) {
        long sent = System.nanoTime();
        client.leases().renewAsync(lease).whenComplete((ok, e) -> {
            long took = System.nanoTime() - sent;
            latency.record(took);
            if (e == null) {
                renewed.incrementAndGet();
                lastOkSent.set(i, sent);
                if (took > heartbeat) {
                    late.incrementAndGet();
                }
            } else if (CoordinationException.of(e).reason() == CoordinationException.Reason.UNAVAILABLE) {
                unavailable.incrementAndGet();
            } else if (lost.compareAndSet(i, 0, 1)) {
                lostCount.incrementAndGet();
                if (sent - lastOkSent.get(i) < ttl) {
                    spurious.incrementAndGet();
                }
                reasons.putIfAbsent(String.valueOf(CoordinationException.of(e).reason()), e.getMessage());
            }
            inFlight.set(i, 0);
        });
    }

    /** What the coordinators' logs say about Ratis's replication, counted over the three. */
    private static Map<String, Long> ratisLog(TestingCluster cluster) throws IOException {
        Map<String, String> patterns = new LinkedHashMap<>();
        patterns.put("log appender failed (restarted)", "LogAppenderDaemon");
        patterns.put("INCONSISTENCY replies", "reply with nextIndex");
        patterns.put("appendEntries timed out", "Timed out appendEntries");
        patterns.put("heartbeats timed out", "Timed out HEARTBEAT");
        patterns.put("snapshots sent to a follower", "send snapshot");
        patterns.put("snapshots taken", "Took a snapshot");
        patterns.put("leader elections started", "LeaderElection");
        patterns.put("role changes", "raft state transition");
        Map<String, Long> counts = new LinkedHashMap<>();
        patterns.keySet().forEach(k -> counts.put(k, 0L));
        List<String> firstFailure = new ArrayList<>();
        for (String id : cluster.nodeIds()) {
            Path log = cluster.dataDir(id).getParent().resolve(id + ".log");
            if (!Files.isRegularFile(log)) {
                continue;
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int k = 0; k < lines.size(); k++) {
                String line = lines.get(k);
                for (Map.Entry<String, String> p : patterns.entrySet()) {
                    if (line.contains(p.getValue()) && (!p.getValue().equals("LogAppenderDaemon") || line.contains(" failed"))
                            && (!p.getValue().equals("LeaderElection") || line.contains("start"))) {
                        counts.merge(p.getKey(), 1L, Long::sum);
                        if (p.getValue().equals("LogAppenderDaemon") && firstFailure.isEmpty()) {
                            firstFailure.add(id + ": " + line);
                            for (int j = k + 1; j < Math.min(lines.size(), k + 4); j++) {
                                firstFailure.add("      " + lines.get(j));
                            }
                        }
                    }
                }
            }
        }
        if (!firstFailure.isEmpty()) {
            System.out.println("   the first log appender failure:");
            firstFailure.forEach(l -> System.out.println("      " + l));
        }
        return counts;
    }

    private static void target(String what, boolean met, String value) {
        System.out.printf(Locale.ROOT, "   %-64s %s (%s)%n", what, met ? "MET" : "MISSED", value);
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Latencies in buckets 2 % apart, from 1 us up; concurrent. */
    static final class Histogram {
        private static final double STEP = Math.log(1.02);
        private final AtomicLongArray counts = new AtomicLongArray(1_200);
        private final AtomicLong max = new AtomicLong();
        private final AtomicLong total = new AtomicLong();

        void record(long nanos) {
            long micros = Math.max(1, nanos / 1_000);
            int bucket = (int) Math.min(counts.length() - 1, Math.log(micros) / STEP);
            counts.incrementAndGet(bucket);
            total.incrementAndGet();
            max.accumulateAndGet(nanos, Math::max);
        }

        /** @return the percentile in nanoseconds (the upper edge of its bucket), 0 if empty */
        long percentile(double p) {
            long n = total.get();
            if (n == 0) {
                return 0;
            }
            long rank = (long) Math.ceil(p / 100 * n);
            long seen = 0;
            for (int b = 0; b < counts.length(); b++) {
                seen += counts.get(b);
                if (seen >= rank) {
                    return Math.min(max.get(), (long) (Math.exp((b + 1) * STEP) * 1_000));
                }
            }
            return max.get();
        }

        long max() {
            return max.get();
        }
    }
}
