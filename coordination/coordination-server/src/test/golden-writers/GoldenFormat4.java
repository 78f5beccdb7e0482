import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.QueueChange;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.server.CoordinatorNode;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Writes a format-4 data dir (queue records: creates, updates, a delete, in the snapshot and in the log after
 * it, beside some leases, a node and a namespace), with the code of the commit that introduced format 4.
 */
public class GoldenFormat4 {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        Path data = Files.createTempDirectory("golden4-").resolve("n1");
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
            c.namespaces().create("billing", LeasePolicy.ofMillis(300_000, 60_000, 30_000), Map.of("team", "payments"));
            c.nodes().register(new NodeInfo("node-a", "127.0.0.1:7101", "eu-west", "0.1.0", List.of("memory"), Map.of(), false, 0), ten);
            Lease orders = c.leases().acquire("orders", new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101", "secret-1"), ten);
            // queues before the snapshot: given times, coordinator times, attributes, tags, changes, a delete
            c.queues().createIfAbsent(new QueueInfo("orders-dlq", Map.of(), Map.of(), 1_700_000_000_000L, 1_700_000_000_000L));
            c.queues().createIfAbsent(new QueueInfo("orders", Map.of("VisibilityTimeout", "45", "RedrivePolicy",
                    "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":5}"),
                    Map.of("team", "shop", "env", "prod"), 1_700_000_001_000L, 1_700_000_001_000L));
            c.queues().createIfAbsent(new QueueInfo("scratch", Map.of("DelaySeconds", "5"), Map.of(), 0, 0));
            c.queues().update("orders", new QueueChange(Map.of("DelaySeconds", "10"), Set.of(), Map.of("cost-centre", "42"),
                    Set.of("env"), 1_700_000_002_000L));
            c.queues().delete("scratch");
            at[0] = node.takeSnapshot();
            // after the snapshot: these apply to the records the snapshot holds
            c.queues().update("orders", new QueueChange(Map.of(), Set.of("VisibilityTimeout"), Map.of("owner", "ops"),
                    Set.of(), 1_700_000_003_000L));
            c.queues().update("orders-dlq", new QueueChange(Map.of(), Set.of(), Map.of("kind", "dlq"), Set.of(), 0));
            c.queues().createIfAbsent(new QueueInfo("payments", Map.of("MaximumMessageSize", "1024"), Map.of("team", "pay"),
                    1_700_000_004_000L, 1_700_000_004_000L));
            c.queues().createIfAbsent(new QueueInfo("orders", Map.of(), Map.of(), 1, 1)); // exists: changes nothing
            c.leases().release(orders);
            Method sm = CoordinatorNode.class.getDeclaredMethod("stateMachine");
            sm.setAccessible(true);
            Object machine = sm.invoke(node);
            Object table = machine.getClass().getMethod("snapshotTable").invoke(machine);
            Class<?> test = Class.forName("dev.mailbox.coordination.server.StoredFormatUpgradeTest");
            Method dump = test.getDeclaredMethod("dump", table.getClass());
            dump.setAccessible(true);
            Files.writeString(out.resolve("format4.expected.txt"), (String) dump.invoke(null, table));
        }
        // only the explicit snapshot: the entries after it must come from the log
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(out.resolve("format4.zip")));
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
