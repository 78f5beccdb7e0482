package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.ReadConsistency;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A coordinator whose disk fills up stops serving with a clear fault in its status and metrics, and
 * comes back by itself once space is freed, with every acknowledged write. (Before, a follower at ENOSPC
 * stopped applying for good while it went on reporting FOLLOWER.) Each node's data dir is a small tmpfs,
 * so the test needs root; it is skipped with a message otherwise.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DiskFullTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** The largest labels a namespace may have: about 32 KiB per log entry. */
    private static final Map<String, String> LABELS = largestLabels();

    private static Map<String, String> largestLabels() {
        Map<String, String> labels = new java.util.HashMap<>();
        for (int i = 0; i < dev.mailbox.coordination.CoordinationLimits.MAX_LABELS; i++) {
            labels.put("k" + i, "v".repeat(dev.mailbox.coordination.CoordinationLimits.MAX_LABEL_VALUE_LENGTH));
        }
        return labels;
    }

    @Test
    @DisplayName("a follower and then the leader run out of disk: each stops serving, says why, and rejoins by itself "
            + "when space returns; no acknowledged write is lost")
    void fullDisks() throws Exception {
        Assumptions.assumeTrue(canMount(), "needs root and tmpfs (mount -t tmpfs) to give a node a small disk");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<Path> mounts = new ArrayList<>();
        try (TestingCluster cluster = TestingCluster.builder().size(3).configure(b -> b.meterRegistry(registry))
                .start()) {
            try {
                cluster.awaitLeader(PATIENCE);
                for (String id : cluster.nodeIds()) { // each on a 32 MiB disk of its own, state kept
                    cluster.stop(id);
                    mounts.add(moveToTmpfs(cluster.dataDir(id)));
                    cluster.start(id);
                }
                cluster.awaitLeader(PATIENCE);
                CoordinationClient client = cluster.client();
                List<String> acknowledged = new ArrayList<>();
                create(client, "before", acknowledged);

                String follower = cluster.follower(PATIENCE);
                fillAndRecover(cluster, registry, follower, client, acknowledged, "f");

                String leader = cluster.awaitLeader(PATIENCE);
                fillAndRecover(cluster, registry, leader, client, acknowledged, "l");
                assertThat(cluster.awaitLeader(PATIENCE)).as("leadership moved on").isNotEqualTo(leader);
            } finally {
                for (String id : cluster.nodeIds()) {
                    if (cluster.isRunning(id)) {
                        cluster.stop(id);
                    }
                }
                for (Path m : mounts) {
                    run("umount", "-l", m.toString());
                }
            }
        }
    }

    private static void fillAndRecover(TestingCluster cluster, SimpleMeterRegistry registry, String victim,
                                       CoordinationClient client, List<String> acknowledged, String prefix)
            throws Exception {
        Path filler = cluster.dataDir(victim).resolve("filler");
        fill(filler);
        // writes go on (the other two are a majority) until the victim's log needs room it cannot get: its
        // open segment was preallocated, so that takes up to a few MiB of entries
        for (int i = 0; cluster.node(victim).fault() == null; i++) {
            assertThat(i).as(victim + " still reports no fault after " + i + " large writes").isLessThan(2_000);
            create(client, prefix + i, acknowledged);
        }
        ClusterStatus status = cluster.status(victim).orElseThrow();
        assertThat(status.role()).isEqualTo("FAILED");
        assertThat(status.fault()).contains("cannot be written").contains("No space left on device")
                .contains("restarts its Raft server by itself");
        assertThat(fault(registry, victim)).as("mailbox.coordinator.fault{kind=disk}").isEqualTo(1.0);
        try (CoordinationClient direct = CoordinationClient.builder().endpoint(cluster.endpoint(victim))
                .callTimeout(Duration.ofSeconds(2)).build()) {
            assertThatThrownBy(() -> direct.namespaces().create("refused-" + prefix, null, Map.of()))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.UNAVAILABLE))
                    .hasMessageContaining("not serving").hasMessageContaining("No space left on device");
            assertThatThrownBy(() -> direct.namespaces().list(ReadConsistency.STALE))
                    .hasMessageContaining("not serving");
        }

        Files.delete(filler);
        TestingCluster.await(PATIENCE, () -> cluster.node(victim).fault() == null, victim + " serves again");
        assertThat(fault(registry, victim)).isEqualTo(0.0);
        cluster.awaitIdenticalState(PATIENCE);
        try (CoordinationClient direct = CoordinationClient.builder().endpoint(cluster.endpoint(victim)).build()) {
            assertThat(direct.namespaces().list(ReadConsistency.STALE)).extracting(NamespaceInfo::name)
                    .as("the victim's own state").containsExactlyInAnyOrderElementsOf(acknowledged);
        }
    }

    private static void create(CoordinationClient client, String name, List<String> acknowledged) {
        try {
            client.namespaces().create(name, null, LABELS);
        } catch (CoordinationException e) {
            // the leader's disk filled while it answered: the client retried on the new leader a create the
            // old one had committed (creates carry no request id to tell a retry from a second create)
            assertThat(e.reason()).as(e.getMessage()).isEqualTo(CoordinationException.Reason.ALREADY_EXISTS);
        }
        acknowledged.add(name);
    }

    private static double fault(SimpleMeterRegistry registry, String node) {
        return registry.get("mailbox.coordinator.fault").tag("coordinator", node).tag("kind", "disk").gauge().value();
    }

    private static void fill(Path filler) {
        byte[] chunk = new byte[1 << 16];
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(chunk);
            }
        } catch (IOException full) {
            assertThat(full).hasMessageContaining("No space left on device");
        }
    }

    /** Mounts a 32 MiB tmpfs over a node's (stopped) data dir, keeping what was in it. */
    private static Path moveToTmpfs(Path dir) throws Exception {
        Path saved = Files.createTempDirectory("disk-full-saved");
        run("cp", "-a", dir + "/.", saved.toString());
        run("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", dir.toString());
        run("cp", "-a", saved + "/.", dir.toString());
        run("rm", "-rf", saved.toString());
        return dir;
    }

    private static boolean canMount() {
        try {
            Path probe = Files.createTempDirectory("tmpfs-probe");
            try {
                return exec("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.toString()) == 0
                        && exec("umount", probe.toString()) == 0;
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (Exception e) {
            return false;
        }
    }

    private static void run(String... command) throws Exception {
        assertThat(exec(command)).as(String.join(" ", command)).isZero();
    }

    private static int exec(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
