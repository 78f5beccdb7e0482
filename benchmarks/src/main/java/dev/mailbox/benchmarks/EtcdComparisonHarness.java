package dev.mailbox.benchmarks;

import com.google.protobuf.ByteString;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.server.TestingCluster;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.LeaseGrantRequest;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseKeepAliveRequest;
import io.etcd.jetcd.api.LeaseKeepAliveResponse;
import io.etcd.jetcd.api.MaintenanceGrpc;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.StatusRequest;
import io.etcd.jetcd.api.StatusResponse;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Our 3 coordinators next to a 3-member etcd, every one a separate process on loopback, measured in one run
 * through each system's own client protocol (issue 18):
 *
 * <ol>
 *   <li>acquire, sequential: etcd = LeaseGrant, then a Txn that puts the key on that lease only if it does not
 *       exist ({@code create_revision == 0}); ours = AcquireLease through {@link CoordinationClient};
 *   <li>acquires with 64 concurrent callers;
 *   <li>renewals: etcd = LeaseKeepAlive on bidirectional streams; ours = {@code renewAsync}; 128 in flight each;
 *   <li>failover: SIGKILL of the leader, time until a write succeeds, for etcd with its defaults, etcd with its
 *       documented low-latency settings (50 ms heartbeat, 250 ms election timeout), and ours.
 * </ol>
 *
 * <p>etcd is driven through the grpc-java stubs generated from etcd's own protos (shipped in jetcd's
 * {@code jetcd-grpc}), not through jetcd's wrapper, so neither side pays a client library's extras. The etcd
 * client always talks to the leader for 1-3 (best case for etcd: no forwarding); ours finds the leader itself.
 * Rounds alternate between the systems so that drift of this shared machine hits both.
 *
 * <p>Needs Debian's {@code etcd} (package etcd-server 3.4) on the PATH; without it the harness says so and
 * exits 0. {@code java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.EtcdComparisonHarness
 * [--quick] [--kills N] [--election-ms M]} ({@code --kills=N} works too; {@code --kills 0}: no failover section)
 */
public final class EtcdComparisonHarness {

    private static final LeaseHolder HOLDER = new LeaseHolder("bench-runner", "bench-node", "127.0.0.1:1");
    /**
     * Our acquires' TTL: etcd's LeaseGrant asks for 60 s. With the namespace default (10 s) instead, every lease
     * of the sequential section and of each round expired while later rounds ran, and each expiry is a Raft
     * write the leader proposes: the concurrent rounds did up to twice the writes on our side (issue 39).
     */
    private static final Duration TTL = Duration.ofSeconds(60);

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final boolean quick;
    private final int kills;
    private final long electionMs;
    private final AtomicInteger names = new AtomicInteger();
    private final List<String[]> table = new ArrayList<>();
    private final AtomicLong clientGaveUp = new AtomicLong();

    private EtcdComparisonHarness(boolean quick, int kills, long electionMs) {
        this.quick = quick;
        this.kills = kills;
        this.electionMs = electionMs;
    }

    /**
     * @param args {@code --quick} for a short run, {@code --kills N} for the number of leader kills per system,
     *             {@code --election-ms M} for our shortest election timeout (default 300; the longest is twice it)
     * @throws Exception if a cluster fails
     */
    public static void main(String[] args) throws Exception {
        Options options = new Options(args);
        Options.parse(args, Set.of("--quick"), Set.of("--kills", "--election-ms")); // refuses unknown words
        Optional<Path> etcd = onPath("etcd");
        if (etcd.isEmpty()) {
            System.out.println("etcd comparison SKIPPED: no `etcd` on the PATH (Debian: apt-get install etcd-server)");
            return;
        }
        LibraryLog.toFile("etcd-comparison");
        boolean quick = Arrays.asList(args).contains("--quick");
        int kills = options.integer("--kills", quick ? 3 : 12);
        // our shortest election timeout (the longest is twice it); the coordinator's default is 300 ms
        long electionMs = options.integer("--election-ms", 300);
        new EtcdComparisonHarness(quick, kills, electionMs).run(etcd.get());
        System.exit(0);
    }

