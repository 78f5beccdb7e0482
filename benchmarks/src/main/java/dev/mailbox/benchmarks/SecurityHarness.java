package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.tls.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Issue 17's figures: what TLS and authorization cost. Two stacks run side by side in one JVM, each a
 * 3-node coordinator cluster and two mailbox nodes: one plaintext and open, one with TLS on every channel
 * (control plane, data plane, node-to-node forwarding, Raft between the coordinators) and bearer tokens
 * checked against access rules on every call. The rounds alternate between the stacks (which one goes
 * first alternates too), so drift hits both alike; each figure is the median of the rounds.
 *
 * <pre>java -Xmx4g -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.SecurityHarness [--quick]</pre>
 */
public final class SecurityHarness {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int LEASES = 1_000;
    private static final int WINDOW = 128;

    private final boolean quick;
    private final AtomicLong names = new AtomicLong();

    private SecurityHarness(boolean quick) {
        this.quick = quick;
    }

    /**
     * @param args {@code --quick} for a short run
     * @throws Exception if a stack fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("security");
        new SecurityHarness(Arrays.asList(args).contains("--quick")).run();
        System.exit(0);
    }

    private void run() throws Exception {
        int rounds = quick ? 3 : 5;
        int acquires = quick ? 300 : 1_000;
        long millis = quick ? 2_000 : 4_000;
        System.out.printf(Locale.ROOT, "security harness: %d cores, %s; %d rounds, alternating plaintext and TLS + tokens%n",
                Runtime.getRuntime().availableProcessors(), quick ? "quick" : "full", rounds);
        Path dir = Files.createTempDirectory("mailbox-security-bench");
        try (Stack plain = Stack.plain(); Stack secure = Stack.secure(dir)) {
            List<Stack> stacks = List.of(plain, secure);
            for (Stack s : stacks) {
                s.prepare(this);
                s.acquireRound(this, 200); // warm-up: connections, TLS sessions, JIT
                s.renewRound(500);
                Rounds.cycles(s.forwarded, Rounds.CYCLE_THREADS, 500);
            }
            Map<Stack, List<long[]>> acquireLatencies = new HashMap<>();
            Map<Stack, double[]> renewals = new HashMap<>();
            Map<Stack, double[]> cycles = new HashMap<>();
            for (Stack s : stacks) {
                acquireLatencies.put(s, new ArrayList<>());
                renewals.put(s, new double[rounds]);
                cycles.put(s, new double[rounds]);
            }
            for (int r = 0; r < rounds; r++) {
                List<Stack> order = r % 2 == 0 ? stacks : List.of(secure, plain);
                for (Stack s : order) {
                    acquireLatencies.get(s).add(s.acquireRound(this, acquires));
                }
                for (Stack s : order) {
                    renewals.get(s)[r] = s.renewRound(millis);
                }
                for (Stack s : order) {
                    cycles.get(s)[r] = Rounds.cycles(s.forwarded, Rounds.CYCLE_THREADS, millis);
                }
            }
            long[] acquirePlain = sorted(acquireLatencies.get(plain));
            long[] acquireSecure = sorted(acquireLatencies.get(secure));
            System.out.printf(Locale.ROOT, "%n1. sequential AcquireLease, %d per round%n", acquires);
            Rounds.latencyRow("plaintext, open", acquirePlain);
            Rounds.latencyRow("TLS + token + access rules", acquireSecure);
            double p99Ratio = (double) Rounds.percentile(acquirePlain, 99) / Rounds.percentile(acquireSecure, 99);
            Rounds.verdict("acquire p99, plaintext / secured (1.0 = no cost)", p99Ratio, 0.8);

            System.out.printf(Locale.ROOT, "%n2. renewals of %,d leases, %d in flight, %d ms rounds%n", LEASES, WINDOW, millis);
            double renewPlain = median(renewals.get(plain));
            double renewSecure = median(renewals.get(secure));
            Rounds.row("plaintext, open", renewPlain, "/s", 1.0);
            Rounds.row("TLS + token + access rules", renewSecure, "/s", renewSecure / renewPlain);
            Rounds.verdict("renewals/s, secured / plaintext", renewSecure / renewPlain, 0.8);

            System.out.printf(Locale.ROOT, "%n3. send + receive + acknowledge through a node that forwards to the owner, "
                    + "%d threads, %d ms rounds%n", Rounds.CYCLE_THREADS, millis);
            double cyclePlain = median(cycles.get(plain));
            double cycleSecure = median(cycles.get(secure));
            Rounds.row("plaintext, open", cyclePlain, "cycles/s", 1.0);
            Rounds.row("TLS (client -> node -> owner) + token + access rules", cycleSecure, "cycles/s",
                    cycleSecure / cyclePlain);
            Rounds.verdict("forwarded cycles/s, secured / plaintext", cycleSecure / cyclePlain, 0.8);
        }
    }

    private String next(String prefix) {
        return prefix + "@m" + names.incrementAndGet();
    }

    private static long[] sorted(List<long[]> rounds) {
        return rounds.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    }

    private static double median(double[] values) {
        double[] copy = values.clone();
        Arrays.sort(copy);
        return copy[copy.length / 2];
    }

    /** A coordinator cluster, a client of it, and two nodes: the owner of one mailbox and one that forwards. */
    private static final class Stack implements AutoCloseable {
        private final TestingCluster cluster;
        private final CoordinationClient client;
        private final MailboxNode owner;
        private final MailboxNode other;
        private final Mailbox<byte[]> hosted;
        final RemoteMailbox<String> forwarded;
        private final LeaseHolder holder = new LeaseHolder("bench", "bench-node", "127.0.0.1:1");
        private final List<Lease> held = new ArrayList<>();

