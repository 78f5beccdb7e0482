package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registries of the servers' settings ({@link CoordinatorKeys}, {@link NodeKeys}, {@link SecurityKeys}): every
 * default is one its own rule accepts, and what an untouched builder gives Ratis and the node is the registry's
 * default, so the documentation generated from the registry says what the code does.
 */
class SettingsRegistryTest {

    private static List<Setting<?>> all() {
        List<Setting<?>> all = new ArrayList<>(CoordinatorKeys.ALL);
        all.addAll(NodeKeys.ALL);
        all.addAll(SecurityKeys.NODE);
        return all;
    }

    @Test
    @DisplayName("every setting has help, and both its defaults pass its own rule")
    void defaultsAreValid() {
        for (Setting<?> s : all()) {
            assertThat(s.help()).as(s.key()).isNotBlank().doesNotContain("default");
            assertThat(s.defaultText(Settings.Profile.LIBRARY)).as(s.key()).isNotBlank();
            assertThat(s.defaultText(Settings.Profile.PROCESS)).as(s.key()).isNotBlank();
            check(s, Settings.Profile.LIBRARY);
            check(s, Settings.Profile.PROCESS);
        }
        Set<String> keys = new HashSet<>();
        for (Setting<?> s : CoordinatorKeys.ALL) {
            assertThat(keys.add(s.key())).as("one setting per key: " + s.key()).isTrue();
        }
    }

    private static <T> void check(Setting<T> s, Settings.Profile profile) {
        List<Setting<?>> known = new ArrayList<>(CoordinatorKeys.ALL);
        known.addAll(NodeKeys.ALL.stream().filter(n -> !CoordinatorKeys.ALL.contains(n) && !n.key().equals("id"))
                .toList());
        known.addAll(SecurityKeys.NODE);
        Settings defaults = Settings.builder(known.contains(s) ? known : List.of(s), profile).build();
        T value = defaults.get(s);
        if (value != null) {
            assertThat(s.problem(value, defaults::get)).as(s.key() + "'s " + profile + " default").isNull();
        }
    }

