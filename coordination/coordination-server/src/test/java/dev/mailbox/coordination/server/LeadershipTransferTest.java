package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A leader that is stopped (not killed) hands its leadership over instead of leaving the others to time out. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LeadershipTransferTest {

    /** So long that a new leader found well within it cannot have come from an election timeout. */
    private static final Duration ELECTION = Duration.ofSeconds(6);

    @Test
    @DisplayName("a stopped leader hands over: the next leader serves long before any follower's election timeout")
    void gracefulStop() {
        try (TestingCluster cluster = TestingCluster.builder().size(3).electionTimeout(ELECTION).start()) {
            String leader = cluster.awaitLeader(Duration.ofSeconds(60));
            CoordinationClient client = cluster.client();
            client.leases().acquire("transfer@m1", new LeaseHolder("r1", "node-r1", "127.0.0.1:9"));
            long t0 = System.nanoTime();
            cluster.stop(leader);
            // without a hand-over the followers would wait at least 6 s (their shortest election timeout)
            String next = cluster.awaitLeader(ELECTION.dividedBy(2));
            assertThat(next).isNotEqualTo(leader);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(ELECTION.toMillis());
            assertThat(client.leases().get("transfer@m1")).isPresent();
        }
    }
}
