package dev.mailbox.samples.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.JedisPooled;

/**
 * The cluster samples on a real coordinator (TestingCluster, on loopback) and two mailbox nodes that keep their
 * mailboxes in one real Redis, as {@code mailboxctl node start --backend redis://...} does.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoordinatedPricingTest {

    private RedisServerProcess redis;
    private JedisPooled jedis;
    private TestingCluster cluster;
    private CoordinationClient coordinator;
    private MailboxNode nodeA;
    private MailboxNode nodeB;

    @BeforeEach
    void start() {
        redis = RedisServerProcess.start();
        jedis = new JedisPooled(redis.uri());
        MailboxBackend onRedis = new MailboxBackend() {
            @Override
            public Mailbox<byte[]> open(String mailboxId) {
                return RedisMailbox.builder(mailboxId, Codec.bytes()).client(jedis).build();
            }

            @Override
            public boolean shared() {
                return true;
            }
        };
        cluster = TestingCluster.start(1);
        coordinator = cluster.client();
        nodeA = MailboxNode.builder("node-a").coordinator(coordinator).backend(onRedis).start();
        nodeB = MailboxNode.builder("node-b").coordinator(coordinator).backend(onRedis).start();
        coordinator.namespaces().create("pricing",
                new LeasePolicy(Duration.ofSeconds(4), Duration.ofSeconds(1), Duration.ofSeconds(1)), Map.of());
    }

    @AfterEach
    void stop() {
        nodeB.close();
        nodeA.close();
        cluster.close();
        jedis.close();
        redis.close();
    }

    @Test
    void aCallThroughTheOtherNodeIsAnsweredBeforeAndAfterATakeover() {
        LeasedRunner r1 = CoordinatedPricing.runner(coordinator, "r1", "node-a", nodeA.address());
        LeasedRunner r2 = null;
        try (MainLoopClient<Order, Quote> caller = CoordinatedPricing.caller(nodeB.address())) {
            assertThat(caller.callAndWait(new Order("o-1", "beans", 2), Duration.ofSeconds(30)))
                    .isEqualTo(new Quote("o-1", 500));
            Lease first = coordinator.leases().get("pricing").orElseThrow();
            assertThat(first.runnerId()).isEqualTo("r1");

            r2 = CoordinatedPricing.runner(coordinator, "r2", "node-b", nodeB.address());
            assertThat(r2.state()).isNotEqualTo(LeasedRunner.State.RUNNING);
            r1.close(); // releases the lease: r2, waiting for it, takes over
            LeasedRunner second = r2;
            TestingCluster.await(Duration.ofSeconds(30), () -> second.state() == LeasedRunner.State.RUNNING,
                    "r2 takes over");

            assertThat(caller.callAndWait(new Order("o-2", "rice", 1), Duration.ofSeconds(30)))
                    .isEqualTo(new Quote("o-2", 250));
            Lease taken = coordinator.leases().get("pricing").orElseThrow();
            assertThat(taken.runnerId()).isEqualTo("r2");
            assertThat(taken.epoch()).as("every grant fences the ones before").isGreaterThan(first.epoch());
        } finally {
            r1.close();
            if (r2 != null) {
                r2.close();
            }
        }
    }

    @Test
    void aPlainMailboxSentToThroughOneNodeIsReceivedThroughTheOther() {
        try (Mailbox<Order> viaB = Audit.mailbox(nodeB.address()); Mailbox<Order> viaA = Audit.mailbox(nodeA.address())) {
            viaB.send(new Order("o-3", "tea", 1));

            List<Message<Order>> got = viaA.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10)));

            assertThat(got).extracting(Message::body).containsExactly(new Order("o-3", "tea", 1));
            got.get(0).acknowledge();
            assertThat(viaB.approximateCount()).isZero();
        }
    }
}
