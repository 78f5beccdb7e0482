package dev.mailbox.benchmarks;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Coordinator failover as an operator meets it: three {@code mailboxctl coordinator start} processes on
 * loopback, the leader killed with SIGKILL (no shutdown hook, no goodbye: its sockets die with it), and
 * the time until one plain {@link CoordinationClient#leases()}{@code .acquire} that started at the kill,
 * with the client's own retries, succeeds. Each kill also times when a survivor first reports itself
 * leader of a newer term (detection + election), so the rest is the client finding it. The killed node
 * is started again and caught up before the next kill.
 *
 * <p>{@code --soak-seconds N} instead keeps {@code --leases} leases renewed at their heartbeat for N
 * seconds and counts leader changes (the target is none).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.FailoverHarness [--kills 20]
 *     [--mailboxctl cli/target/mailboxctl.jar] [--election-min-ms 150] [--election-max-ms 300]
 *     [--soak-seconds 0] [--leases 1000] [--flag --more-coordinator-flag ...]
 * </pre>
 */
public final class FailoverHarness implements AutoCloseable {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /** More options for the coordinators' JVMs ({@code --jvm OPTION}, repeatable). */
    private static final List<String> JVM_OPTIONS = new ArrayList<>();
    private static final LeaseHolder HOLDER = new LeaseHolder("bench", "node-bench", "127.0.0.1:9");

    private final Path jar;
    private final Path root;
    private final List<String> extraFlags;
    private final Map<String, Integer> raftPorts = new LinkedHashMap<>();
    private final Map<String, Integer> controlPorts = new LinkedHashMap<>();
    private final Map<String, Process> processes = new ConcurrentHashMap<>();
    private final Map<String, CoordinationClient> probes = new LinkedHashMap<>();
    private final AtomicLong names = new AtomicLong();

    /**
     * @param jar        the mailboxctl jar
     * @param extraFlags more {@code coordinator start} flags for every node
     * @throws IOException if the ports or the temporary directory cannot be had
     */
    public FailoverHarness(Path jar, List<String> extraFlags) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("no mailboxctl jar at " + jar.toAbsolutePath() + ": build it with "
                    + "mvn -q -pl cli -am package -DskipTests, or pass --mailboxctl PATH");
        }
        this.jar = jar;
        this.extraFlags = List.copyOf(extraFlags);
        this.root = Files.createTempDirectory("failover-harness");
        for (String id : List.of("n1", "n2", "n3")) {
            raftPorts.put(id, freePort());
            controlPorts.put(id, freePort());
        }
    }

    public static void main(String[] args) throws Exception {
        int kills = 20;
        Path jar = Path.of("cli/target/mailboxctl.jar");
        long soakSeconds = 0;
        int leases = 1_000;
        List<String> flags = new ArrayList<>();
        for (Map.Entry<String, String> o : Options.parse(args, Set.of(), Set.of("--kills", "--mailboxctl",
                "--election-min-ms", "--election-max-ms", "--soak-seconds", "--leases", "--flag", "--jvm"))) {
            String v = o.getValue();
            switch (o.getKey()) {
                case "--kills" -> kills = Integer.parseInt(v);
                case "--mailboxctl" -> jar = Path.of(v);
                case "--election-min-ms" -> flags.addAll(List.of("--election-timeout-min-ms", v));
                case "--election-max-ms" -> flags.addAll(List.of("--election-timeout-max-ms", v));
                case "--soak-seconds" -> soakSeconds = Long.parseLong(v);
                case "--leases" -> leases = Integer.parseInt(v);
                case "--flag" -> flags.add(v);
                case "--jvm" -> JVM_OPTIONS.add(v);
                default -> throw new AssertionError(o.getKey());
            }
        }
        try (FailoverHarness h = new FailoverHarness(jar, flags)) {
            h.startAll();
            System.out.printf(Locale.ROOT, "3 coordinators (mailboxctl coordinator start %s), %d cores, %s%n",
                    String.join(" ", flags), Runtime.getRuntime().availableProcessors(), h.root);
            if (soakSeconds > 0) {
                h.soak(soakSeconds, leases);
            } else {
                h.kills(kills);
            }
        }
    }

    // --- the processes ---------------------------------------------------------------------------

    /** Starts the three nodes and waits for a leader. */
    public void startAll() throws Exception {
        for (String id : raftPorts.keySet()) {
            start(id, "new");
        }
        for (String id : raftPorts.keySet()) {
            probes.put(id, CoordinationClient.builder().endpoint(endpoint(id)).callTimeout(Duration.ofMillis(200))
                    .maxAttempts(1).build());
        }
        awaitLeader();
    }

    /** @return every node's control-plane address */
    public List<String> endpoints() {
        return raftPorts.keySet().stream().map(this::endpoint).toList();
    }

    private String endpoint(String id) {
        return "127.0.0.1:" + controlPorts.get(id);
    }

    private void start(String id, String state) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m"));
        cmd.addAll(JVM_OPTIONS);
        cmd.addAll(List.of("-jar", jar.toString(), "coordinator", "start", "--id", id,
                "--cluster", "failover", "--raft", "127.0.0.1:" + raftPorts.get(id), "--control-plane", endpoint(id),
                "--data-dir", root.resolve(id).toString(), "--initial-cluster-state", state));
        raftPorts.forEach((peer, port) -> {
            if (!peer.equals(id)) {
                cmd.addAll(List.of("--peer", peer + "=127.0.0.1:" + port));
            }
        });
        cmd.addAll(extraFlags);
        Path log = root.resolve(id + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long until = System.nanoTime() + PATIENCE.toNanos();
        long seen = Files.exists(log) ? Files.size(log) : 0;
        while (!Files.readString(log, StandardCharsets.UTF_8).contains("coordinator " + id + " of cluster")) {
            if (!p.isAlive() || System.nanoTime() - until > 0) {
                p.destroyForcibly();
                throw new IllegalStateException("coordinator " + id + " did not start: see " + log + " after byte "
                        + seen);
            }
            Thread.sleep(20); // a child JVM starting: nothing to wait on but its log
        }
        processes.put(id, p);
    }

    /** @return the leader, once a node reports itself leader */
    public String awaitLeader() throws InterruptedException {
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (System.nanoTime() - until < 0) {
            for (Map.Entry<String, CoordinationClient> e : probes.entrySet()) {
                if (!processes.containsKey(e.getKey())) {
                    continue;
                }
                ClusterStatus s = status(e.getValue());
                if (s != null && s.isLeader()) {
                    return e.getKey();
                }
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("no leader within " + PATIENCE);
    }

    private static ClusterStatus status(CoordinationClient probe) {
        try {
            return probe.cluster().status();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Waits until every running node has applied the same index. */
    private void awaitCaughtUp() throws InterruptedException {
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (System.nanoTime() - until < 0) {
            long applied = -2;
            boolean same = true;
            for (String id : processes.keySet()) {
                ClusterStatus s = status(probes.get(id));
                if (s == null || (applied != -2 && s.appliedIndex() != applied)) {
                    same = false;
                    break;
                }
                applied = s.appliedIndex();
            }
            if (same) {
                return;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the nodes did not catch up within " + PATIENCE);
    }

    /** SIGKILL: {@link Process#destroyForcibly} sends SIGKILL on Linux. */
    private void kill(String id) throws InterruptedException {
        Process p = processes.remove(id);
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    // --- measurements ------------------------------------------------------------------------------

    /** One kill: when a survivor led, and when the client's call succeeded, both from the kill, in ns. */
    public record Failover(String victim, long electedNanos, long callNanos, int attempts) {
    }

    /**
     * Kills the leader {@code kills} times and prints where the time went.
     *
     * @param kills how many times
     * @return each kill's figures
     */
    public List<Failover> kills(int kills) throws Exception {
        List<Failover> runs = new ArrayList<>();
        try (CoordinationClient client = CoordinationClient.builder().endpoints(endpoints()).build()) {
            // from a settled cluster, as after every restart below: a member still catching up on its first
            // start (a warm-up delays it by seconds) cannot win the election that the first kill starts
            awaitCaughtUp();
            for (int k = 0; k < kills; k++) {
                String leader = awaitLeader();
                long term = status(probes.get(leader)).term();
                client.leases().acquire(next("pre"), HOLDER); // the client talks to the leader now
                AtomicLong elected = new AtomicLong();
                List<String> survivors = new ArrayList<>(processes.keySet());
                survivors.remove(leader);
                CompletableFuture<Void> watch = CompletableFuture.runAsync(() -> watchElection(survivors, term,
                        elected));
                long t0 = System.nanoTime();
                kill(leader);
                client.leases().acquire(next("failover"), HOLDER);
                long call = System.nanoTime() - t0;
                watch.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                Failover f = new Failover(leader, elected.get() - t0, call, 0);
                runs.add(f);
                System.out.printf(Locale.ROOT, "kill %2d of %s: new leader after %4d ms, client call done after %4d ms%n",
                        k + 1, leader, f.electedNanos() / 1_000_000, f.callNanos() / 1_000_000);
                System.out.printf(Locale.ROOT, "         killed at %s%n", java.time.LocalTime.now().minusNanos(
                        System.nanoTime() - t0));
                start(leader, "existing");
                awaitCaughtUp();
            }
        }
        long[] elected = runs.stream().mapToLong(Failover::electedNanos).sorted().toArray();
        long[] calls = runs.stream().mapToLong(Failover::callNanos).sorted().toArray();
        long[] rest = runs.stream().mapToLong(f -> f.callNanos() - f.electedNanos()).sorted().toArray();
        System.out.printf(Locale.ROOT, "%nfailover over %d leader kills (SIGKILL of a separate process)%n", kills);
        row("kill -> a survivor reports itself leader (detection + election)", elected);
        row("new leader -> the client's call succeeds (rediscovery + the call)", rest);
        row("kill -> one CoordinationClient.acquire succeeds", calls);
        System.out.printf(Locale.ROOT, "   %-66s %s (p99 %.0f ms, target <= 500 ms)%n", "failover p99",
                Rounds.percentile(calls, 99) <= 500_000_000L ? "MET" : "MISSED", Rounds.percentile(calls, 99) / 1e6);
        return runs;
    }

    private static void row(String what, long[] sortedNanos) {
        System.out.printf(Locale.ROOT, "   %-66s p50 %5.0f  p90 %5.0f  p99 %5.0f  max %5.0f ms%n", what,
                Rounds.percentile(sortedNanos, 50) / 1e6, Rounds.percentile(sortedNanos, 90) / 1e6,
                Rounds.percentile(sortedNanos, 99) / 1e6, sortedNanos[sortedNanos.length - 1] / 1e6);
    }

    /** Polls the survivors every 2 ms until one reports itself leader of a term after {@code term}. */
    private void watchElection(List<String> survivors, long term, AtomicLong elected) {
        long until = System.nanoTime() + PATIENCE.toNanos();
        while (System.nanoTime() - until < 0) {
            for (String id : survivors) {
                ClusterStatus s = status(probes.get(id));
                if (s != null && s.isLeader() && s.term() > term) {
                    elected.set(System.nanoTime());
                    return;
                }
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Keeps {@code count} leases renewed at their heartbeat for {@code seconds} and counts leader changes,
     * seen by polling every node's status every 100 ms.
     *
     * @return how many times the leader changed
     */
    public int soak(long seconds, int count) throws Exception {
        int changes = 0;
        try (CoordinationClient client = CoordinationClient.builder().endpoints(endpoints()).build()) {
            LeasePolicy policy = LeasePolicy.ofMillis(10_000, 3_000, 2_000);
            client.namespaces().setPolicy("soak", policy);
            // acquired 64 at a time: one by one, the first ones outlived their TTL before the first renewal
            // round (a run of 1,000 counted 51 leases' renewals as failed in every round)
            List<CompletableFuture<Lease>> acquiring = new ArrayList<>();
            Semaphore acquireWindow = new Semaphore(64);
            for (int i = 0; i < count; i++) {
                acquireWindow.acquire();
                acquiring.add(client.leases().acquireAsync("soak@m" + i, HOLDER, Duration.ZERO)
                        .whenComplete((l, e) -> acquireWindow.release()));
            }
            List<Lease> held = new ArrayList<>();
            for (CompletableFuture<Lease> f : acquiring) {
                held.add(f.join());
            }
            String leader = awaitLeader();
            long term = status(probes.get(leader)).term();
            System.out.printf(Locale.ROOT, "soak: %d leases renewed every %d ms for %d s; leader %s, term %d%n", count,
                    policy.heartbeatInterval().toMillis(), seconds, leader, term);
            AtomicLong renewed = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            Semaphore window = new Semaphore(64);
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            long nextRound = start;
            long nextLook = start;
            Lease[] current = held.toArray(Lease[]::new);
            while (System.nanoTime() - end < 0) {
                long now = System.nanoTime();
                if (now - nextRound >= 0) {
                    // one heartbeat round: every lease renewed once, spread over the round
                    for (int i = 0; i < current.length; i++) {
                        int index = i;
                        window.acquire();
                        client.leases().renewAsync(current[i]).whenComplete((l, e) -> {
                            if (e == null) {
                                current[index] = l;
                                renewed.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                            window.release();
                        });
                    }
                    nextRound += policy.heartbeatInterval().toNanos();
                }
                if (now - nextLook >= 0) {
                    for (CoordinationClient probe : probes.values()) {
                        ClusterStatus s = status(probe);
                        if (s != null && s.term() > term) {
                            changes++;
                            System.out.printf(Locale.ROOT, "   %6.1f s: term %d -> %d, leader %s%n",
                                    (now - start) / 1e9, term, s.term(), s.leaderId());
                            term = s.term();
                        }
                    }
                    nextLook += TimeUnit.MILLISECONDS.toNanos(100);
                }
                Thread.sleep(5);
            }
            System.out.printf(Locale.ROOT, "soak: %d s, %,d renewals (%d failed), leader changes: %d (target 0)%n",
                    seconds, renewed.get(), failed.get(), changes);
        }
        return changes;
    }

    private String next(String prefix) {
        return "failover@" + prefix + "-" + names.incrementAndGet();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        probes.values().forEach(CoordinationClient::close);
        for (String id : List.copyOf(processes.keySet())) {
            try {
                kill(id);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        // the data dirs go; the nodes' logs stay, to see what happened
        for (String id : raftPorts.keySet()) {
            try (var files = Files.walk(root.resolve(id))) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        System.out.println("logs: " + root);
    }

    /** @return the per-kill figures as an array of call times, sorted (for callers that keep their own table) */
    static long[] sortedCalls(List<Failover> runs) {
        long[] calls = runs.stream().mapToLong(Failover::callNanos).toArray();
        Arrays.sort(calls);
        return calls;
    }
}
