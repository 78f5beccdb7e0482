package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.server.TestingCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** mailboxctl cluster add-member / remove-member: replacing a coordinator without hand edits. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MembershipCommandsTest {

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    @DisplayName("remove a member, start it again with an empty data dir, add it back: it has the state again")
    void replaceAMember() {
        try (TestingCluster cluster = TestingCluster.start(3)) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            String endpoint = cluster.endpoint("n1") + "," + cluster.endpoint("n2");
            assertThat(run("namespaces", "create", "kept", "-c", endpoint).exitCode()).isZero();

            CliRun removed = run("cluster", "remove-member", "n3", "-c", endpoint);
            assertThat(removed.exitCode()).as(removed.err()).isZero();
            assertThat(removed.out()).contains("n1").contains("n2").doesNotContain("n3");
            cluster.kill("n3");
            cluster.wipe("n3");
            cluster.start("n3");

            CliRun malformed = run("cluster", "add-member", "n3", "-c", endpoint);
            assertThat(malformed.exitCode()).isNotZero();
            assertThat(malformed.err()).contains("expected ID=HOST:PORT");

            CliRun added = run("cluster", "add-member", "n3=" + cluster.raftAddress("n3"), "-c", endpoint);
            assertThat(added.exitCode()).as(added.err()).isZero();
            assertThat(added.out()).contains("n3").contains(cluster.raftAddress("n3"));
            cluster.awaitIdenticalState(Duration.ofSeconds(30)); // n3 copied the state, "kept" included

            CliRun status = run("cluster", "status", "-c", cluster.endpoint("n3"));
            assertThat(status.exitCode()).as(status.err()).isZero();
            assertThat(status.out()).contains("n3").contains("FOLLOWER");
        }
    }

    @Test
    @DisplayName("cluster export writes a backup; cluster import restores it into a new cluster and refuses a non-empty one")
    void exportAndImport(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        java.nio.file.Path backup = dir.resolve("backup.snap");
        try (TestingCluster old = TestingCluster.start(1)) {
            old.awaitLeader(Duration.ofSeconds(30));
            assertThat(run("namespaces", "create", "kept", "-c", old.endpoint("n1")).exitCode()).isZero();
            CliRun exported = run("cluster", "export", backup.toString(), "-c", old.endpoint("n1"));
            assertThat(exported.exitCode()).as(exported.err()).isZero();
            assertThat(exported.out()).startsWith("exported ").contains(backup.toString());
            CliRun refused = run("cluster", "import", backup.toString(), "-c", old.endpoint("n1"));
            assertThat(refused.exitCode()).isNotZero();
            assertThat(refused.err()).contains("already holds state");
        }
        try (TestingCluster fresh = TestingCluster.start(1)) {
            fresh.awaitLeader(Duration.ofSeconds(30));
            CliRun imported = run("cluster", "import", backup.toString(), "-c", fresh.endpoint("n1"));
            assertThat(imported.exitCode()).as(imported.err()).isZero();
            assertThat(imported.out()).contains("1 namespace(s), 0 lease(s), 0 node(s), 0 queue(s)");
            assertThat(run("cluster", "import", dir.resolve("missing").toString(), "-c", fresh.endpoint("n1")).err())
                    .contains("missing");
            assertThat(run("namespaces", "list", "-c", fresh.endpoint("n1")).out()).contains("kept");
        }
    }

    @Test
    @DisplayName("coordinator start refuses an unknown --initial-cluster-state")
    void badClusterState() {
        CliRun bad = run("coordinator", "start", "--id", "n1", "--initial-cluster-state", "maybe");
        assertThat(bad.exitCode()).isNotZero();
        // one form for every setting's refusal (issue 34): the flag, then the config key of the same setting
        assertThat(bad.err()).contains("--initial-cluster-state (key initial-cluster-state) must be new, existing or "
                + "replace, was 'maybe'");
    }
}
