package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.RoutingTable;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

/**
 * Issue 33's scale measurements, each at the size the issue gives, printing every target with MET or MISSED:
 * <ol>
 *   <li>{@code leases}: N leases at the default TTL renewed by their runners while R acquires a second run, on
 *       three coordinators in child JVMs, for a while (see {@link LeaseScale}). Targets: 100,000 leases renewed on
 *       time while 1,000 acquires/s run, 0 spurious expiries over 10 minutes.</li>
 *   <li>{@code watches}: W route watchers (RoutingTables on C clients) of a table of R routes sync from a
 *       three-coordinator cluster in child JVMs: sync time, the serving coordinator's RSS growth, then route
 *       propagation p99 to all W. Targets: 1,000 × 100,000 in ≤ 5 s, RSS ≤ +20 %, propagation p99 ≤ 50 ms.</li>
 *   <li>{@code redis}: N mailboxes of one Redis client each with a receive waiting (parked, {@code receiveAsync}):
 *       the JVM's threads, Redis connections, wake latency and Redis's idle load. Targets: 10,000 waiting with
 *       ≤ 64 threads and ≤ 8 connections, wake p99 ≤ 10 ms, idle load near zero (under one script call a
 *       second).</li>
 *   <li>{@code node}: P long polls at once through a forwarding node to the node that owns M mailboxes
 *       (memory, or Redis with {@code --backend redis}), each re-polling when answered; meanwhile sends through the
 *       forwarder, each of which must wake a waiter within 3 s. Targets: 10,000 polls, 0 refused, 0 missed
 *       wake-ups, send p99 ≤ 10 ms.</li>
 * </ol>
 *
 * <pre>
 * java -Xmx3g -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.ScaleHarness [leases] [watches] [redis] [node]
 *     [--leases 100000] [--acquires 1000] [--seconds 600] [--lease-clients 8] [--coordinator-jvm "-Xmx1g ..."]
 *     [--quick] [--watchers 1000] [--routes 100000] [--clients 10] [--mailboxes-waiting 10000]
 *     [--polls 10000] [--poll-mailboxes 100] [--backend memory|redis]
 * </pre>
 * {@code --quick} runs each part at a small size (for a check that the harness works, not a measurement).
 */
public final class ScaleHarness {

    private final boolean quick;
    private final Options options;

    private ScaleHarness(String[] args) {
        this.quick = Arrays.asList(args).contains("--quick");
        this.options = new Options(args);
    }

