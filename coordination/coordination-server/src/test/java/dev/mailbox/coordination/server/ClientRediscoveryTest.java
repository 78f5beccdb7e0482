package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a {@link CoordinationClient} finds a new leader when the one it talks to stops answering: frozen
 * (SIGSTOP, so its connections stay open and a call to it just waits) or killed (SIGKILL).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClientRediscoveryTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** Far longer than an election: a call that waited for its deadline would show. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(40);
    private static final LeaseHolder HOLDER = new LeaseHolder("r1", "node-r1", "127.0.0.1:9");

    @Test
    @DisplayName("a call to a frozen leader is given up and retried at the new leader long before its deadline; "
            + "a call after the leader is killed succeeds at the next one")
    void frozenThenKilled() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(3).processes(true).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            try (CoordinationClient client = CoordinationClient.builder().endpoints(cluster.endpoints())
                    .callTimeout(CALL_TIMEOUT).build()) {
                client.leases().acquire("rediscover@warm", HOLDER); // the client talks to the leader now
                cluster.pause(leader);
                try {
                    long t0 = System.nanoTime();
                    Lease l = client.leases().acquire("rediscover@frozen", HOLDER);
                    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                    assertThat(l.mailboxId()).isEqualTo("rediscover@frozen");
                    // an election (300-600 ms here) plus the client's stall check; generous for a busy machine
                    assertThat(took).as("ms until the call succeeded elsewhere").isLessThan(CALL_TIMEOUT.toMillis() / 2);
                } finally {
                    cluster.resume(leader);
                }
                String next = cluster.awaitLeader(PATIENCE);
                client.leases().acquire("rediscover@warm2", HOLDER);
                cluster.kill(next);
                long t0 = System.nanoTime();
                client.leases().acquire("rediscover@killed", HOLDER);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(CALL_TIMEOUT.toMillis() / 2);
            }
        }
    }
}
