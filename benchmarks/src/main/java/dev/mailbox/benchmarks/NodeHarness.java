package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;

/**
 * Issue 16's figures: mailbox nodes on a shared Redis. Takeover time after a runner and its node are
 * SIGKILLed, forwarded vs direct cycles when the owner node opens the mailbox on Redis, and the cost of
 * the fence check in the Redis scripts.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.NodeHarness [--quick]
 *     [takeover] [forwarding] [fencing]</pre>
 *
 * It starts its own redis-server (persistence off) and a 1-node coordinator, shared by the sections.
 *
 * @param quick       a short run
 * @param redisUri    the redis-server
 * @param redis       a client of it
 * @param coordinator the coordinator's endpoint
 * @param client      a client of the coordinator
 */
public record NodeHarness(boolean quick, String redisUri, JedisPooled redis, String coordinator,
                          CoordinationClient client) {

    private static final String REPLY_PREFIX_B = "runner-b:";

    /**
     * @param args {@code --quick} for a short run; section names to run only those
     * @throws Exception if something fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("node");
        boolean quick = Arrays.asList(args).contains("--quick");
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled redis = redis(server.uri());
             TestingCluster cluster = RoutingHarness.startOne()) {
            System.out.printf(Locale.ROOT, "node harness: %d cores, JDK %s, redis-server at %s, %s%n",
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), server.uri(),
                    quick ? "quick" : "full");
            NodeHarness h = new NodeHarness(quick, server.uri(), redis, cluster.endpoints().get(0), cluster.client());
            Rounds.sections(args, List.of(Map.entry("takeover", h::takeover), Map.entry("forwarding", h::forwarding),
                    Map.entry("fencing", h::fencing)));
        }
        System.exit(0);
    }

    /**
     * A pooled client with room for every harness thread: each open mailbox's wake-up subscription holds
     * one pooled connection for as long as the mailbox is open, and Jedis' default pool has only 8.
     */
    static JedisPooled redis(String uri) {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        URI u = URI.create(uri);
        return new JedisPooled(pool, u.getHost(), u.getPort());
    }

    /** Every node opens its mailboxes as RedisMailboxes on one shared client. */
    record RedisBackend(UnifiedJedis jedis) implements MailboxBackend {
        @Override
        public Mailbox<byte[]> open(String mailboxId) {
            return RedisMailbox.builder(mailboxId, Codec.bytes()).client(jedis).build();
        }

        @Override
        public boolean shared() {
            return true;
        }
    }

    // --- 1. takeover after a kill ------------------------------------------------------------------

    private void takeover() throws Exception {
        LeasePolicy policy = new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
        client.namespaces().create("takeover", policy, Map.of());
        int rounds = quick ? 5 : 20;
        Path childLog = Files.createTempFile("mailbox-node-runners-", ".log");
        // runner B as deployed (the namespace's TTL), and, in alternate rounds, asking for the same TTL
        // itself, which makes its waiting acquire try again every TTL / 6 instead of every 10 s / 6
        List<Duration> runnerTtls = List.of(Duration.ZERO, policy.ttl());
        long[][][] times = new long[2][3][rounds]; // [runner B's ttl][route moved, acquired, first reply][round]
        for (int r = 0; r < rounds; r++) {
            for (int c = 0; c < 2; c++) {
                long[] t = takeoverRound(2 * r + c, runnerTtls.get(c), childLog);
                for (int i = 0; i < 3; i++) {
                    times[c][i][r] = t[i];
                }
            }
        }
        System.out.printf(Locale.ROOT, "%n1. takeover: runner A and its node (child JVM) SIGKILLed, runner B waiting on "
                + "node B; namespace TTL 2 s, heartbeat 500 ms, grace 500 ms; a call through node B every 10 ms; "
                + "%d rounds of each kind, alternating (the children's library log: %s)%n", rounds, childLog);
        System.out.printf(Locale.ROOT, "   %-64s %d ms%n", "lease TTL + grace (reference)",
                policy.ttl().plus(policy.grace()).toMillis());
        for (int c = 0; c < 2; c++) {
            String who = c == 0 ? "runner B with the namespace's TTL" : "runner B asking for ttl(2 s)";
            System.out.printf(Locale.ROOT, "   %s:%n", who);
            for (long[] t : times[c]) {
                Arrays.sort(t);
            }
            Rounds.latencyRowMillis("kill -> node B's route leaves runner A (lease expired)", times[c][0]);
            Rounds.latencyRowMillis("kill -> runner B holds the lease", times[c][1]);
            Rounds.latencyRowMillis("kill -> first reply from runner B", times[c][2]);
            long p99 = Rounds.percentile(times[c][2], 99);
            System.out.printf(Locale.ROOT, "   %-64s %s (p99 %.0f ms)%n", "takeover p99 within TTL + grace",
                    p99 <= policy.ttl().plus(policy.grace()).toNanos() ? "MET" : "MISSED", p99 / 1e6);
        }
    }

    /** @return nanoseconds from the kill to: the route leaving A, runner B's lease, runner B's first reply */
    private long[] takeoverRound(int round, Duration runnerTtl, Path childLog) throws Exception {
        String mailbox = "takeover@r" + round;
        AtomicLong routeMoved = new AtomicLong();
        AtomicLong acquired = new AtomicLong();
        AtomicLong firstFromB = new AtomicLong();
        AtomicInteger fromA = new AtomicInteger();
        Process a = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-Dorg.slf4j.simpleLogger.logFile=System.err", "-cp", System.getProperty("java.class.path"), TakeoverRunner.class.getName(), redisUri,
                coordinator, "a" + round, "runner-a", mailbox)
                .redirectError(ProcessBuilder.Redirect.appendTo(childLog.toFile())).start();
        ExecutorService senders = Executors.newCachedThreadPool();
        try (MailboxNode b = MailboxNode.builder("b" + round).coordinator(client).backend(new RedisBackend(redis)).start();
             RemoteMailbox<MainLoopRequest<String>> requests = RemoteMailbox.builder(mailbox,
                     MainLoopCodecs.requests(String.class)).node(b.address()).build();
             MainLoopClient<String, String> caller = MainLoopClient.<String, String>builder(requests,
                             name -> RemoteMailbox.<MainLoopResult<String>>builder(name, MainLoopCodecs.results(String.class))
                                     .node(b.address()).build())
                     .receiveWait(Duration.ofSeconds(1)).build()) {
            awaitAcquired(a);
            RoutingTable routes = b.routingTable().orElseThrow();
            routes.await(t -> t.route(mailbox).isPresent(), Duration.ofSeconds(10));
            routes.addListener((id, route, revision) -> {
                if (id.equals(mailbox) && (route == null || !route.runnerId().equals("runner-a"))) {
                    routeMoved.compareAndSet(0, System.nanoTime());
                }
            });
            AutoCloseable runnerB = TakeoverRunner.echoRunner(client, b, mailbox, "runner-b", runnerTtl,
                    new LeasedRunner.Listener() {
                        @Override
                        public void acquired(Lease lease) {
                            acquired.compareAndSet(0, System.nanoTime());
                        }
                    });
            // each call on its own thread: a send waits (in RemoteMailbox) while the route names a dead node
            Thread ticker = new Thread(() -> {
                for (int i = 0; firstFromB.get() == 0; i++) {
                    String body = "r" + round + "-" + i;
                    senders.execute(() -> caller.call(body, Duration.ofSeconds(30)).thenAccept(reply -> {
                        if (reply != null && reply.startsWith(REPLY_PREFIX_B)) {
                            firstFromB.compareAndSet(0, System.nanoTime());
                        } else {
                            fromA.incrementAndGet();
                        }
                    }));
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "takeover-ticker");
            ticker.start();
            awaitTrue(() -> fromA.get() >= 50, "runner A answers");
            long kill = System.nanoTime();
            a.destroyForcibly(); // SIGKILL: runner A neither releases nor renews, node A stops answering
            awaitTrue(() -> firstFromB.get() != 0, "runner B answers");
            ticker.interrupt();
            ticker.join();
            runnerB.close();
            return new long[] {routeMoved.get() - kill, acquired.get() - kill, firstFromB.get() - kill};
        } finally {
            a.destroyForcibly();
            a.waitFor();
            senders.shutdownNow();
        }
    }

    private static void awaitAcquired(Process child) throws Exception {
        CompletableFuture<Void> acquired = CompletableFuture.runAsync(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.startsWith("ACQUIRED")) {
                        return;
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            throw new IllegalStateException("the runner child exited before it held the lease");
        });
        acquired.get(60, TimeUnit.SECONDS);
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("timed out waiting until " + what);
            }
            Thread.sleep(1); // the measured events are stamped where they happen; this only waits for them
        }
    }

    // --- 2. forwarded vs direct on Redis-backed nodes ----------------------------------------------

    private void forwarding() throws Exception {
        String id = "fwd@owner";
        try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).backend(new RedisBackend(redis)).start();
             MailboxNode other = MailboxNode.builder("other").coordinator(client).backend(new RedisBackend(redis)).start();
             LeaseKeeper lease = client.leases().keeper(id, new LeaseHolder("bench", owner.id(), owner.address())).build()) {
            lease.acquire(); // kept for the whole run: the route names the owner, which opens the mailbox on Redis
            other.routingTable().orElseThrow().await(t -> t.route(id).isPresent(), Duration.ofSeconds(10));
            long millis = quick ? 1_500 : 4_000;
            try (RemoteMailbox<String> direct = RemoteMailbox.builder(id, Codec.utf8()).node(owner.address()).build();
                 RemoteMailbox<String> forwarded = RemoteMailbox.builder(id, Codec.utf8()).node(other.address()).build()) {
                System.out.printf(Locale.ROOT, "%n2. send + receive + acknowledge cycles, %d threads, %d ms rounds, "
                        + "alternating (mailbox on Redis, opened by the owner node through its backend)%n",
                        Rounds.CYCLE_THREADS, millis);
                for (int i = 0; i < 2; i++) { // the node paths take several rounds to warm up, more than medianPair's one
                    Rounds.cycles(direct, Rounds.CYCLE_THREADS, millis);
                    Rounds.cycles(forwarded, Rounds.CYCLE_THREADS, millis);
                }
                Rounds.compareCycles(quick ? 3 : 5, millis, "to the owner node directly", direct,
                        "through a node that forwards to the owner", forwarded,
                        "forwarded / direct (in-memory target >= 0.5)", 0.5);
            }
        }
    }

    // --- 3. the fence check on the Redis cycle -----------------------------------------------------

    private void fencing() throws Exception {
        try (RedisMailbox<String> plain = RedisMailbox.builder("fence-bench", Codec.utf8()).client(redis).build()) {
            plain.purge();
            Mailbox<String> fenced = plain.fenced(1);
            long millis = quick ? 1_500 : 4_000;
            System.out.printf(Locale.ROOT, "%n3. send + receive + acknowledge cycles straight on a RedisMailbox (no node), "
                    + "%d threads, %d ms rounds, alternating%n", Rounds.CYCLE_THREADS, millis);
            Rounds.compareCycles(quick ? 3 : 5, millis, "the mailbox itself (no fence)", plain,
                    "through mailbox.fenced(1): receive and ack check the fence", fenced,
                    "fenced / plain (target >= 0.95)", 0.95);
            plain.purge();
        }
    }
}
