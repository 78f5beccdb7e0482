package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A coordinator's warm-up in a throwaway cluster before it starts ({@link CoordinatorNode.Builder#warmUp}). */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class WarmUpTest {

    @Test
    @DisplayName("runs an election, writes and a leader crash to the end, then leaves no member, thread, data or held "
            + "port behind")
    void leavesNothingBehind() throws Exception {
        List<Path> dirsBefore = warmUpDirs();
        InetSocketAddress own = new InetSocketAddress("127.0.0.1", freePort());
        assertThat(WarmUp.run("test", List.of(own))).as("the warm-up ran to the end").isTrue();
        try (ServerSocket s = new ServerSocket()) {
            s.bind(own); // the node's own port, held during the warm-up, is free again for the node
        }
        assertThat(awaitNoWarmUpThreads()).as("threads of throwaway members still running").isEmpty();
        assertThat(warmUpDirs()).as("throwaway data dirs left behind").isEqualTo(dirsBefore);
    }

    @Test
    @DisplayName("a node built with warmUp(true) starts after it and serves as usual")
    void nodeStartsAfterWarmingUp(@TempDir Path dir) throws Exception {
        InetSocketAddress raft = new InetSocketAddress("127.0.0.1", freePort());
        try (CoordinatorNode node = CoordinatorNode.builder("n1").peer("n1", raft).dataDir(dir).warmUp(true).start();
                CoordinationClient client = CoordinationClient.builder()
                        .endpoint("127.0.0.1:" + node.controlPlaneAddress().getPort()).build()) {
            assertThat(awaitNoWarmUpThreads()).isEmpty();
            Lease lease = client.leases().acquire("orders@node-a", new LeaseHolder("runner-1", "node-a", "127.0.0.1:1"));
            assertThat(lease.epoch()).isPositive();
            assertThat(node.peerIds()).containsExactly("n1");
        }
    }

    /** Threads of the throwaway members (Ratis names its threads after the member), after they had time to end. */
    private static List<String> awaitNoWarmUpThreads() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<String> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                    .filter(n -> n.contains("warm-up-")).toList();
            if (left.isEmpty()) {
                return left;
            }
            Thread.sleep(50); // executor threads end on their own after close: nothing to wait on
        } while (System.nanoTime() < deadline);
        return left;
    }

    private static List<Path> warmUpDirs() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("mailbox-warm-up-")).sorted().toList();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
