package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A coordinator's data dir holds the whole state (holders' secret hashes, queues' attributes): its dirs are
 * {@code 0700} and its files {@code 0600}, Raft log segments and snapshots included, however loose the process's
 * umask (issue 30, finding 7: they were created world-readable).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DataDirPermissionsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    @DisplayName("the data dir, its Raft log, metadata and snapshots are the owner's alone")
    void ownerOnly() throws Exception {
        Path data = Files.createDirectories(dir.resolve("n1"));
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x")); // as a 022 umask makes it
        int raft;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            raft = s.getLocalPort();
        }
        try (CoordinatorNode node = CoordinatorNode.builder("n1").peer("n1", new InetSocketAddress("127.0.0.1", raft))
                .dataDir(data).logSegmentSize(64 << 10).start();
             CoordinationClient client = CoordinationClient.builder()
                     .endpoint("127.0.0.1:" + node.controlPlaneAddress().getPort()).build()) {
            TestingCluster.await(PATIENCE, node::isLeader, "n1 leads");
            for (int i = 0; i < 200; i++) { // several log segments of 64 KiB
                client.namespaces().create("ns-" + i, null, Map.of("k", "v".repeat(500)));
            }
            client.leases().acquire("ns-1@m", new LeaseHolder("r1", "node-a", "127.0.0.1:9", "secret"));
            assertThat(node.takeSnapshot()).isPositive();

            TestingCluster.await(PATIENCE, () -> loose(data).isEmpty(), "every file 0600 and dir 0700, not "
                    + loose(data));
            List<Path> files = tree(data);
            assertThat(files).as("log segments and a snapshot are there")
                    .anyMatch(p -> p.getFileName().toString().startsWith("log_"))
                    .anyMatch(p -> p.getFileName().toString().startsWith("snapshot."));
        }
    }

    private static List<String> loose(Path root) {
        return tree(root).stream().filter(Files::exists).filter(p -> {
            try {
                String perms = PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
                return !perms.equals(Files.isDirectory(p) ? "rwx------" : "rw-------");
            } catch (java.io.IOException e) {
                return false; // gone meanwhile
            }
        }).map(p -> root.relativize(p) + " " + permissions(p)).toList();
    }

    private static String permissions(Path p) {
        try {
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
        } catch (java.io.IOException e) {
            return "gone";
        }
    }

    private static List<Path> tree(Path root) {
        try (Stream<Path> all = Files.walk(root)) {
            return all.toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
