package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.server.internal.RaftGateway;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A follower forwards writes to the leader through a Ratis client; a failure of that client is not for good. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FollowerForwardingTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** Longer than the forwarding client's retries (100 attempts 50 ms apart, each up to 500 ms): see RaftGateway. */
    private static final Duration RETRIES_RUN_OUT = Duration.ofSeconds(9);
    private static final LeaseHolder HOLDER = new LeaseHolder("r1", "node-r1", "127.0.0.1:9");

    @Test
    @DisplayName("a follower whose forwarding ran out of retries (no leader for seconds) forwards again once there is one")
    void forwardsAgainAfterRunningOutOfRetries() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(3).electionTimeout(Duration.ofMillis(150)).start()) {
            String follower = cluster.follower(PATIENCE);
            List<String> others = cluster.nodeIds().stream().filter(id -> !id.equals(follower)).toList();
            // every write goes through the follower's forwarding; one short attempt each, so the writes refused
            // while it is alone keep coming
            try (CoordinationClient client = CoordinationClient.builder().endpoint(cluster.endpoint(follower))
                    .callTimeout(Duration.ofSeconds(1)).maxAttempts(1).build()) {
                forwardsAgain(cluster, follower, others, client);
            }
        }
    }

    private static void forwardsAgain(TestingCluster cluster, String follower, List<String> others,
                                      CoordinationClient client) throws Exception {
        client.leases().acquire("before@m1", HOLDER);

        others.forEach(cluster::kill);
        long until = System.nanoTime() + RETRIES_RUN_OUT.toNanos();
        int refused = 0;
        // keep forwarded writes coming until the forwarding client has run out of retries: the gateway offers
        // nothing to wait on for that, so this waits out its retry budget
        while (System.nanoTime() < until) {
            assertThatThrownBy(() -> client.leases().acquire("alone-" + System.nanoTime() + "@m1", HOLDER))
                    .isInstanceOf(CoordinationException.class);
            refused++;
        }
        assertThat(refused).isPositive();

        long restart = System.nanoTime();
        others.forEach(cluster::start);
        String leader = cluster.awaitLeader(PATIENCE);
        if (leader.equals(follower)) {
            handOver(cluster, follower, others.get(0));
        }
        TestingCluster.await(PATIENCE, () -> cluster.leader().filter(l -> !l.equals(follower)).isPresent(),
                "a leader other than " + follower);
        long elected = System.nanoTime();
        Lease after = awaitAcquire(client, "after@m1");
        System.out.printf("follower forwarding: %d writes refused while alone; a leader %d ms after the restart, "
                + "the forwarded write %d ms after that%n", refused, TimeUnit.NANOSECONDS.toMillis(elected - restart),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - elected));
        assertThat(after.epoch()).isPositive();
        assertThat(cluster.node(follower).isLeader()).as("the write was forwarded, not served by the follower")
                .isFalse();
    }

    private static Lease awaitAcquire(CoordinationClient client, String mailbox) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            try {
                return client.leases().acquire(mailbox, HOLDER);
            } catch (CoordinationException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the follower never forwarded a write again: " + e.getMessage(), e);
                }
                Thread.sleep(100); // the new leader settling; the failure, if it lasts, is what this test catches
            }
        }
    }

    private static void handOver(TestingCluster cluster, String from, String to) throws Exception {
        try (RaftClient admin = RaftClient.newBuilder().setProperties(new RaftProperties())
                .setRaftGroup(RaftGateway.group(cluster.name(), cluster.peers()))
                .setLeaderId(RaftPeerId.valueOf(from)).build()) {
            assertThat(admin.admin().transferLeadership(RaftPeerId.valueOf(to), 5_000).isSuccess()).isTrue();
        }
    }
}
