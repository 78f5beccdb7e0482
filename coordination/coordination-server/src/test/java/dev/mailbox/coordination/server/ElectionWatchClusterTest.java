package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.impl.MailboxFollowerProbe;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The election watch on real Ratis servers: the probe reads a follower's silence and makes it stand. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ElectionWatchClusterTest {

    @Test
    @DisplayName("the probe reads a follower's silence and makes it stand; pre-vote keeps the living leader")
    void probeStands() {
        // 5 s: neither Ratis's timer nor the watch starts an election by itself while the test runs
        try (TestingCluster cluster = TestingCluster.builder().size(3).electionTimeout(Duration.ofSeconds(5)).start()) {
            String leader = cluster.awaitLeader(Duration.ofSeconds(60));
            long term = cluster.node(leader).term();
            assertThat(MailboxFollowerProbe.silence(cluster.node(leader).divisionOrNull())).isNull();
            List<String> ids = new ArrayList<>(cluster.nodeIds());
            ids.sort(null);
            String follower = ids.stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            RaftServer.Division d = cluster.node(follower).divisionOrNull();
            MailboxFollowerProbe.Silence read = MailboxFollowerProbe.silence(d);
            assertThat(read).isNotNull();
            assertThat(read.voters()).isEqualTo(3);
            assertThat(read.rank()).isEqualTo(ids.indexOf(follower));
            assertThat(read.silentMillis()).isBetween(0L, 5_000L);

            // a reading of another contact is stale: nothing happens
            assertThat(MailboxFollowerProbe.stand(d, new MailboxFollowerProbe.Silence(new Object(), 0, 0, 3)))
                    .isFalse();
            assertThat(MailboxFollowerProbe.silence(d).contact()).isSameAs(read.contact());
            // a current one makes it a candidate: its follower timer is gone
            assertThat(MailboxFollowerProbe.stand(d, read)).isTrue();
            MailboxFollowerProbe.Silence after = MailboxFollowerProbe.silence(d);
            assertThat(after == null || after.contact() != read.contact()).isTrue();
            // the others still hear from their leader: its pre-vote fails and it follows again, nobody deposed
            TestingCluster.await(Duration.ofSeconds(30), () -> MailboxFollowerProbe.silence(d) != null,
                    "the follower back to following");
            assertThat(cluster.awaitLeader(Duration.ofSeconds(5))).isEqualTo(leader);
            assertThat(cluster.node(leader).term()).isEqualTo(term);
        }
    }

    @Test
    @DisplayName("the watch stands when the leader goes silent, before Ratis's own timer would")
    void watchStands() {
        // a narrow range: the watch's turns (1,062-1,085, 1,108-1,131 and 1,154-1,177 ms of silence) nearly always
        // come before Ratis's timer, which fires between one and two of its own draws (1,000-1,200 ms) after the
        // last heartbeat (a few per cent of kills); up to three kills make a run in which Ratis's timer came first
        // every time the only way this passes without the watch
        try (TestingCluster cluster = TestingCluster.builder().size(3)
                .configure(b -> b.electionTimeout(Duration.ofMillis(1_000), Duration.ofMillis(1_200))).start()) {
            long byWatch = 0;
            for (int kill = 0; kill < 3 && byWatch == 0; kill++) {
                String leader = cluster.awaitLeader(Duration.ofSeconds(60));
                List<String> survivors = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).toList();
                long before = survivors.stream().mapToLong(id -> cluster.node(id).electionsStartedByWatch()).sum();
                cluster.kill(leader);
                String next = cluster.awaitLeader(Duration.ofSeconds(30));
                assertThat(next).isNotEqualTo(leader);
                byWatch = survivors.stream().mapToLong(id -> cluster.node(id).electionsStartedByWatch()).sum() - before;
                cluster.start(leader);
            }
            assertThat(byWatch).as("elections the watch started after a leader's death").isPositive();
        }
    }
}
