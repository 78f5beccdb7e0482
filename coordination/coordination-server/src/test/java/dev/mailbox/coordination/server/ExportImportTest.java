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
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Backups: a cluster's state exported and imported into a new cluster, whole, with epochs kept. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExportImportTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

    @Test
    @DisplayName("an exported state imports into a new cluster on every member; holders keep their leases and epochs "
            + "never go back; a second import, junk and a non-empty cluster are refused")
    void exportAndImport() {
        byte[] backup;
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
            backup = c.cluster().exportState();
            assertThat(backup).isNotEmpty();
        }

        try (TestingCluster fresh = TestingCluster.start(3)) {
            fresh.awaitLeader(PATIENCE);
            CoordinationClient c = fresh.client();
            assertThatThrownBy(() -> c.cluster().importState(new byte[] {1, 2, 3}))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.INVALID_ARGUMENT)).hasMessageContaining("snapshot");
            assertThatThrownBy(() -> c.cluster().importState(new byte[0])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must not be empty");

            Cluster.Imported imported = c.cluster().importState(backup);
            assertThat(imported).isEqualTo(new Cluster.Imported(1, 2, 1));
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

            assertThatThrownBy(() -> c.cluster().importState(backup))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION))
                    .hasMessageContaining("already holds state");
            fresh.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("a state larger than gRPC's and Ratis's 4 MiB defaults exports and imports")
    void largeState() {
        Map<String, String> labels = new HashMap<>();
        for (int i = 0; i < CoordinationLimits.MAX_LABELS; i++) {
            labels.put("k" + i, "v".repeat(CoordinationLimits.MAX_LABEL_VALUE_LENGTH));
        }
        byte[] backup;
        try (TestingCluster old = TestingCluster.start(1)) {
            old.awaitLeader(PATIENCE);
            CoordinationClient c = old.client();
            for (int i = 0; i < 200; i++) { // about 6.5 MB
                c.namespaces().create("ns-" + i, null, labels);
            }
            backup = c.cluster().exportState();
        }
        assertThat(backup.length).isGreaterThan(6_000_000);
        try (TestingCluster fresh = TestingCluster.start(3)) {
            fresh.awaitLeader(PATIENCE);
            assertThat(fresh.client().cluster().importState(backup).namespaces()).isEqualTo(200);
            fresh.awaitIdenticalState(PATIENCE);
            assertThat(fresh.client().namespaces().list()).hasSize(200);
        }
    }
}
