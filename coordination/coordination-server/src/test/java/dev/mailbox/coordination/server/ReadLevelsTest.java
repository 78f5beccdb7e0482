package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.ReadConsistency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The three read levels, told apart on a leader whose followers were frozen (SIGSTOP of their processes:
 * the leader is cut off from a majority, and its leader lease still runs for a while).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ReadLevelsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** Long enough that the leader lease (0.9 of it) outlasts the first reads after the freeze on a busy machine. */
    private static final Duration ELECTION = Duration.ofSeconds(3);

    @Test
    @DisplayName("a leader cut off from both followers answers LEADER_LEASE from its lease and STALE from its "
            + "state, but never LINEARIZABLE; with the followers back, all three answer")
    void isolatedLeader() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(3).processes(true).electionTimeout(ELECTION)
                .start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient all = cluster.client();
            all.leases().acquire("levels@m1", new LeaseHolder("r1", "node-r1", "127.0.0.1:9"));
            List<String> followers = new ArrayList<>(cluster.nodeIds());
            followers.remove(leader);
            try (CoordinationClient atLeader = single(cluster.endpoint(leader));
                 CoordinationClient atFollower = single(cluster.endpoint(followers.get(0)))) {
                for (ReadConsistency level : ReadConsistency.values()) {
                    assertThat(atLeader.leases().get("levels@m1", level)).as(level + " at the leader").isPresent();
                    assertThat(atFollower.leases().get("levels@m1", level)).as(level + " through a follower")
                            .isPresent();
                }

                followers.forEach(cluster::pause);
                long frozen = System.nanoTime();
                try {
                    boolean leased;
                    try {
                        leased = atLeader.leases().get("levels@m1", ReadConsistency.LEADER_LEASE).isPresent();
                    } catch (CoordinationException e) {
                        leased = false;
                    }
                    long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozen);
                    if (elapsed < ELECTION.toMillis() / 3) {
                        // well inside the lease (2.7 s): the leader answers from its own state
                        assertThat(leased).as("LEADER_LEASE read %d ms after the freeze", elapsed).isTrue();
                    }
                    assertThat(atLeader.leases().get("levels@m1", ReadConsistency.STALE)).isPresent();
                    // the lease may still hold, but a linearizable read needs a majority to say it still leads
                    assertThatThrownBy(() -> atLeader.leases().get("levels@m1", ReadConsistency.LINEARIZABLE))
                            .isInstanceOf(CoordinationException.class)
                            .satisfies(e -> assertThat(((CoordinationException) e).reason())
                                    .isEqualTo(CoordinationException.Reason.UNAVAILABLE));
                    assertThatThrownBy(() -> atLeader.routes().list(ReadConsistency.LINEARIZABLE))
                            .isInstanceOf(CoordinationException.class);
                } finally {
                    followers.forEach(cluster::resume);
                }
                String after = cluster.awaitLeader(PATIENCE);
                try (CoordinationClient atNewLeader = single(cluster.endpoint(after))) {
                    TestingCluster.await(PATIENCE, () -> {
                        try {
                            return atNewLeader.leases().get("levels@m1", ReadConsistency.LINEARIZABLE).isPresent();
                        } catch (CoordinationException e) {
                            return false;
                        }
                    }, "a linearizable read once a majority is back");
                }
            }
        }
    }

    @Test
    @DisplayName("a leader cut off from both followers, once its lease lapsed, answers neither a LEADER_LEASE read nor "
            + "a renewal, though Ratis's read index alone would (it skips its heartbeat round when a majority already "
            + "acknowledged the commit index)")
    void lapsedLeaseAnswersNothing() throws Exception {
        // a 30 ms lease (0.01 of 3 s): reads go through the read index, and the leader leads on for seconds after
        // losing its followers, until it notices
        try (TestingCluster cluster = TestingCluster.builder().size(3).electionTimeout(ELECTION)
                .configure(b -> b.leaderLeaseRatio(0.01)).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            try (CoordinationClient atLeader = single(cluster.endpoint(leader))) {
                Lease lease = atLeader.leases().acquire("lapsed@m1", new LeaseHolder("r1", "node-r1", "127.0.0.1:9"));
                // read-index rounds that a majority acknowledges at the current commit index
                for (int i = 0; i < 3; i++) {
                    assertThat(atLeader.leases().get("lapsed@m1", ReadConsistency.LEADER_LEASE)).isPresent();
                    atLeader.leases().renew(lease);
                }
                for (String id : cluster.nodeIds()) {
                    if (!id.equals(leader)) {
                        cluster.kill(id);
                    }
                }
                LeaderLeases.awaitLapsed(cluster, leader, PATIENCE);
                assertThatThrownBy(() -> atLeader.leases().renew(lease)).as("a renewal without a majority")
                        .isInstanceOfSatisfying(CoordinationException.class,
                                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.UNAVAILABLE));
                assertThatThrownBy(() -> atLeader.leases().get("lapsed@m1", ReadConsistency.LEADER_LEASE))
                        .as("a LEADER_LEASE read without a majority")
                        .isInstanceOfSatisfying(CoordinationException.class,
                                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.UNAVAILABLE));
            }
        }
    }

    private static CoordinationClient single(String endpoint) {
        return CoordinationClient.builder().endpoint(endpoint).callTimeout(Duration.ofSeconds(8)).maxAttempts(1)
                .build();
    }
}
