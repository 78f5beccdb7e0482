package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.NamespaceInfo;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A coordinator whose Raft server stops under it (Ratis closes a division by itself after an unexpected
 * error, as it did after an OutOfMemoryError) stops serving and says so; it never goes on reporting itself
 * leader while answering nothing. (Before, it kept reporting LEADER in status and metrics while every call
 * failed with "RAFT is closed", until restarted.)
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FatalErrorTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a leader whose Raft server stops by itself reports FAILED, hands leadership on, answers UNAVAILABLE "
            + "with the reason, and tells the application")
    void noZombieLeader() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<Throwable> fatal = new CopyOnWriteArrayList<>();
        try (TestingCluster cluster = TestingCluster.builder().size(3)
                .configure(b -> b.meterRegistry(registry).onFatal(fatal::add)).start()) {
            String victim = cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("before", null, Map.of());

            RaftServer server = cluster.node(victim).raftServer();
            for (var groupId : server.getGroupIds()) {
                server.getDivision(groupId).close(); // what Ratis does when its log worker or updater fails
            }

            TestingCluster.await(PATIENCE, () -> !fatal.isEmpty(), "the application is told");
            assertThat(fatal).hasSize(1);
            assertThat(cluster.node(victim).role()).isEqualTo("FAILED");
            assertThat(cluster.node(victim).isLeader()).isFalse();
            assertThat(cluster.node(victim).fault()).contains("stopped by itself").contains("must be restarted");
            ClusterStatus status = cluster.status(victim).orElseThrow();
            assertThat(status.role()).isEqualTo("FAILED");
            assertThat(status.isLeader()).isFalse();
            assertThat(status.fault()).contains("stopped by itself");
            assertThat(registry.get("mailbox.coordinator.fault").tag("coordinator", victim).tag("kind", "fatal")
                    .gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("mailbox.coordinator.raft.role").tag("coordinator", victim).tag("role", "LEADER")
                    .gauge().value()).isEqualTo(0.0);

            try (CoordinationClient direct = CoordinationClient.builder().endpoint(cluster.endpoint(victim))
                    .callTimeout(Duration.ofSeconds(2)).build()) {
                assertThatThrownBy(() -> direct.namespaces().list())
                        .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                                .isEqualTo(CoordinationException.Reason.UNAVAILABLE))
                        .hasMessageContaining("coordinator " + victim + " is not serving");
            }

            String next = cluster.awaitLeader(PATIENCE);
            assertThat(next).isNotEqualTo(victim);
            client.namespaces().create("after", null, Map.of());
            assertThat(client.namespaces().list()).extracting(NamespaceInfo::name).containsExactly("after", "before");
        }
    }
}