    /**
     * @param args the parts to run (all by default) and the sizes
     * @throws Exception if something fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("scale");
        ScaleHarness h = new ScaleHarness(args);
        System.out.printf(Locale.ROOT, "scale harness (issue 33): %d cores, %s%n",
                Runtime.getRuntime().availableProcessors(), h.quick ? "quick (small sizes: not a measurement)" : "full");
        List<String> parts = Arrays.stream(args).filter(a -> List.of("leases", "watches", "redis", "node").contains(a))
                .toList();
        if (parts.isEmpty() || parts.contains("leases")) {
            LeaseScale.run(h.options, h.quick);
        }
        if (parts.isEmpty() || parts.contains("watches")) {
            h.watches();
        }
        if (parts.isEmpty() || parts.contains("redis")) {
            h.redis();
        }
        if (parts.isEmpty() || parts.contains("node")) {
            h.node();
        }
        System.exit(0);
    }

    private static void target(String what, boolean met, String value) {
        System.out.printf(Locale.ROOT, "   %-64s %s (%s)%n", what, met ? "MET" : "MISSED", value);
    }

    private static long[] sorted(List<Long> values) {
        long[] out = values.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(out);
        return out;
    }

    // --- 2. route watches --------------------------------------------------------------------------

    private void watches() throws Exception {
        int watchers = options.integer("--watchers", quick ? 100 : 1_000);
        int routes = options.integer("--routes", quick ? 5_000 : 100_000);
        int clientsCount = options.integer("--clients", 10);
        System.out.printf(Locale.ROOT, "%n2. route watches: %,d watchers (RoutingTables on %d clients) x %,d routes, "
                + "3 coordinators in child JVMs%n", watchers, clientsCount, routes);
        try (TestingCluster cluster = TestingCluster.builder().size(3).processes(true)
                .javaOptions("-Xmx1g").start();
             CoordinationClient admin = CoordinationClient.builder().endpoints(cluster.endpoints())
                     .callTimeout(Duration.ofSeconds(10)).maxAttempts(40).build()) {
            String leader = cluster.awaitLeader(Duration.ofSeconds(60));
            long grantStart = System.nanoTime();
            grant(admin, "scale", routes);
            System.out.printf(Locale.ROOT, "   %-64s %,d in %.1f s%n", "routes granted", routes,
                    (System.nanoTime() - grantStart) / 1e9);
            long pid = cluster.pid(leader);
            String leaderEndpoint = cluster.endpoint(leader);
            System.gc();
            Thread.sleep(2_000);
            long rssBefore = rssKb(pid);
            AtomicLong rssPeak = new AtomicLong(rssBefore);
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    try {
                        rssPeak.accumulateAndGet(rssKb(pid), Math::max);
                        Thread.sleep(50);
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "rss-sampler");
            sampler.setDaemon(true);
            sampler.start();

            List<CoordinationClient> clients = new ArrayList<>();
            for (int i = 0; i < clientsCount; i++) {
                // every watch on the leader: the "serving coordinator" whose memory is measured
                List<String> order = new ArrayList<>(cluster.endpoints());
                order.remove(leaderEndpoint);
                order.add(0, leaderEndpoint);
                clients.add(CoordinationClient.builder().endpoints(order).callTimeout(Duration.ofSeconds(10)).build());
            }
            long start = System.nanoTime();
            List<RoutingTable> tables = new ArrayList<>();
            for (int w = 0; w < watchers; w++) {
                tables.add(clients.get(w % clientsCount).routes().table());
            }
            for (RoutingTable t : tables) {
                if (!t.await(x -> x.routes().size() >= routes, Duration.ofSeconds(300))) {
                    throw new IllegalStateException("a watcher did not sync within 300 s: " + t);
                }
            }
            double syncSeconds = (System.nanoTime() - start) / 1e9;
            sampling.set(false);
            sampler.join();
            double growth = 100.0 * (rssPeak.get() - rssBefore) / rssBefore;
            System.out.printf(Locale.ROOT, "   %-64s %.2f s%n", "all watchers synced", syncSeconds);
            System.out.printf(Locale.ROOT, "   %-64s %,d MB -> peak %,d MB (+%.1f %%)%n", "serving coordinator RSS",
                    rssBefore / 1024, rssPeak.get() / 1024, growth);
            target("sync <= 5 s", syncSeconds <= 5, String.format(Locale.ROOT, "%.2f s", syncSeconds));
            target("serving coordinator memory growth <= 20 %", growth <= 20,
                    String.format(Locale.ROOT, "%.1f %%", growth));

            // propagation, as issue 7's harness measures it: acquire call -> the last watcher has the route
            Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
            Map<String, Long> lastSeen = new ConcurrentHashMap<>();
            Map<String, CountDownLatch> done = new ConcurrentHashMap<>();
            for (RoutingTable t : tables) {
                t.addListener((mailbox, route, revision) -> {
                    AtomicInteger n = seen.get(mailbox);
                    if (route != null && n != null && n.incrementAndGet() == watchers) {
                        lastSeen.put(mailbox, System.nanoTime());
                        done.get(mailbox).countDown();
                    }
                });
            }
            int grants = quick ? 50 : 300;
            List<Long> latencies = new ArrayList<>();
            for (int i = -20; i < grants; i++) {
                String mailbox = "prop@m" + (i + 20);
                seen.put(mailbox, new AtomicInteger());
                done.put(mailbox, new CountDownLatch(1));
                long t0 = System.nanoTime();
                admin.leases().acquire(mailbox, new LeaseHolder("r", "n", "127.0.0.1:1"));
                if (!done.get(mailbox).await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("not every watcher saw " + mailbox);
                }
                if (i >= 0) {
                    latencies.add(lastSeen.get(mailbox) - t0);
                }
            }
            long[] p = sorted(latencies);
            Rounds.latencyRow("acquire call starts -> the last watcher has the route", p);
            target("propagation p99 <= 50 ms (issue 7's target, unchanged)", Rounds.percentile(p, 99) <= 50_000_000,
                    String.format(Locale.ROOT, "%.1f ms", Rounds.percentile(p, 99) / 1e6));
            tables.forEach(RoutingTable::close);
            clients.forEach(CoordinationClient::close);
        }
    }

    private static void grant(CoordinationClient client, String namespace, int n) {
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            inFlight.add(client.leases().acquireAsync(namespace + "@m" + i, new LeaseHolder("runner-" + i, "node-1",
                    "127.0.0.1:" + (10_000 + i % 1_000)), Duration.ofMinutes(10)));
            if (inFlight.size() == 500) {
                inFlight.forEach(CompletableFuture::join);
                inFlight.clear();
            }
        }
        inFlight.forEach(CompletableFuture::join);
    }

    private static long rssKb(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS for " + pid);
    }

    // --- 3. Redis long polls ------------------------------------------------------------------------

    private static final Pattern CALLS = Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)");

    private void redis() throws Exception {
        int n = options.integer("--mailboxes-waiting", quick ? 1_000 : 10_000);
        System.out.printf(Locale.ROOT, "%n3. Redis long polls: %,d mailboxes of one client, a receive waiting on each "
                + "(receiveAsync, 15 min wait); pool of 6 connections%n", n);
        try (RedisServerProcess server = RedisServerProcess.start()) {
            GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
            pool.setMaxTotal(6);
            pool.setMaxIdle(6);
            try (JedisPooled client = new JedisPooled(pool, server.host(), server.port())) {
                int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
                List<RedisMailbox<String>> boxes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    boxes.add(RedisMailbox.builder("wait-" + i, Codec.utf8()).client(client).build());
                }
                ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofMinutes(15));
                List<CompletableFuture<List<Message<String>>>> waiting = new ArrayList<>();
                long start = System.nanoTime();
                for (RedisMailbox<String> m : boxes) {
                    waiting.add(m.receiveAsync(wait));
                }
                System.out.printf(Locale.ROOT, "   %-64s %.1f s%n", "all receives parked",
                        (System.nanoTime() - start) / 1e9);
                Thread.sleep(2_000); // subscriptions confirmed
                int threads = ManagementFactory.getThreadMXBean().getThreadCount();
                long connections = String.valueOf(server.call("CLIENT", "LIST")).lines().count() - 1; // not this one
                System.out.printf(Locale.ROOT, "   %-64s %d (before: %d)%n", "JVM threads while they wait", threads,
                        threadsBefore);
                System.out.printf(Locale.ROOT, "   %-64s %d%n", "Redis connections of the client", connections);
                target("threads <= 64", threads <= 64, threads + " threads");
                target("Redis connections <= 8", connections <= 8, connections + " connections");

                double cpu0 = Rounds.serverCpuMicros(client);
                long calls0 = scriptCalls(server);
                int idleSeconds = quick ? 5 : 20;
                Thread.sleep(idleSeconds * 1_000L);
                double callsPerSecond = (scriptCalls(server) - calls0) / (double) idleSeconds;
                double cpuShare = (Rounds.serverCpuMicros(client) - cpu0) / (idleSeconds * 1e6) * 100;
                System.out.printf(Locale.ROOT, "   %-64s %.2f script calls/s, redis-server CPU %.2f %% of a core%n",
                        "idle load, " + idleSeconds + " s", callsPerSecond, cpuShare);
                target("idle Redis load near zero (< 1 script call/s)", callsPerSecond < 1,
                        String.format(Locale.ROOT, "%.2f/s", callsPerSecond));

                Random random = new Random(33);
                int wakes = quick ? 200 : 1_000;
                List<Long> latencies = new ArrayList<>();
                for (int i = 0; i < wakes; i++) {
                    int k = random.nextInt(n);
                    CompletableFuture<List<Message<String>>> f = waiting.get(k);
                    long t0 = System.nanoTime();
                    boxes.get(k).send("wake " + i);
                    List<Message<String>> got = f.get(10, TimeUnit.SECONDS);
                    latencies.add(System.nanoTime() - t0);
                    got.forEach(Message::acknowledge);
                    waiting.set(k, boxes.get(k).receiveAsync(wait));
                    Thread.sleep(2);
                }
                long[] p = sorted(latencies);
                Rounds.latencyRow("send -> the waiting receive has it", p);
                target("wake p99 <= 10 ms", Rounds.percentile(p, 99) <= 10_000_000,
                        String.format(Locale.ROOT, "%.2f ms", Rounds.percentile(p, 99) / 1e6));
                boxes.forEach(RedisMailbox::close);
            }
        }
    }

    private static long scriptCalls(RedisServerProcess server) {
        Matcher m = CALLS.matcher(String.valueOf(server.call("INFO", "commandstats")));
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(2));
        }
        return total;
    }

    // --- 4. node long polls -------------------------------------------------------------------------

    private void node() throws Exception {
        int polls = options.integer("--polls", quick ? 1_000 : 10_000);
        int mailboxes = options.integer("--poll-mailboxes", quick ? 20 : 100);
        String backend = options.string("--backend", "memory");
        System.out.printf(Locale.ROOT, "%n4. node long polls: %,d at once through a forwarding node to the owner of "
                + "%d mailboxes (%s), each polling again when answered%n", polls, mailboxes, backend);
        RedisServerProcess redis = backend.equals("redis") ? RedisServerProcess.start() : null;
        JedisPooled jedis = redis == null ? null : new JedisPooled(redis.host(), redis.port());
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            CoordinationClient client = cluster.client();
            MailboxBackend store = jedis == null ? null : new MailboxBackend() {
                @Override
                public Mailbox<byte[]> open(String mailboxId) {
                    return RedisMailbox.builder(mailboxId, Codec.bytes()).client(jedis).build();
                }

                @Override
                public boolean shared() {
                    return true;
                }
            };
            io.micrometer.core.instrument.simple.SimpleMeterRegistry meters =
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
            MailboxNode.Builder ob = MailboxNode.builder("owner").coordinator(client).meterRegistry(meters);
            try (MailboxNode owner = ob.start();
                 MailboxNode forwarder = MailboxNode.builder("forwarder").coordinator(client).start()) {
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < mailboxes; i++) {
                    String id = "poll" + i + "@owner";
                    owner.publish(store != null ? store.open(id) : InMemoryMailbox.builder(id, Codec.bytes()).build());
                    ids.add(id);
                }
                RoutingTable routes = forwarder.routingTable().orElseThrow();
                for (String id : ids) {
                    routes.await(t -> t.route(id).isPresent(), Duration.ofSeconds(30));
                }
                List<ManagedChannel> channels = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    channels.add(NettyChannelBuilder.forTarget(forwarder.address()).usePlaintext().build());
                }
                AtomicInteger refused = new AtomicInteger();
                AtomicInteger failed = new AtomicInteger();
                AtomicBoolean running = new AtomicBoolean(true);
                Map<String, Long> sentAt = new ConcurrentHashMap<>();
                Map<String, Long> wokenAfter = new ConcurrentHashMap<>();
                for (int i = 0; i < polls; i++) {
                    poll(MailboxServiceGrpc.newStub(channels.get(i % channels.size())), ids.get(i % mailboxes),
                            running, refused, failed, sentAt, wokenAfter);
                }
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (waiting(meters) < polls && refused.get() == 0 && System.nanoTime() - until < 0) {
                    Thread.sleep(50);
                }
                long parked = (long) waiting(meters);
                System.out.printf(Locale.ROOT, "   %-64s %,d (refused %,d)%n", "long polls waiting on the owner",
                        parked, refused.get());
                long ownerThreads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("mailbox-node-owner")).count();
                long forwarderThreads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("mailbox-node-forwarder")).count();
                System.out.printf(Locale.ROOT, "   %-64s owner %d, forwarder %d%n", "node threads", ownerThreads,
                        forwarderThreads);

                int sends = quick ? 200 : 1_000;
                List<Long> sendLatency = new ArrayList<>();
                Random random = new Random(4);
                try (RemoteMailbox<String> sender = RemoteMailbox.builder(ids.get(0), Codec.utf8())
                        .node(forwarder.address()).build()) {
                    List<RemoteMailbox<String>> senders = new ArrayList<>();
                    for (String id : ids) {
                        senders.add(RemoteMailbox.builder(id, Codec.utf8()).channel(channels.get(0)).build());
                    }
                    sender.approximateCount(); // warm the channel
                    for (int i = 0; i < sends; i++) {
                        String body = "wake-" + i;
                        RemoteMailbox<String> to = senders.get(random.nextInt(mailboxes));
                        long t0 = System.nanoTime();
                        sentAt.put(body, t0);
                        to.send(body);
                        sendLatency.add(System.nanoTime() - t0);
                        Thread.sleep(5);
                    }
                }
                Thread.sleep(3_000); // every wake-up has 3 s to arrive
                running.set(false);
                long missed = sentAt.keySet().stream().filter(b -> {
                    Long after = wokenAfter.get(b);
                    return after == null || after > TimeUnit.SECONDS.toNanos(3);
                }).count();
                long[] s = sorted(sendLatency);
                long[] w = sorted(new ArrayList<>(wokenAfter.values()));
                Rounds.latencyRow("send through the forwarder, while the polls wait", s);
                if (w.length > 0) {
                    Rounds.latencyRow("send -> a waiting poll has it", w);
                }
                target(String.format(Locale.ROOT, "%,d long polls waiting, none refused", polls),
                        refused.get() == 0 && parked >= polls,
                        String.format(Locale.ROOT, "%,d refused", refused.get()));
                target("0 missed wake-ups (a reply within 3 s of each send)", missed == 0,
                        missed + " missed of " + sends);
                target("send p99 <= 10 ms meanwhile", Rounds.percentile(s, 99) <= 10_000_000,
                        String.format(Locale.ROOT, "%.2f ms", Rounds.percentile(s, 99) / 1e6));
                if (failed.get() > 0) {
                    System.out.printf(Locale.ROOT, "   (%d polls failed otherwise)%n", failed.get());
                }
                channels.forEach(ManagedChannel::shutdownNow);
            }
        } finally {
            if (jedis != null) {
                jedis.close();
            }
            if (redis != null) {
                redis.close();
            }
        }
    }

    private static double waiting(io.micrometer.core.instrument.MeterRegistry meters) {
        io.micrometer.core.instrument.Gauge g = meters.find("mailbox.node.receives.waiting").gauge();
        return g == null ? 0 : g.value();
    }

    /** One long poll after another on a mailbox, each recording when the messages it got were sent. */
    private static void poll(MailboxServiceGrpc.MailboxServiceStub stub, String mailbox, AtomicBoolean running,
                             AtomicInteger refused, AtomicInteger failed, Map<String, Long> sentAt,
                             Map<String, Long> wokenAfter) {
        if (!running.get()) {
            return;
        }
        ReceiveRequest r = ReceiveRequest.newBuilder().setMailbox(mailbox).setMaxMessages(1)
                .setVisibilityTimeoutMillis(60_000).setWaitMillis(20_000).build();
        stub.withDeadlineAfter(60, TimeUnit.SECONDS).receive(r, new StreamObserver<>() {
            @Override
            public void onNext(ReceiveReply reply) {
                long now = System.nanoTime();
                for (var d : reply.getMessagesList()) {
                    String body = d.getBody().toString(StandardCharsets.UTF_8);
                    Long t0 = sentAt.get(body);
                    if (t0 != null) {
                        wokenAfter.put(body, now - t0);
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                if (io.grpc.Status.fromThrowable(t).getCode() == io.grpc.Status.Code.RESOURCE_EXHAUSTED) {
                    refused.incrementAndGet();
                } else if (running.get()) {
                    failed.incrementAndGet();
                }
            }

            @Override
            public void onCompleted() {
                poll(stub, mailbox, running, refused, failed, sentAt, wokenAfter);
            }
        });
    }
}