    private void run(Path etcdBinary) throws Exception {
        System.out.printf(Locale.ROOT, "etcd comparison: %s (%s), 3 etcd members + 3 coordinators as processes,"
                + " %d cores, load %.2f, %s%n", etcdBinary, etcdVersion(etcdBinary),
                Runtime.getRuntime().availableProcessors(), loadAverage(), quick ? "quick" : "full");
        Path root = Files.createTempDirectory("etcd-comparison");
        try (EtcdCluster tuned = new EtcdCluster(etcdBinary, root.resolve("tuned"), true);
             TestingCluster ours = TestingCluster.builder().size(3).processes(true).snapshotEvery(200_000)
                     .electionTimeout(java.time.Duration.ofMillis(electionMs))
                     // as `mailboxctl coordinator start` runs them: warmed up before they join
                     .javaOptions("-D" + dev.mailbox.coordination.server.internal.CoordinatorProcess.WARM_UP_PROPERTY
                             + "=true").start()) {
            tuned.awaitLeader();
            ours.awaitLeader(PATIENCE);
            try (CoordinationClient client = client(ours); EtcdClient e = tuned.clientToLeader()) {
                sequential(e, client);
                concurrent(tuned, ours);
                renewals(e, client);
            }
            if (kills > 0) {
                try (EtcdCluster defaults = new EtcdCluster(etcdBinary, root.resolve("defaults"), false)) {
                    defaults.awaitLeader();
                    failover(defaults, tuned, ours);
                }
            }
        } finally {
            deleteTree(root);
        }
        printTable();
    }

    // --- 1. sequential acquires --------------------------------------------------------------------------

    private void sequential(EtcdClient e, CoordinationClient client) {
        for (int i = 0; i < 300; i++) {
            e.acquire(next("warm"));
            client.leases().acquire(next("warm"), HOLDER, TTL);
        }
        int n = quick ? 300 : 2_000;
        long[] etcd = new long[n];
        long[] mine = new long[n];
        for (int i = 0; i < n; i++) { // interleaved, so drift hits both alike
            long t0 = System.nanoTime();
            e.acquire(next("seq"));
            long t1 = System.nanoTime();
            client.leases().acquire(next("seq"), HOLDER, TTL);
            long t2 = System.nanoTime();
            etcd[i] = t1 - t0;
            mine[i] = t2 - t1;
        }
        Arrays.sort(etcd);
        Arrays.sort(mine);
        System.out.printf(Locale.ROOT, "%n1. sequential acquire, %d each, interleaved%n", n);
        Rounds.latencyRow("etcd tuned: LeaseGrant + Txn(create_revision == 0 -> put on lease)", etcd);
        Rounds.latencyRow("ours: AcquireLease through CoordinationClient", mine);
        addLatency("acquire p50 (sequential)", etcd, mine, 50);
        addLatency("acquire p99 (sequential)", etcd, mine, 99);
    }

    // --- 2. concurrent acquires --------------------------------------------------------------------------

