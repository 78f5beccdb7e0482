package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.ReadConsistency;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The operator's settings of a coordinator: Raft timings, snapshots and read defaults. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class OperationsConfigTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Nested
    @DisplayName("the builder refuses, naming the setting and the allowed range,")
    class Validation {

        @Test
        @DisplayName("election timeouts under 50 ms, or a longest one that is not above the shortest")
        void electionTimeouts() {
            CoordinatorNode.Builder b = CoordinatorNode.builder("n1");
            assertThatThrownBy(() -> b.electionTimeout(Duration.ofMillis(40)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 50 ms, was 40 ms");
            assertThatThrownBy(() -> b.electionTimeout(Duration.ofMillis(200), Duration.ofMillis(200)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("more than the shortest (200 ms), was 200 ms");
            assertThatThrownBy(() -> b.electionTimeout(Duration.ofMillis(20), Duration.ofMillis(200)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 50 ms");
        }

        @Test
        @DisplayName("a lease ratio outside (0, 1], a snapshot retention under 1, a request timeout under the "
                + "longest election timeout")
        void others(@TempDir Path dir) {
            CoordinatorNode.Builder b = CoordinatorNode.builder("n1");
            assertThatThrownBy(() -> b.leaderLeaseRatio(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("more than 0 and at most 1, was 0.0");
            assertThatThrownBy(() -> b.leaderLeaseRatio(1.5)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> b.leaderLeaseRatio(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> b.snapshotRetention(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("snapshotRetention must be 1 or more, was 0");
            assertThatThrownBy(() -> b.raftRequestTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
            CoordinatorNode.Builder slow = CoordinatorNode.builder("n1").dataDir(dir)
                    .peer("n1", new InetSocketAddress("127.0.0.1", 1))
                    .electionTimeout(Duration.ofMillis(1_000), Duration.ofMillis(2_000))
                    .raftRequestTimeout(Duration.ofMillis(1_500));
            assertThatThrownBy(slow::start).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("raftRequestTimeout (1500 ms) must be at least the longest election timeout "
                            + "(2000 ms)");
        }

        @Test
        @DisplayName("an unknown read operation, listing the known ones")
        void operations() {
            assertThat(ReadOperation.parse("get-lease")).isEqualTo(ReadOperation.GET_LEASE);
            assertThat(ReadOperation.parse("LIST_ROUTES")).isEqualTo(ReadOperation.LIST_ROUTES);
            assertThatThrownBy(() -> ReadOperation.parse("get-leases")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unknown read operation 'get-leases'").hasMessageContaining("get-lease, ");
        }
    }

    @Test
    @DisplayName("tuned timings elect a leader, and a read that does not choose its consistency gets the "
            + "operator's default: a stale default answers on a node without a leader, a leader read does not")
    void readDefaults() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(3).configure(b -> b
                .electionTimeout(Duration.ofMillis(150), Duration.ofMillis(300)).preVote(true).leaderLeaseRatio(0.8)
                .raftRequestTimeout(Duration.ofSeconds(1)).snapshotRetention(1)
                .readConsistency(ReadOperation.GET_LEASE, ReadConsistency.STALE)).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient all = cluster.client();
            all.leases().acquire("ops@m1", new LeaseHolder("r1", "node-r1", "127.0.0.1:9"));
            String survivor = cluster.follower(PATIENCE);
            // the survivor must have applied the grant before it is left alone
            TestingCluster.await(PATIENCE, () -> cluster.node(survivor).appliedIndex()
                    >= cluster.node(leader).appliedIndex(), "the follower catches up");
            for (String id : cluster.nodeIds()) {
                if (!id.equals(survivor)) {
                    cluster.stop(id);
                }
            }
            LeaderLeases.awaitLapsed(cluster, survivor, PATIENCE);
            try (CoordinationClient alone = CoordinationClient.builder().endpoint(cluster.endpoint(survivor))
                    .callTimeout(Duration.ofSeconds(2)).maxAttempts(1).build()) {
                assertThat(alone.leases().get("ops@m1")).get()
                        .satisfies(l -> assertThat(l.runnerId()).isEqualTo("r1"));
                assertThatThrownBy(() -> alone.leases().get("ops@m1", ReadConsistency.LEADER_LEASE))
                        .isInstanceOf(CoordinationException.class)
                        .satisfies(e -> assertThat(((CoordinationException) e).reason())
                                .isEqualTo(CoordinationException.Reason.UNAVAILABLE));
                // list-leases kept the built-in default: a leader read
                assertThatThrownBy(() -> alone.leases().list("ops")).isInstanceOf(CoordinationException.class);
            }
        }
    }
}
