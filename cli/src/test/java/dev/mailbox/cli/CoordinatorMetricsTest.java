package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.TestingCluster;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The coordinator's operational meters (RFC-038's list) as Prometheus scrapes them from a running 3-node
 * cluster's {@code /metrics}: each one is there, and moves when what it measures happens.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoordinatorMetricsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("leader changes count on the survivors of a crashed leader; writes add commit-latency samples in "
            + "histogram buckets; a snapshot counts; the leader sees a dead follower fall behind")
    void metersMove() throws Exception {
        try (MetricsEndpoint endpoint = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0));
             TestingCluster cluster = TestingCluster.builder().size(3)
                     .configure(b -> b.meterRegistry(endpoint.registry())).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("metrics-0", null, Map.of());
            PrometheusText before = PrometheusText.scrape(endpoint);

            for (String id : cluster.nodeIds()) {
                String c = "coordinator=" + id;
                assertThat(before.value("mailbox_coordinator_raft_leader_changes_total", c)).as(id + " saw the election")
                        .isGreaterThanOrEqualTo(1);
                assertThat(before.value("mailbox_coordinator_cluster_size", c)).isEqualTo(3);
                assertThat(before.value("mailbox_coordinator_raft_last_log_index", c))
                        .isGreaterThanOrEqualTo(before.value("mailbox_coordinator_raft_applied_index", c));
                assertThat(before.value("mailbox_coordinator_snapshots_total", c)).isZero();
                assertThat(before.value("mailbox_coordinator_snapshot_failures_total", c)).isZero();
                assertThat(before.value("mailbox_coordinator_snapshot_duration_seconds_count", c)).isZero();
                assertThat(before.value("mailbox_coordinator_snapshot_index", c)).isEqualTo(-1);
                assertThat(before.value("mailbox_coordinator_snapshot_every", c)).isEqualTo(10_000);
                assertThat(before.value("mailbox_coordinator_raft_entries_since_snapshot", c))
                        .isEqualTo(before.value("mailbox_coordinator_raft_applied_index", c));
                assertThat(before.count("mailbox_coordinator_raft_commit_seconds_bucket", c))
                        .as("commit latency buckets, for histogram_quantile").isGreaterThan(10);
                assertThat(before.count("mailbox_coordinator_raft_follower_lag", c)).as("a gauge per other member")
                        .isEqualTo(2);
            }
            String l = "coordinator=" + leader;
            assertThat(sum(before, "mailbox_controlplane_requests_seconds_count", "method=\"CreateNamespace\"",
                    "status=\"OK\"")).as("the create, counted where it arrived").isGreaterThanOrEqualTo(1);
            assertThat(before.count("mailbox_controlplane_requests_seconds_bucket", "method=CreateNamespace"))
                    .as("control-plane durations have buckets").isGreaterThan(10);

            // writes: one commit-latency sample each on the leader, counted in the +Inf bucket as well
            double commits = before.value("mailbox_coordinator_raft_commit_seconds_count", l);
            for (int i = 1; i <= 5; i++) {
                client.namespaces().create("metrics-" + i, null, Map.of());
            }
            PrometheusText written = PrometheusText.scrape(endpoint);
            assertThat(written.value("mailbox_coordinator_raft_commit_seconds_count", l)).isGreaterThanOrEqualTo(commits + 5);
            assertThat(written.value("mailbox_coordinator_raft_commit_seconds_bucket", l, "le=+Inf"))
                    .isEqualTo(written.value("mailbox_coordinator_raft_commit_seconds_count", l));
            assertThat(written.value("mailbox_coordinator_raft_commit_seconds_sum", l)).isPositive();
            for (String follower : cluster.nodeIds()) {
                if (!follower.equals(leader)) {
                    assertThat(written.value("mailbox_coordinator_raft_commit_seconds_count", "coordinator=" + follower))
                            .as("only the leader times commits").isZero();
                }
            }

            // a snapshot counts, and takes its duration
            long index = cluster.node(leader).takeSnapshot();
            PrometheusText snapped = PrometheusText.scrape(endpoint);
            assertThat(snapped.value("mailbox_coordinator_snapshots_total", l)).isEqualTo(1);
            assertThat(snapped.value("mailbox_coordinator_snapshot_duration_seconds_count", l)).isEqualTo(1);
            assertThat(snapped.value("mailbox_coordinator_snapshot_index", l)).isEqualTo(index);
            assertThat(snapped.value("mailbox_coordinator_raft_entries_since_snapshot", l))
                    .isEqualTo(snapped.value("mailbox_coordinator_raft_applied_index", l) - index);

            // the leader crashes: each survivor counts the new leader
            List<String> survivors = new ArrayList<>(cluster.nodeIds());
            survivors.remove(leader);
            double[] changes = new double[survivors.size()];
            for (int i = 0; i < survivors.size(); i++) {
                changes[i] = snapped.value("mailbox_coordinator_raft_leader_changes_total", "coordinator=" + survivors.get(i));
            }
            cluster.kill(leader);
            String next = cluster.awaitLeader(PATIENCE);
            assertThat(next).isNotEqualTo(leader);
            client.namespaces().create("after-failover", null, Map.of());
            TestingCluster.await(PATIENCE, () -> {
                PrometheusText now = scrape(endpoint);
                for (int i = 0; i < survivors.size(); i++) {
                    if (now.value("mailbox_coordinator_raft_leader_changes_total", "coordinator=" + survivors.get(i))
                            < changes[i] + 1) {
                        return false;
                    }
                }
                return true;
            }, "each survivor counts the new leader");
            PrometheusText after = PrometheusText.scrape(endpoint);
            assertThat(after.count("mailbox_coordinator_raft_leader_changes_total", "coordinator=" + leader))
                    .as("a crashed node's meters are gone").isZero();

            // the new leader sees the dead member fall behind by every write committed without it
            String n = "coordinator=" + next;
            for (int i = 0; i < 20; i++) {
                client.namespaces().create("lag-" + i, null, Map.of());
            }
            TestingCluster.await(PATIENCE, () -> scrape(endpoint).value("mailbox_coordinator_raft_follower_lag", n,
                    "follower=" + leader) >= 20, "the leader's lag of the dead member grows with the writes");
            String alive = survivors.get(0).equals(next) ? survivors.get(1) : survivors.get(0);
            TestingCluster.await(PATIENCE, () -> scrape(endpoint).value("mailbox_coordinator_raft_follower_lag", n,
                    "follower=" + alive) < 20, "the live follower keeps up");
            assertThat(Double.isNaN(scrape(endpoint).value("mailbox_coordinator_raft_follower_lag",
                    "coordinator=" + alive, "follower=" + next))).as("a follower does not know lags").isTrue();
        }
    }

    /** The sum of a metric's series over every coordinator (a request counts on whichever node it reached). */
    private static double sum(PrometheusText t, String name, String... labels) {
        return t.series().entrySet().stream().filter(e -> e.getKey().startsWith(name + "{")
                && java.util.Arrays.stream(labels).allMatch(e.getKey()::contains))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    private static PrometheusText scrape(MetricsEndpoint endpoint) {
        try {
            return PrometheusText.scrape(endpoint);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