    private void concurrent(EtcdCluster tuned, TestingCluster ours) throws Exception {
        int rounds = quick ? 1 : 3;
        long millis = quick ? 2_000 : 5_000;
        System.out.printf(Locale.ROOT, "%n2. acquires with 64 concurrent callers, %d alternating rounds of %d ms each%n",
                rounds, millis);
        double[] etcdRates = new double[rounds];
        double[] ourRates = new double[rounds];
        List<long[]> etcdLat = new ArrayList<>();
        List<long[]> ourLat = new ArrayList<>();
        try (EtcdClient a = tuned.clientToLeader(); EtcdClient b = tuned.clientToLeader();
             CoordinationClient c = client(ours); CoordinationClient d = client(ours)) {
            for (int r = 0; r < rounds; r++) {
                etcdRates[r] = concurrentRound(millis, etcdLat, t -> (t % 2 == 0 ? a : b).acquire(next("conc")));
                ourRates[r] = concurrentRound(millis, ourLat,
                        t -> (t % 2 == 0 ? c : d).leases().acquire(next("conc"), HOLDER, TTL));
                System.out.printf(Locale.ROOT, "   round %d: etcd %,.0f /s, ours %,.0f /s%n", r + 1, etcdRates[r],
                        ourRates[r]);
            }
        }
        double etcdRate = median(etcdRates);
        double ourRate = median(ourRates);
        long[] el = flatten(etcdLat);
        long[] ol = flatten(ourLat);
        Rounds.row("etcd tuned: acquires (median round)", etcdRate, "/s", 1.0);
        Rounds.row("ours: acquires (median round)", ourRate, "/s", ourRate / etcdRate);
        Rounds.latencyRow("etcd tuned: acquire latency under that load", el);
        Rounds.latencyRow("ours: acquire latency under that load", ol);
        table.add(new String[] {"acquires/s, 64 concurrent callers", fmt(etcdRate), fmt(ourRate),
            ratio(ourRate / etcdRate, true)});
        addLatency("acquire p99 under 64 callers", el, ol, 99);
    }

    private interface Call {
        void run(int thread) throws Exception;
    }

    private static double concurrentRound(long millis, List<long[]> lat, Call call) throws Exception {
        int callers = 64;
        AtomicLong done = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(callers);
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        for (int t = 0; t < callers; t++) {
            long[] mine = new long[100_000];
            lat.add(mine);
            int id = t;
            new Thread(() -> {
                int k = 0;
                try {
                    while (System.nanoTime() < end && k < mine.length) {
                        long t0 = System.nanoTime();
                        call.run(id);
                        mine[k++] = System.nanoTime() - t0;
                        done.incrementAndGet();
                    }
                } catch (Exception e) {
                    System.out.println("   caller failed: " + e);
                } finally {
                    finished.countDown();
                }
            }).start();
        }
        finished.await();
        return done.get() / ((System.nanoTime() - start) / 1e9);
    }

    // --- 3. renewals -------------------------------------------------------------------------------------