    @Test
    @DisplayName("an untouched coordinator builder gives Ratis the registry's defaults")
    void coordinatorDefaultsReachRaft(@TempDir Path dir) {
        CoordinatorNode.Builder b = CoordinatorNode.builder("n1").peer("n1", new InetSocketAddress("127.0.0.1", 7000));
        RaftProperties p = b.raftProperties(dir);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(CoordinatorKeys.ELECTION_TIMEOUT_MIN.defaultValue().toMillis()).isEqualTo(300);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(CoordinatorKeys.ELECTION_TIMEOUT_MAX.defaultValue().toMillis()).isEqualTo(600);
        assertThat(RaftServerConfigKeys.Rpc.requestTimeout(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(CoordinatorKeys.RAFT_REQUEST_TIMEOUT.defaultValue().toMillis()).isEqualTo(3_000);
        assertThat(RaftServerConfigKeys.LeaderElection.preVote(p)).isEqualTo(CoordinatorKeys.PRE_VOTE.defaultValue());
        assertThat(RaftServerConfigKeys.Snapshot.autoTriggerThreshold(p))
                .isEqualTo(CoordinatorKeys.SNAPSHOT_EVERY.defaultValue());
        assertThat(RaftServerConfigKeys.Snapshot.retentionFileNum(p))
                .isEqualTo(CoordinatorKeys.SNAPSHOT_RETENTION.defaultValue());
        assertThat(RaftServerConfigKeys.Log.segmentSizeMax(p).getSize())
                .isEqualTo(CoordinatorKeys.LOG_SEGMENT_BYTES.defaultValue());
        assertThat(RaftServerConfigKeys.Read.leaderLeaseTimeoutRatio(p))
                .isEqualTo(CoordinatorKeys.LEADER_LEASE_RATIO.defaultValue());
        Settings s = b.settingsForStart();
        assertThat(s.get(CoordinatorKeys.CLUSTER)).isEqualTo(CoordinatorKeys.CLUSTER.defaultValue()).isEqualTo("mailbox");
        assertThat(s.get(CoordinatorKeys.CONTROL_PLANE).getPort()).as("a library node takes a free port").isZero();
        assertThat(s.get(CoordinatorKeys.WARM_UP)).as("a library node starts at once").isFalse();
        assertThat(s.get(CoordinatorKeys.INITIAL_CLUSTER_STATE)).isEqualTo(CoordinatorNode.ClusterState.NEW);
        assertThat(s.get(SecurityKeys.REQUIRE_SECURITY)).isFalse();
    }

    @Test
    @DisplayName("the builder's setters reach Ratis, and the longest election timeout follows the shortest unless set")
    void settersReachRaft(@TempDir Path dir) {
        CoordinatorNode.Builder b = CoordinatorNode.builder("n1").peer("n1", new InetSocketAddress("127.0.0.1", 7000))
                .electionTimeout(Duration.ofMillis(2_000)).snapshotEvery(7).logSegmentSize(1 << 20)
                .readConsistency(ReadOperation.GET_LEASE, ReadConsistency.STALE)
                .readConsistency(ReadOperation.GET_LEASE, ReadConsistency.LINEARIZABLE);
        RaftProperties p = b.raftProperties(dir);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(4_000);
        assertThat(RaftServerConfigKeys.Rpc.requestTimeout(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .as("at least the longest election timeout").isEqualTo(4_000);
        assertThat(RaftServerConfigKeys.Snapshot.autoTriggerThreshold(p)).isEqualTo(7);
        assertThat(RaftServerConfigKeys.Log.segmentSizeMax(p).getSize()).isEqualTo(1 << 20);
        assertThat(b.settingsForStart().get(CoordinatorKeys.READ_CONSISTENCY)).containsExactly(
                Map.entry(ReadOperation.GET_LEASE, ReadConsistency.STALE),
                Map.entry(ReadOperation.GET_LEASE, ReadConsistency.LINEARIZABLE));
    }

    @Test
    @DisplayName("mailboxctl's settings reach the builder: its own defaults where a process differs, the flags' values")
    void processSettings(@TempDir Path dir) {
        Settings given = Settings.builder(CoordinatorKeys.ALL, Settings.Profile.PROCESS)
                .flag(CoordinatorKeys.ELECTION_TIMEOUT_MAX, "900").flag(CoordinatorKeys.CLUSTER, "blue").build();
        CoordinatorNode.Builder b = CoordinatorNode.builder("n1").peer("n1", new InetSocketAddress("127.0.0.1", 7000))
                .settings(given);
        RaftProperties p = b.raftProperties(dir);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .as("only the longest given: the shortest keeps its default").isEqualTo(300);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(900);
        Settings s = b.settingsForStart();
        assertThat(s.get(CoordinatorKeys.CLUSTER)).isEqualTo("blue");
        assertThat(Setting.hostPort(s.get(CoordinatorKeys.CONTROL_PLANE))).isEqualTo(CoordinatorKeys.DEFAULT_CONTROL_PLANE);
        assertThat(s.get(CoordinatorKeys.WARM_UP)).isTrue();
        assertThatThrownBy(() -> Settings.builder(CoordinatorKeys.ALL, Settings.Profile.PROCESS)
                .flag(CoordinatorKeys.ELECTION_TIMEOUT_MAX, "250").build())
                .hasMessage("--election-timeout-max-ms (key election-timeout-max-ms) must be more than the shortest "
                        + "(300 ms), was 250 ms");
        assertThatThrownBy(() -> Settings.builder(CoordinatorKeys.ALL, Settings.Profile.PROCESS)
                .flag(CoordinatorKeys.ELECTION_TIMEOUT_MIN, "2000").flag(CoordinatorKeys.RAFT_REQUEST_TIMEOUT, "3000")
                .build()).hasMessageContaining("(3000 ms) must be at least the longest election timeout (4000 ms)");
    }

    @Test
    @DisplayName("an untouched node builder starts from the registry's defaults")
    void nodeDefaults() {
        Settings s = MailboxNode.builder("node-a").settingsForStart();
        assertThat(s.get(NodeKeys.MAX_WAITING_RECEIVES)).isEqualTo(NodeKeys.MAX_WAITING_RECEIVES.defaultValue())
                .isEqualTo(10_000);
        assertThat(s.get(NodeKeys.IDLE_CLOSE)).isEqualTo(Duration.ofMinutes(5));
        assertThat(s.get(NodeKeys.LISTEN).getPort()).isZero();
        assertThat(s.get(NodeKeys.REGION)).isEmpty();
        assertThat(NodeKeys.LISTEN.processDefaultValue().getPort()).isEqualTo(9000);
        assertThatThrownBy(() -> MailboxNode.builder("node-a").maxWaitingReceives(0))
                .hasMessageContaining("maxWaitingReceives").hasMessageContaining("1000000");
        assertThatThrownBy(() -> MailboxNode.builder("node-a").idleClose(Duration.ZERO))
                .hasMessageContaining("idleClose must be positive");
    }
}
