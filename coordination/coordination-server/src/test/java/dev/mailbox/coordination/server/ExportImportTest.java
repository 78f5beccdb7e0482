package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.Cluster;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NodeInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Backups: a cluster's state exported and imported into a new cluster, whole, with epochs kept. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExportImportTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

    @Test
    @DisplayName("an exported state imports into a new cluster on every member; holders keep their leases and epochs "
            + "never go back; a second import, junk and a non-empty cluster are refused")
    void exportAndImport() throws Exception {
        Path backup = dir.resolve("backup");
        List<Lease> leasesBefore;
        Lease held;
        Lease released;
        LeaseHolder holder = new LeaseHolder("runner-1", "node-a", "127.0.0.1:7101", "secret-1");
        try (TestingCluster old = TestingCluster.start(1)) {
            old.awaitLeader(PATIENCE);
            CoordinationClient c = old.client();
            c.namespaces().setPolicy("orders", LeasePolicy.ofMillis(600_000, 60_000, 60_000));
            c.namespaces().create("billing", null, Map.of("team", "payments"));
            c.nodes().register(new NodeInfo("node-a", "127.0.0.1:7101", "eu", "1", List.of("memory"), Map.of(), false, 0),
                    TEN_MINUTES);
            held = c.leases().acquire("orders@node-a", holder, TEN_MINUTES);
            released = c.leases().release(c.leases().acquire("billing@node-a", holder, TEN_MINUTES));
            c.leases().acquire("billing@node-a", holder, TEN_MINUTES); // epoch 2
            leasesBefore = c.leases().list("");
            Cluster.Exported exported = c.cluster().exportState(backup);
            assertThat(exported.bytes()).isEqualTo(Files.size(backup)).isPositive();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(backup))).isEqualTo("rw-------");
        }

        try (TestingCluster fresh = TestingCluster.start(3)) {
            fresh.awaitLeader(PATIENCE);
            CoordinationClient c = fresh.client();
            Path junk = Files.write(dir.resolve("junk"), new byte[] {1, 2, 3});
            assertThatThrownBy(() -> c.cluster().importState(junk)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(junk.toString()).hasMessageContaining("not a backup");
            Path empty = Files.write(dir.resolve("empty"), new byte[0]);
            assertThatThrownBy(() -> c.cluster().importState(empty)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            byte[] bytes = Files.readAllBytes(backup);
            bytes[bytes.length / 2] ^= 1; // damaged at rest: its end record's SHA-256 tells
            Path damaged = Files.write(dir.resolve("damaged"), bytes);
            assertThatThrownBy(() -> c.cluster().importState(damaged)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("damaged");
            Path cut = Files.write(dir.resolve("cut"), java.util.Arrays.copyOf(Files.readAllBytes(backup),
                    (int) Files.size(backup) - 3));
            assertThatThrownBy(() -> c.cluster().importState(cut)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("truncated");

            Cluster.Imported imported = c.cluster().importState(backup);
            assertThat(imported).isEqualTo(new Cluster.Imported(1, 2, 1, 0));
            fresh.awaitIdenticalState(PATIENCE);

            assertThat(c.leases().list("")).containsExactlyElementsOf(leasesBefore);
            assertThat(c.namespaces().get("billing").orElseThrow().labels()).containsEntry("team", "payments");
            assertThat(c.namespaces().policy("orders").ttl()).isEqualTo(Duration.ofMinutes(10));
            assertThat(c.nodes().list()).extracting(NodeInfo::id).containsExactly("node-a");
            assertThat(c.routes().list().routes()).extracting(r -> r.mailboxId() + "=" + r.address())
                    .containsExactlyInAnyOrder("orders@node-a=127.0.0.1:7101", "billing@node-a=127.0.0.1:7101");

            // the holder that still runs keeps its lease; epochs go on from where they were
            assertThat(c.leases().renew(held).state()).isEqualTo(LeaseState.ACTIVE);
            Lease again = c.leases().acquire("orders@node-a", holder, TEN_MINUTES);
            assertThat(again.epoch()).isEqualTo(held.epoch() + 1);
            assertThat(c.leases().get("billing@node-a").orElseThrow().epoch()).isEqualTo(released.epoch() + 1);

            // the same file again: it made this state, answered as done; another file is refused
            assertThat(c.cluster().importState(backup).namespaces()).isEqualTo(1);
            Path other = dir.resolve("other");
            c.cluster().exportState(other);
            assertThatThrownBy(() -> c.cluster().importState(other))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION))
                    .hasMessageContaining("already holds state");
            fresh.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("a state larger than gRPC's and Ratis's 4 MiB defaults exports and imports, in chunks")
    void largeState() throws Exception {
        Map<String, String> labels = new HashMap<>();
        for (int i = 0; i < CoordinationLimits.MAX_LABELS; i++) {
            labels.put("k" + i, "v".repeat(CoordinationLimits.MAX_LABEL_VALUE_LENGTH));
        }
        Path backup = dir.resolve("large");
        try (TestingCluster old = TestingCluster.start(1)) {
            old.awaitLeader(PATIENCE);
            CoordinationClient c = old.client();
            for (int i = 0; i < 200; i++) { // about 6.5 MB
                c.namespaces().create("ns-" + i, null, labels);
            }
            c.cluster().exportState(backup);
        }
        assertThat(Files.size(backup)).isGreaterThan(6_000_000);
        try (TestingCluster fresh = TestingCluster.start(3)) {
            fresh.awaitLeader(PATIENCE);
            assertThat(fresh.client().cluster().importState(backup).namespaces()).isEqualTo(200);
            fresh.awaitIdenticalState(PATIENCE);
            assertThat(fresh.client().namespaces().list()).hasSize(200);
        }
    }
}