    private void renewals(EtcdClient e, CoordinationClient client) throws Exception {
        int leases = 1_000;
        List<Long> etcdLeases = new ArrayList<>();
        List<Lease> ourLeases = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            etcdLeases.add(e.acquire(next("renew")));
            ourLeases.add(client.leases().acquire(next("renew"), HOLDER, Duration.ofMinutes(5)));
        }
        int rounds = quick ? 1 : 3;
        long millis = quick ? 2_000 : 5_000;
        System.out.printf(Locale.ROOT, "%n3. renewals of %d leases, 128 in flight (etcd: 8 LeaseKeepAlive streams x 16),"
                + " %d alternating rounds of %d ms%n", leases, rounds, millis);
        double[] etcdRates = new double[rounds];
        double[] ourRates = new double[rounds];
        List<long[]> etcdLat = new ArrayList<>();
        List<long[]> ourLat = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            etcdRates[r] = etcdKeepAlives(e, etcdLeases, millis, etcdLat);
            ourRates[r] = ourRenewals(client, ourLeases, millis, ourLat);
            System.out.printf(Locale.ROOT, "   round %d: etcd %,.0f /s, ours %,.0f /s%n", r + 1, etcdRates[r],
                    ourRates[r]);
        }
        double etcdRate = median(etcdRates);
        double ourRate = median(ourRates);
        long[] el = flatten(etcdLat);
        long[] ol = flatten(ourLat);
        Rounds.row("etcd tuned: LeaseKeepAlive (median round)", etcdRate, "/s", 1.0);
        Rounds.row("ours: renewAsync (median round)", ourRate, "/s", ourRate / etcdRate);
        Rounds.latencyRow("etcd tuned: keep-alive latency", el);
        Rounds.latencyRow("ours: renewal latency", ol);
        table.add(new String[] {"renewals/s, 128 in flight", fmt(etcdRate), fmt(ourRate),
            ratio(ourRate / etcdRate, true)});
        addLatency("renewal p99 at that load", el, ol, 99);
    }

    private static double etcdKeepAlives(EtcdClient e, List<Long> leases, long millis, List<long[]> lat)
            throws Exception {
        int streams = 8;
        int window = 16;
        AtomicLong ok = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long[] latencies = new long[2_000_000];
        AtomicInteger slot = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        for (int s = 0; s < streams; s++) {
            int first = s;
            Thread t = new Thread(() -> {
                Semaphore inFlight = new Semaphore(window);
                Queue<Long> sent = new ConcurrentLinkedQueue<>(); // one stream answers in order
                CompletableFuture<Void> closed = new CompletableFuture<>();
                StreamObserver<LeaseKeepAliveRequest> out = LeaseGrpc.newStub(e.channel).leaseKeepAlive(
                        new StreamObserver<LeaseKeepAliveResponse>() {
                            @Override
                            public void onNext(LeaseKeepAliveResponse r) {
                                Long t0 = sent.poll();
                                int k = slot.getAndIncrement();
                                if (t0 != null && k < latencies.length) {
                                    latencies[k] = System.nanoTime() - t0;
                                }
                                (r.getTTL() > 0 ? ok : failed).incrementAndGet();
                                inFlight.release();
                            }

                            @Override
                            public void onError(Throwable t) {
                                closed.completeExceptionally(t);
                                inFlight.release(window);
                            }

                            @Override
                            public void onCompleted() {
                                closed.complete(null);
                            }
                        });
                int i = first;
                try {
                    while (System.nanoTime() < end && !closed.isDone()) {
                        inFlight.acquire();
                        long id = leases.get(i % leases.size());
                        i += streams;
                        sent.add(System.nanoTime());
                        out.onNext(LeaseKeepAliveRequest.newBuilder().setID(id).build());
                    }
                    inFlight.acquire(window);
                    out.onCompleted();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        lat.add(Arrays.copyOf(latencies, Math.min(slot.get(), latencies.length)));
        if (failed.get() > 0) {
            System.out.println("   etcd keep-alives refused: " + failed.get());
        }
        return ok.get() / seconds;
    }

    private static double ourRenewals(CoordinationClient client, List<Lease> held, long millis, List<long[]> lat)
            throws Exception {
        int window = 128;
        Semaphore inFlight = new Semaphore(window);
        AtomicLong ok = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long[] latencies = new long[2_000_000];
        AtomicInteger slot = new AtomicInteger();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        int i = 0;
        while (System.nanoTime() < end) {
            inFlight.acquire();
            Lease l = held.get(i++ % held.size());
            long t0 = System.nanoTime();
            client.leases().renewAsync(l).whenComplete((r, e) -> {
                int k = slot.getAndIncrement();
                if (k < latencies.length) {
                    latencies[k] = System.nanoTime() - t0;
                }
                (e == null ? ok : failed).incrementAndGet();
                inFlight.release();
            });
        }
        inFlight.acquire(window);
        double seconds = (System.nanoTime() - start) / 1e9;
        lat.add(Arrays.copyOf(latencies, Math.min(slot.get(), latencies.length)));
        if (failed.get() > 0) {
            System.out.println("   our renewals refused: " + failed.get());
        }
        return ok.get() / seconds;
    }

    // --- 4. failover -------------------------------------------------------------------------------------

    private void failover(EtcdCluster defaults, EtcdCluster tuned, TestingCluster ours) throws Exception {
        System.out.printf(Locale.ROOT, "%n4. failover: SIGKILL of the leader -> first successful write, %d kills each,"
                + " alternating etcd defaults / etcd tuned / ours%n", kills);
        System.out.println("   etcd: a fresh Put every 10 ms, round robin over the three members (1 s deadline each),"
                + " first success counts; ours: one CoordinationClient.acquire with its own retries");
        long[] d = new long[kills];
        long[] t = new long[kills];
        long[] o = new long[kills];
        try (CoordinationClient client = client(ours)) {
            for (int k = 0; k < kills; k++) {
                d[k] = defaults.killLeaderAndTimeNextWrite();
                t[k] = tuned.killLeaderAndTimeNextWrite();
                o[k] = ourKill(ours, client);
                System.out.printf(Locale.ROOT, "   kill %2d: etcd defaults %5.0f ms, etcd tuned %5.0f ms, ours %5.0f ms%n",
                        k + 1, d[k] / 1e6, t[k] / 1e6, o[k] / 1e6);
            }
        }
        Arrays.sort(d);
        Arrays.sort(t);
        Arrays.sort(o);
        Rounds.latencyRowMillis("etcd defaults (100 ms heartbeat, 1,000 ms election)", d);
        Rounds.latencyRowMillis("etcd tuned (50 ms heartbeat, 250 ms election)", t);
        Rounds.latencyRowMillis("ours (" + electionMs + "-" + 2 * electionMs + " ms election timeout)", o);
        System.out.printf(Locale.ROOT, "   %-64s %d%n", "times CoordinationClient gave up and the harness called again",
                clientGaveUp.get());
        table.add(new String[] {"failover p50, ms (etcd defaults: " + ms(Rounds.percentile(d, 50)) + ")",
            ms(Rounds.percentile(t, 50)), ms(Rounds.percentile(o, 50)),
            ratio((double) Rounds.percentile(o, 50) / Rounds.percentile(t, 50), false)});
        table.add(new String[] {"failover p99, ms (etcd defaults: " + ms(Rounds.percentile(d, 99)) + ")",
            ms(Rounds.percentile(t, 99)), ms(Rounds.percentile(o, 99)),
            ratio((double) Rounds.percentile(o, 99) / Rounds.percentile(t, 99), false)});
    }

    private long ourKill(TestingCluster ours, CoordinationClient client) {
        String leader = ours.awaitLeader(PATIENCE);
        acquireUntilDone(client, "pre"); // the client talks to the leader now
        long t0 = System.nanoTime();
        ours.kill(leader); // SIGKILL; returns once the process is gone
        acquireUntilDone(client, "failover");
        long took = System.nanoTime() - t0;
        ours.start(leader);
        ours.awaitIdenticalState(PATIENCE);
        return took;
    }

    /**
     * One acquire with the client's own retries; should the client give up anyway (it did once in testing with
     * "UNKNOWN: channel closed" from the killed leader's connection), the harness counts it and calls again.
     */
    private void acquireUntilDone(CoordinationClient client, String prefix) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            try {
                client.leases().acquire(next(prefix), HOLDER, TTL);
                return;
            } catch (RuntimeException e) {
                clientGaveUp.incrementAndGet();
                System.out.println("   CoordinationClient gave up (" + prefix + "): " + e.getMessage() + "; calling again");
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    // --- etcd ------------------------------------------------------------------------------------------

    /** A 3-member etcd, each member its own process on loopback with a temp data dir. */
    private final class EtcdCluster implements AutoCloseable {
        private final Path binary;
        private final Path dir;
        private final boolean lowLatency;
        private final String[] names = {"e1", "e2", "e3"};
        private final int[] clientPorts = new int[3];
        private final int[] peerPorts = new int[3];
        private final Process[] processes = new Process[3];
        private final ManagedChannel[] channels = new ManagedChannel[3];

        EtcdCluster(Path binary, Path dir, boolean lowLatency) throws IOException {
            this.binary = binary;
            this.dir = dir;
            this.lowLatency = lowLatency;
            Files.createDirectories(dir);
            for (int i = 0; i < 3; i++) {
                clientPorts[i] = freePort();
                peerPorts[i] = freePort();
            }
            for (int i = 0; i < 3; i++) {
                start(i);
                channels[i] = ManagedChannelBuilder.forAddress("127.0.0.1", clientPorts[i]).usePlaintext().build();
            }
        }

        private void start(int i) throws IOException {
            StringBuilder initial = new StringBuilder();
            for (int j = 0; j < 3; j++) {
                initial.append(j == 0 ? "" : ",").append(names[j]).append("=http://127.0.0.1:").append(peerPorts[j]);
            }
            List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--name", names[i],
                    "--data-dir", dir.resolve(names[i]).toString(),
                    "--listen-client-urls", "http://127.0.0.1:" + clientPorts[i],
                    "--advertise-client-urls", "http://127.0.0.1:" + clientPorts[i],
                    "--listen-peer-urls", "http://127.0.0.1:" + peerPorts[i],
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPorts[i],
                    "--initial-cluster", initial.toString(), "--initial-cluster-state", "new",
                    "--initial-cluster-token", dir.getFileName().toString(), "--logger", "zap", "--log-level", "warn"));
            if (lowLatency) {
                cmd.addAll(List.of("--heartbeat-interval", "50", "--election-timeout", "250"));
            }
            File log = dir.resolve(names[i] + ".log").toFile();
            processes[i] = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        }

        /** Index of the member every live member names as leader, once they agree. */
        int awaitLeader() {
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (System.nanoTime() < deadline) {
                long leader = -1;
                boolean agreed = true;
                long[] ids = new long[3];
                for (int i = 0; i < 3; i++) {
                    if (processes[i] == null || !processes[i].isAlive()) {
                        agreed = false;
                        break;
                    }
                    try {
                        StatusResponse s = MaintenanceGrpc.newBlockingStub(channels[i])
                                .withDeadlineAfter(500, TimeUnit.MILLISECONDS).status(StatusRequest.getDefaultInstance());
                        ids[i] = s.getHeader().getMemberId();
                        if (s.getLeader() == 0 || (leader != -1 && leader != s.getLeader())) {
                            agreed = false;
                        }
                        leader = s.getLeader();
                    } catch (RuntimeException e) {
                        agreed = false;
                    }
                }
                if (agreed) {
                    for (int i = 0; i < 3; i++) {
                        if (ids[i] == leader) {
                            return i;
                        }
                    }
                }
                sleep(20);
            }
            throw new IllegalStateException("etcd " + dir + " elected no leader in " + PATIENCE);
        }

        EtcdClient clientToLeader() {
            return new EtcdClient(ManagedChannelBuilder.forAddress("127.0.0.1", clientPorts[awaitLeader()])
                    .usePlaintext().build());
        }

        long killLeaderAndTimeNextWrite() throws Exception {
            int leader = awaitLeader();
            for (ManagedChannel c : channels) { // every channel connected and warm
                KVGrpc.newBlockingStub(c).withWaitForReady().withDeadlineAfter(10, TimeUnit.SECONDS).put(put(next("pre")));
            }
            long t0 = System.nanoTime();
            processes[leader].destroyForcibly();
            processes[leader].waitFor();
            AtomicLong took = new AtomicLong(-1);
            CountDownLatch succeeded = new CountDownLatch(1);
            int attempt = 0;
            while (succeeded.getCount() > 0) {
                if (System.nanoTime() - t0 > PATIENCE.toNanos()) {
                    throw new IllegalStateException("etcd " + dir + ": no write succeeded after the kill");
                }
                var f = KVGrpc.newFutureStub(channels[attempt++ % 3]).withDeadlineAfter(1, TimeUnit.SECONDS)
                        .put(put(next("failover")));
                f.addListener(() -> {
                    try {
                        f.get();
                        if (took.compareAndSet(-1, System.nanoTime() - t0)) {
                            succeeded.countDown();
                        }
                    } catch (Exception e) {
                        // a failed attempt: the next one follows within 10 ms
                    }
                }, Runnable::run);
                succeeded.await(10, TimeUnit.MILLISECONDS);
            }
            start(leader);
            awaitLeader();
            sleep(300); // let the restarted member catch up before the next kill
            return took.get();
        }

        @Override
        public void close() {
            for (ManagedChannel c : channels) {
                if (c != null) {
                    c.shutdownNow();
                }
            }
            for (Process p : processes) {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
            for (Process p : processes) {
                if (p != null) {
                    try {
                        p.waitFor(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }
    }

    /** Blocking calls on one channel to one etcd member. */
    private static final class EtcdClient implements AutoCloseable {
        final ManagedChannel channel;
        private final LeaseGrpc.LeaseBlockingStub lease;
        private final KVGrpc.KVBlockingStub kv;

        EtcdClient(ManagedChannel channel) {
            this.channel = channel;
            this.lease = LeaseGrpc.newBlockingStub(channel);
            this.kv = KVGrpc.newBlockingStub(channel);
        }

        /** Lease grant (60 s), then put the key on it if absent; returns the lease id. */
        long acquire(String key) {
            long id = lease.withDeadlineAfter(5, TimeUnit.SECONDS)
                    .leaseGrant(LeaseGrantRequest.newBuilder().setTTL(60).build()).getID();
            ByteString k = ByteString.copyFromUtf8(key);
            TxnResponse r = kv.withDeadlineAfter(5, TimeUnit.SECONDS).txn(TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(k).setTarget(Compare.CompareTarget.CREATE)
                            .setResult(Compare.CompareResult.EQUAL).setCreateRevision(0))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(k)
                            .setValue(ByteString.copyFromUtf8("bench-runner")).setLease(id)))
                    .build());
            if (!r.getSucceeded()) {
                throw new IllegalStateException("etcd: " + key + " already held");
            }
            return id;
        }

        @Override
        public void close() {
            channel.shutdownNow();
        }
    }

    private static PutRequest put(String key) {
        return PutRequest.newBuilder().setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFrom("x", StandardCharsets.UTF_8)).build();
    }

    // --- report ------------------------------------------------------------------------------------------

    private void addLatency(String what, long[] etcdSorted, long[] ourSorted, double p) {
        double e = Rounds.percentile(etcdSorted, p) / 1e6;
        double o = Rounds.percentile(ourSorted, p) / 1e6;
        table.add(new String[] {what + ", ms", String.format(Locale.ROOT, "%.2f", e),
            String.format(Locale.ROOT, "%.2f", o), ratio(o / e, false)});
    }

    private void printTable() {
        System.out.printf(Locale.ROOT, "%n| measure | etcd 3.4 tuned | ours | ours / etcd tuned |%n| --- | ---: | ---: | ---: |%n");
        for (String[] row : table) {
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", (Object[]) row);
        }
        System.out.printf(Locale.ROOT, "(load average at the end: %.2f)%n", loadAverage());
    }

    private static String ratio(double r, boolean higherIsBetter) {
        return String.format(Locale.ROOT, "%.2f× (%s)", r, higherIsBetter ? "higher is better" : "lower is better");
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%,.0f", nanos / 1e6);
    }

    // --- plumbing ----------------------------------------------------------------------------------------

    private static CoordinationClient client(TestingCluster cluster) {
        CoordinationClient.Builder b = CoordinationClient.builder().callTimeout(Duration.ofSeconds(2)).maxAttempts(40)
                .backoff(Duration.ofMillis(10), Duration.ofMillis(100));
        cluster.endpoints().forEach(b::endpoint);
        return b.build();
    }

    private String next(String prefix) {
        return prefix + "@m" + names.incrementAndGet();
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[v.length / 2];
    }

    private static long[] flatten(List<long[]> parts) {
        return parts.stream().flatMapToLong(Arrays::stream).filter(x -> x > 0).sorted().toArray();
    }

    private static Optional<Path> onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Arrays.stream(path.split(File.pathSeparator)).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).findFirst();
    }

    private static String etcdVersion(Path binary) {
        try {
            Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out.lines().filter(l -> l.startsWith("etcd Version")).findFirst().orElse("version unknown").trim();
        } catch (IOException | InterruptedException e) {
            return "version unknown";
        }
    }

    private static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
