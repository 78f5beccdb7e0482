package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.ReadConsistency;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A coordinator whose data dir was lost does not rejoin as if it had never accepted anything: the operator
 * removes it and adds it back, and it copies the state from the leader. (Before, it formatted a fresh log,
 * formed a majority with a peer that had missed writes, and acknowledged writes were gone.)
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LostDiskTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a wiped member refuses to start while the cluster counts it; removed and added back, it copies the state "
            + "and no acknowledged write is lost")
    void wipedMemberRejoinsOnlyThroughMembership() {
        try (TestingCluster cluster = TestingCluster.start(3)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("before", null, Map.of());
            cluster.kill("n3");
            for (String ns : List.of("w1", "w2", "w3")) {
                client.namespaces().create(ns, null, Map.of()); // acknowledged by n1 and n2
            }
            cluster.kill("n1");
            cluster.kill("n2");
            cluster.wipe("n2");
            cluster.start("n3"); // stale: it never saw w1..w3

            // n2 asks the others before it votes with an empty log: n3 still counts it as a member
            assertThatThrownBy(() -> cluster.start("n2")).hasMessageContaining("still counts it as a member")
                    .hasMessageContaining("remove-member n2").hasMessageContaining("add-member n2=");
            assertThat(cluster.isRunning("n2")).isFalse();

            cluster.start("n1");
            cluster.awaitLeader(PATIENCE);
            assertThat(client.namespaces().list()).extracting(NamespaceInfo::name)
                    .containsExactly("before", "w1", "w2", "w3");

            // the documented recovery: remove it, start it again empty, add it back
            Map<String, String> members = client.cluster().removeMember("n2");
            assertThat(members).containsOnlyKeys("n1", "n3");
            cluster.start("n2");
            members = client.cluster().addMember("n2", cluster.raftAddress("n2"));
            assertThat(members).containsOnlyKeys("n1", "n2", "n3");
            cluster.awaitIdenticalState(PATIENCE);
            try (CoordinationClient viaN2 = CoordinationClient.builder().endpoint(cluster.endpoint("n2")).build()) {
                assertThat(viaN2.namespaces().list(ReadConsistency.STALE)).extracting(NamespaceInfo::name)
                        .as("n2's own state").containsExactly("before", "w1", "w2", "w3");
            }
            client.namespaces().create("after", null, Map.of());
            cluster.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("membership changes are refused clearly: an existing member, an unknown one, a bad id")
    void membershipRefusals() {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            assertThatThrownBy(() -> client.cluster().addMember("n1", cluster.raftAddress("n1")))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.ALREADY_EXISTS));
            assertThatThrownBy(() -> client.cluster().removeMember("n9"))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.NOT_FOUND)).hasMessageContaining("[n1]");
            assertThatThrownBy(() -> client.cluster().removeMember("n1"))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION)).hasMessageContaining("last");
            assertThatThrownBy(() -> client.cluster().addMember("bad id", "h:1"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node id");
            assertThatThrownBy(() -> client.cluster().addMember("n7", "127.0.0.1:1"))
                    .as("a member that is not running").isInstanceOfSatisfying(CoordinationException.class,
                            e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION));
            assertThat(client.cluster().status().memberIds()).containsExactly("n1");
        }
    }
}
