package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.internal.LeaseClient;
import dev.mailbox.coordination.internal.LeaseTable;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/** Coordinator nodes in this JVM on free loopback ports, each with its own temp data dir. */
final class TestCluster implements AutoCloseable {

    final String name = "test-" + System.nanoTime();
    final Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
    final Map<String, InetSocketAddress> controlPlanes = new LinkedHashMap<>();
    final Map<String, Path> dirs = new LinkedHashMap<>();
    final Map<String, CoordinatorNode> running = new LinkedHashMap<>();
    private final Path root;
    private final long snapshotEvery;
    private final UnaryOperator<CoordinatorNode.Builder> extra;
    private final List<AutoCloseable> clients = new ArrayList<>();

    TestCluster(int size, long snapshotEvery) {
        this(size, snapshotEvery, b -> b);
    }

    /** @param extra more settings for every node's builder */
    TestCluster(int size, long snapshotEvery, UnaryOperator<CoordinatorNode.Builder> extra) {
        this.snapshotEvery = snapshotEvery;
        this.extra = extra;
        try {
            root = Files.createTempDirectory("coordination-");
            for (int i = 1; i <= size; i++) {
                String id = "n" + i;
                peers.put(id, new InetSocketAddress("127.0.0.1", freePort()));
                controlPlanes.put(id, new InetSocketAddress("127.0.0.1", freePort()));
                dirs.put(id, Files.createDirectories(root.resolve(id)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        peers.keySet().forEach(this::start);
    }

    CoordinatorNode start(String id) {
        CoordinatorNode node = extra.apply(CoordinatorNode.builder(id).cluster(name).peers(peers).dataDir(dirs.get(id))
                .controlPlane(controlPlanes.get(id)).electionTimeout(Duration.ofMillis(300))
                .snapshotEvery(snapshotEvery)).start();
        running.put(id, node);
        return node;
    }

    void stop(String id) {
        CoordinatorNode node = running.remove(id);
        if (node != null) {
            node.close();
        }
    }

    LeaseClient client() {
        LeaseClient c = new LeaseClient(CoordinatorNode.group(name, peers));
        clients.add(c);
        return c;
    }

    /** A control-plane client of every node, in node order. */
    CoordinationClient coordinationClient() {
        return coordinationClient(peers.keySet().toArray(String[]::new));
    }

    /** A control-plane client of the given nodes only. */
    CoordinationClient coordinationClient(String... nodeIds) {
        CoordinationClient.Builder b = CoordinationClient.builder().callTimeout(Duration.ofSeconds(3));
        for (String id : nodeIds) {
            b.endpoint(endpoint(id));
        }
        CoordinationClient c = b.build();
        clients.add(c);
        return c;
    }

    String endpoint(String id) {
        InetSocketAddress a = controlPlanes.get(id);
        return a.getHostString() + ":" + a.getPort();
    }

    /** A follower's id (waits for a leader first). */
    String follower(Duration timeout) {
        String leader = awaitLeader(timeout);
        return running.keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
    }

    /** Waits until some running node leads; returns its id. */
    String awaitLeader(Duration timeout) {
        String[] leader = new String[1];
        await(timeout, () -> {
            for (CoordinatorNode n : running.values()) {
                if (n.isLeader()) {
                    leader[0] = n.id();
                    return true;
                }
            }
            return false;
        }, "a leader among " + running.keySet());
        return leader[0];
    }

    /** Polls a condition of the cluster: Raft offers nothing to wait on for these. */
    static void await(Duration timeout, BooleanSupplier condition, String what) {
        long until = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    /**
     * Waits until the given running nodes (all when none are named) have applied the same log index, then
     * asserts their tables are byte-identical. Tables are compared only at one common index: the leader
     * keeps writing (lease expiries) after a test's last call, so "applied at least N" is not enough.
     * Two tables that differ at the same index are a divergence and fail at once.
     */
    void assertIdenticalTables(Duration timeout, String... ids) {
        List<String> names = ids.length == 0 ? List.copyOf(running.keySet()) : List.of(ids);
        await(timeout, () -> {
            List<LeaseTable> tables = names.stream().map(id -> running.get(id).table()).toList();
            if (tables.stream().map(LeaseTable::appliedIndex).distinct().count() > 1) {
                return false;
            }
            byte[] first = bytes(tables.get(0));
            for (int i = 1; i < tables.size(); i++) {
                assertThat(bytes(tables.get(i))).as("table of %s vs %s at index %s", names.get(i), names.get(0),
                        tables.get(0).appliedIndex()).isEqualTo(first);
            }
            return true;
        }, names + " at one common applied index");
    }

    static byte[] bytes(LeaseTable table) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            table.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    @Nullable CoordinatorNode node(String id) {
        return running.get(id);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Exception e) {
                // closing test clients
            }
        }
        new ArrayList<>(running.keySet()).forEach(this::stop);
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // temp files; the OS cleans up
        }
    }
}
