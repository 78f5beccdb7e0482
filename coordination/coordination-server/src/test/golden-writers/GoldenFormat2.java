import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.server.CoordinatorNode;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Writes a format-2 data dir (log of every command kind, holder secret hashes, + a snapshot), with the code
 * of commit ab622c1.
 */
public class GoldenFormat2 {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        Path data = Files.createTempDirectory("golden2-").resolve("n1");
        Files.createDirectories(data);
        int port;
        try (ServerSocket s = new ServerSocket(0)) { port = s.getLocalPort(); }
        InetSocketAddress raft = new InetSocketAddress("127.0.0.1", port);
        long[] at = new long[1];
        try (CoordinatorNode node = CoordinatorNode.builder("n1").cluster("golden").peer("n1", raft).dataDir(data)
                .snapshotEvery(1_000_000).start();
             CoordinationClient c = CoordinationClient.builder().endpoint("127.0.0.1:" + node.controlPlaneAddress().getPort()).build()) {
            while (!node.isLeader()) Thread.sleep(20);
            Duration ten = Duration.ofMinutes(10);
            c.namespaces().setPolicy("orders", LeasePolicy.ofMillis(600_000, 60_000, 60_000));
            c.namespaces().create("billing", LeasePolicy.ofMillis(300_000, 60_000, 30_000), Map.of("team", "payments", "tier", "gold"));
            c.nodes().register(new NodeInfo("node-a", "127.0.0.1:7101", "eu-west", "0.1.0", List.of("memory", "redis"), Map.of("rack", "r1"), false, 0), ten);
            LeaseHolder r1 = new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101", "secret-1");
            Lease orders = c.leases().acquire("orders@node-a", r1, ten);
            c.leases().renew(orders);
            // the same holder again, as a new object with the same secret: the same lease under epoch 2
            Lease again = c.leases().acquire("orders@node-a", new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101", "secret-1"), ten);
            if (again.epoch() != 2 || again.leaseId() != orders.leaseId()) throw new AssertionError("re-acquire: " + again);
            Lease billing = c.leases().acquire("billing@node-a", new LeaseHolder("runner-2", "node-a", "127.0.0.1:7101", "secret-2"), ten);
            c.leases().release(billing);
            c.leases().acquire("billing@node-a", new LeaseHolder("runner-3", "node-b", "127.0.0.1:7102"), ten);
            c.leases().acquire("audit@node-b", new LeaseHolder("runner-4", "node-b", "127.0.0.1:7102", "secret-4"), ten);
            c.leases().revoke("audit@node-b");
            c.leases().reclaim("audit@node-b");
            c.namespaces().setPolicy("brief", LeasePolicy.ofMillis(1_000, 300, 0));
            c.leases().acquire("brief@node-c", new LeaseHolder("runner-5", "node-c", "127.0.0.1:7103", "secret-5"));
            while (c.leases().get("brief@node-c").orElseThrow().state() != LeaseState.EXPIRED) Thread.sleep(50);
            at[0] = node.takeSnapshot();
            // after the snapshot: runner-1's secret must come back from the snapshot for these two to replay alike
            try {
                c.leases().acquire("orders@node-a", new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101", "not-secret-1"), ten);
                throw new AssertionError("an acquire with the wrong secret was granted");
            } catch (CoordinationException expected) {
                System.out.println("refused as expected: " + expected.getMessage());
            }
            Lease third = c.leases().acquire("orders@node-a", r1, ten);
            if (third.epoch() != 3 || third.leaseId() != orders.leaseId()) throw new AssertionError("re-acquire after snapshot: " + third);
            c.leases().acquire("plain", new LeaseHolder("runner-6", "node-a", "127.0.0.1:7101", "secret-6"), ten);
            c.namespaces().create("after-snapshot", null, Map.of("k", "v"));
            Method sm = CoordinatorNode.class.getDeclaredMethod("stateMachine");
            sm.setAccessible(true);
            Object machine = sm.invoke(node);
            Object table = machine.getClass().getMethod("snapshotTable").invoke(machine);
            Method hashes = table.getClass().getDeclaredMethod("secretHashes");
            hashes.setAccessible(true);
            System.out.println("secret hashes " + hashes.invoke(table));
            Class<?> test = Class.forName("dev.mailbox.coordination.server.StoredFormatUpgradeTest");
            Method dump = test.getDeclaredMethod("dump", table.getClass());
            dump.setAccessible(true);
            Files.writeString(out.resolve("format2.expected.txt"), (String) dump.invoke(null, table));
        }
        // only the explicit snapshot: the entries after it must come from the log
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(out.resolve("format2.zip")));
             Stream<Path> files = Files.walk(data)) {
            for (Path p : files.sorted().toList()) {
                String name = data.relativize(p).toString();
                boolean keep = !name.contains("/sm/") || name.endsWith("_" + at[0]) || name.endsWith("_" + at[0] + ".md5");
                if (Files.isRegularFile(p) && !name.endsWith("in_use.lock") && keep) {
                    z.putNextEntry(new ZipEntry(name));
                    Files.copy(p, z);
                    z.closeEntry();
                }
            }
        }
        System.out.println("snapshot at " + at[0]);
        System.out.println("data dir " + data);
    }
}
