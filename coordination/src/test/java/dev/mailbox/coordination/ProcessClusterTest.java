package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three coordinator nodes in child JVMs, so a leader can really be frozen (SIGSTOP: isolated from
 * everyone, then back believing it still leads) and really killed (SIGKILL).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ProcessClusterTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final LeasePolicy POLICY = new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));

    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, String> endpoints = new LinkedHashMap<>();
    private final List<CoordinationClient> clients = new ArrayList<>();
    private Path root;

    @AfterEach
    void stopAll() throws IOException {
        clients.forEach(CoordinationClient::close);
        for (Process p : processes.values()) {
            signal(p, "CONT");
            p.destroyForcibly();
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    @Test
    @DisplayName("a frozen leader: the holder it served loses the lease before anyone else gets it, and after "
            + "waking the old leader renews nothing; then a killed leader: a kept lease survives, writes go on")
    void isolateThenKill() throws Exception {
        startCluster();
        CoordinationClient all = client(endpoints.values().toArray(String[]::new));
        all.setPolicy("iso", POLICY);
        String leader = awaitLeader(all);

        // runner A talks to the leader only, so freezing the leader cuts it off
        CoordinationClient viaLeader = client(endpoints.get(leader));
        CountDownLatch aLost = new CountDownLatch(1);
        AtomicLong aLostAt = new AtomicLong();
        LeaseKeeper a = viaLeader.keeper("iso@m", new LeaseHolder("runner-a", "node-a", "127.0.0.1:1"))
                .listener((l, why) -> {
                    aLostAt.set(System.nanoTime());
                    aLost.countDown();
                }).build();
        Lease aLease = a.acquire();

        signal(processes.get(leader), "STOP");
        List<String> others = endpoints.keySet().stream().filter(id -> !id.equals(leader)).toList();
        CoordinationClient viaOthers = client(others.stream().map(endpoints::get).toArray(String[]::new));
        java.util.concurrent.atomic.AtomicReference<String> bLost = new java.util.concurrent.atomic.AtomicReference<>();
        LeaseKeeper b = viaOthers.keeper("iso@m", new LeaseHolder("runner-b", "node-b", "127.0.0.1:2"))
                .listener((l, why) -> bLost.set(why)).build();
        Lease bLease = b.acquire(Duration.ofSeconds(30));
        long bGrantedAt = System.nanoTime();
        assertThat(aLost.await(0, TimeUnit.SECONDS)).as("A was told it lost the lease before B got it").isTrue();
        assertThat(aLostAt.get()).isLessThanOrEqualTo(bGrantedAt);
        assertThat(a.isHeld()).isFalse();
        assertThat(bLease.epoch()).isGreaterThan(aLease.epoch());

        // the old leader wakes up still believing it leads: whatever A sends it is never an OK
        signal(processes.get(leader), "CONT");
        CoordinationClient raw = CoordinationClient.builder().endpoint(endpoints.get(leader)).maxAttempts(1)
                .callTimeout(Duration.ofSeconds(2)).build();
        clients.add(raw);
        int refused = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < until) {
            try {
                raw.renew(aLease);
                throw new AssertionError("the woken old leader renewed A's lease " + aLease);
            } catch (CoordinationException e) {
                refused += e.isRetryable() ? 0 : 1;
            }
        }
        assertThat(refused).as("refusals once the old leader caught up").isPositive();
        assertThat(b.isHeld()).as("B still holds (lost: %s)", bLost).isTrue();
        await(() -> all.clusterStatusOfEach().values().stream().filter(ClusterStatus::isLeader).count() == 1
                && all.clusterStatusOfEach().size() == 3, "one leader, three members answering");

        // now kill the leader outright while B keeps its lease through the surviving nodes
        String second = awaitLeader(all);
        Lease before = all.get("iso@m").orElseThrow();
        processes.get(second).destroyForcibly().waitFor();
        Lease other = all.acquire("iso@other", new LeaseHolder("runner-c", "node-c", "127.0.0.1:3"));
        assertThat(other.state()).as("a new leader serves writes").isEqualTo(LeaseState.ACTIVE);
        long start = System.nanoTime();
        await(() -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(3_000), "3 s of renewals");
        assertThat(b.isHeld()).as("B's lease survived the kill").isTrue();
        assertThat(all.get("iso@m").orElseThrow()).as("not expired, not re-granted").isEqualTo(before);
        b.close();
        assertThat(all.get("iso@m").orElseThrow().state()).isEqualTo(LeaseState.RELEASED);
    }

    private void startCluster() throws Exception {
        root = Files.createTempDirectory("coordination-proc-");
        Map<String, String> raft = new LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            raft.put(id, "127.0.0.1:" + freePort());
            endpoints.put(id, "127.0.0.1:" + freePort());
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (String id : raft.keySet()) {
            List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    CoordinatorMain.class.getName(), id, "proc", Files.createDirectories(root.resolve(id)).toString(),
                    endpoints.get(id).substring(endpoints.get(id).indexOf(':') + 1)));
            raft.forEach((peer, address) -> cmd.add(peer + "=" + address));
            Process p = new ProcessBuilder(cmd).redirectError(root.resolve(id + ".log").toFile()).start();
            processes.put(id, p);
        }
        for (Map.Entry<String, Process> e : processes.entrySet()) {
            BufferedReader out = new BufferedReader(new InputStreamReader(e.getValue().getInputStream(),
                    StandardCharsets.UTF_8));
            String line = out.readLine();
            assertThat(line).as("node %s started", e.getKey()).isEqualTo("READY");
        }
    }

    private String awaitLeader(CoordinationClient c) {
        String[] leader = new String[1];
        await(() -> {
            for (ClusterStatus s : c.clusterStatusOfEach().values()) {
                if (s.isLeader()) {
                    leader[0] = s.nodeId();
                    return true;
                }
            }
            return false;
        }, "a leader");
        return leader[0];
    }

    private CoordinationClient client(String... hostPorts) {
        CoordinationClient c = CoordinationClient.builder().endpoints(List.of(hostPorts))
                .callTimeout(Duration.ofSeconds(2)).build();
        clients.add(c);
        return c;
    }

    private static void signal(Process p, String signal) {
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) {
        TestCluster.await(PATIENCE, condition, what);
    }
}
