import dev.mailbox.coordination.CoordinationClient;
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

/** Writes a format-1 data dir (log of every command kind + a snapshot), with the code of commit 8474aef. */
public class GoldenFormat1 {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        Path data = Files.createTempDirectory("golden1-").resolve("n1");
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
            LeaseHolder r1 = new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101");
            Lease orders = c.leases().acquire("orders@node-a", r1, ten);
            c.leases().renew(orders);
            c.leases().acquire("orders@node-a", r1, ten);
            Lease billing = c.leases().acquire("billing@node-a", new LeaseHolder("runner-2", "node-a", "127.0.0.1:7101"), ten);
            c.leases().release(billing);
            c.leases().acquire("billing@node-a", new LeaseHolder("runner-3", "node-b", "127.0.0.1:7102"), ten);
            c.leases().acquire("audit@node-b", new LeaseHolder("runner-4", "node-b", "127.0.0.1:7102"), ten);
            c.leases().revoke("audit@node-b");
            c.leases().reclaim("audit@node-b");
            c.namespaces().setPolicy("brief", LeasePolicy.ofMillis(1_000, 300, 0));
            c.leases().acquire("brief@node-c", new LeaseHolder("runner-5", "node-c", "127.0.0.1:7103"));
            while (c.leases().get("brief@node-c").orElseThrow().state() != LeaseState.EXPIRED) Thread.sleep(50);
            at[0] = node.takeSnapshot();
            c.leases().acquire("plain", new LeaseHolder("runner-6", "node-a", "127.0.0.1:7101"), ten);
            c.namespaces().create("after-snapshot", null, Map.of("k", "v"));
            Method sm = CoordinatorNode.class.getDeclaredMethod("stateMachine");
            sm.setAccessible(true);
            Object machine = sm.invoke(node);
            Object table = machine.getClass().getMethod("snapshotTable").invoke(machine);
            Class<?> test = Class.forName("dev.mailbox.coordination.server.StoredFormatUpgradeTest");
            Method dump = test.getDeclaredMethod("dump", table.getClass());
            dump.setAccessible(true);
            Files.writeString(out.resolve("format1.expected.txt"), (String) dump.invoke(null, table));
        }
        // only the explicit snapshot: the entries after it must come from the log
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(out.resolve("format1.zip")));
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
    }
}