        private Stack(TestingCluster cluster, CoordinationClient client, MailboxNode owner, MailboxNode other,
                      ClientSecurity app) throws InterruptedException {
            this.cluster = cluster;
            this.client = client;
            this.owner = owner;
            this.other = other;
            String id = "fwd@owner";
            this.hosted = InMemoryMailbox.builder(id, Codec.bytes()).build();
            owner.publish(hosted); // hosts it and keeps its lease (so its route) for the whole run
            other.routingTable().orElseThrow().await(t -> t.route(id).isPresent(), PATIENCE);
            this.forwarded = RemoteMailbox.builder(id, Codec.utf8()).node(other.address()).security(app).build();
        }

        static Stack plain() throws InterruptedException {
            TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(200_000).start();
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = client(cluster, ClientSecurity.none());
            MailboxNode owner = MailboxNode.builder("owner").coordinator(client).start();
            MailboxNode other = MailboxNode.builder("other").coordinator(client).start();
            return new Stack(cluster, client, owner, other, ClientSecurity.none());
        }

        static Stack secure(Path dir) throws Exception {
            TestCertificates ca = TestCertificates.create(dir, "ca");
            Map<String, String> tokens = new HashMap<>();
            StringBuilder lines = new StringBuilder();
            for (String p : List.of("admin", "owner", "other", "bench", "app")) {
                String token = Access.newToken();
                tokens.put(p, token);
                lines.append(Access.tokenLine(p, token)).append('\n');
            }
            Path tokenFile = Files.writeString(dir.resolve("tokens"), lines.toString());
            Path rules = Files.writeString(dir.resolve("rules"), """
                    admin  admin   *
                    owner  node    *
                    other  node    *
                    bench  runner  bench
                    app    client  fwd
                    """);
            Access access = Access.fromFiles(tokenFile, rules);
            TlsFiles coordinatorTls = serverTls(ca, "coordinator");
            TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(200_000)
                    .configure(b -> b.tls(coordinatorTls).access(access))
                    .clientSecurity(as(ca, tokens.get("admin"))).start();
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = client(cluster, as(ca, tokens.get("bench")));
            MailboxNode owner = node(cluster, ca, access, "owner", tokens.get("owner"));
            MailboxNode other = node(cluster, ca, access, "other", tokens.get("other"));
            return new Stack(cluster, client, owner, other, as(ca, tokens.get("app")));
        }

        private static TlsFiles serverTls(TestCertificates ca, String name) {
            TestCertificates.Issued cert = ca.issue(name);
            return TlsFiles.builder().keyPair(cert.certificate(), cert.key()).trusted(ca.caCertificate()).build();
        }

        private static ClientSecurity as(TestCertificates ca, String token) {
            return ClientSecurity.none().withTls(TlsFiles.builder().trusted(ca.caCertificate()).build()).withToken(token);
        }

        private static MailboxNode node(TestingCluster cluster, TestCertificates ca, Access access, String id,
                                        String token) {
            CoordinationClient c = client(cluster, as(ca, token));
            return MailboxNode.builder(id).coordinator(c).tls(serverTls(ca, id)).access(access)
                    .peerSecurity(as(ca, token)).start();
        }

        private static CoordinationClient client(TestingCluster cluster, @Nullable ClientSecurity security) {
            CoordinationClient.Builder b = CoordinationClient.builder().callTimeout(Duration.ofSeconds(2))
                    .maxAttempts(40).backoff(Duration.ofMillis(10), Duration.ofMillis(100));
            cluster.endpoints().forEach(b::endpoint);
            if (security != null) {
                b.security(security);
            }
            return b.build();
        }

        /** The leases the renewal rounds renew. */
        void prepare(SecurityHarness h) {
            for (int i = 0; i < LEASES; i++) {
                held.add(client.leases().acquire(h.next("bench"), holder, Duration.ofMinutes(10)));
            }
        }

        /** @return the latencies of {@code n} sequential acquires, in nanoseconds */
        long[] acquireRound(SecurityHarness h, int n) {
            long[] lat = new long[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                client.leases().acquire(h.next("bench"), holder);
                lat[i] = System.nanoTime() - t0;
            }
            return lat;
        }

        /** @return renewals per second over {@code millis}, {@link #WINDOW} in flight */
        double renewRound(long millis) throws InterruptedException {
            Semaphore inFlight = new Semaphore(WINDOW);
            AtomicLong ok = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            long start = System.nanoTime();
            long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
            int i = 0;
            while (System.nanoTime() < end) {
                inFlight.acquire();
                client.leases().renewAsync(held.get(i++ % held.size())).whenComplete((r, e) -> {
                    (e == null ? ok : failed).incrementAndGet();
                    inFlight.release();
                });
            }
            inFlight.acquire(WINDOW);
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " renewals failed");
            }
            return ok.get() / ((System.nanoTime() - start) / 1e9);
        }

        @Override
        public void close() throws Exception {
            forwarded.close();
            other.close();
            owner.close();
            hosted.close();
            client.close();
            cluster.close();
        }
    }
}
