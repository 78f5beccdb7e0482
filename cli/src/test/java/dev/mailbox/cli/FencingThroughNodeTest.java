package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.testkit.redis.RedisClusterProcess;
import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fencing reaches the data, through a mailbox node, on every backend a node can run on: a runner whose
 * lease was taken over can neither receive nor acknowledge once its successor has used the mailbox, and
 * its attempts change nothing.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FencingThroughNodeTest {

    private static TestingCluster coordinators;
    private static CoordinationClient client;
    private static RedisServerProcess redis;
    private static RedisClusterProcess redisCluster;

    @BeforeAll
    static void start() {
        coordinators = TestingCluster.start(1);
        coordinators.awaitLeader(Duration.ofSeconds(30));
        client = coordinators.client();
        redis = RedisServerProcess.start();
        redisCluster = RedisClusterProcess.start(3);
    }

    @AfterAll
    static void stop() {
        coordinators.close();
        redis.close();
        redisCluster.close();
    }

    static Stream<Arguments> backends() {
        return Stream.of(
                Arguments.of("memory", (java.util.function.Supplier<String>) () -> "memory"),
                Arguments.of("redis standalone", (java.util.function.Supplier<String>) () -> redis.uri()),
                Arguments.of("redis cluster", (java.util.function.Supplier<String>) () ->
                        "redis-cluster://127.0.0.1:" + redisCluster.seedPort()),
                Arguments.of("sqs (ElasticMQ)", (java.util.function.Supplier<String>) () ->
                        "sqs://?region=us-east-1&create&endpoint=" + ElasticMqServer.shared().endpoint()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    @DisplayName("a runner whose lease moved on is refused receive and acknowledge, and changes nothing")
    void staleRunnerIsFenced(String name, java.util.function.Supplier<String> uri) {
        String mailbox = "fence" + UUID.randomUUID().toString().substring(0, 8);
        try (NodeBackend backend = NodeBackend.parse(uri.get());
             MailboxNode node = MailboxNode.builder("node-f").coordinator(client).backend(backend).start();
             RemoteMailbox<String> through = RemoteMailbox.builder(mailbox, Codec.utf8()).node(node.address()).build()) {
            Lease first = client.leases().acquire(mailbox, new LeaseHolder("runner-a", "node-f", node.address()));
            Mailbox<String> a = through.fenced(first.epoch());
            through.send("one");
            through.send("two");
            List<Message<String>> held = a.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(2))
                    .withWaitTime(Duration.ofSeconds(5)));
            assertThat(held).hasSize(1);

            // runner A stops hearing from the coordinator (a pause, a partition); its lease is taken from it
            client.leases().revoke(mailbox);
            client.leases().reclaim(mailbox);
            Lease second = client.leases().acquire(mailbox, new LeaseHolder("runner-b", "node-f", node.address()));
            assertThat(second.epoch()).isGreaterThan(first.epoch());
            Mailbox<String> b = through.fenced(second.epoch());
            List<Message<String>> bGot = b.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
            assertThat(bGot).extracting(Message::body).containsExactly(
                    held.get(0).body().equals("one") ? "two" : "one");

            // A wakes up: everything it tries is refused, naming both epochs
            assertThatThrownBy(() -> a.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(200))))
                    .isInstanceOfSatisfying(FencedException.class, e -> {
                        assertThat(e.epoch()).isEqualTo(first.epoch());
                        assertThat(e.fence()).isGreaterThanOrEqualTo(second.epoch());
                        assertThat(e.isRetryable()).isFalse();
                    });
            assertThatThrownBy(() -> held.get(0).acknowledge()).isInstanceOf(FencedException.class);
            assertThatThrownBy(() -> a.acknowledge(held.get(0).receiptHandle())).isInstanceOf(FencedException.class);
            assertThatThrownBy(() -> held.get(0).extendVisibility(Duration.ofMinutes(5)))
                    .isInstanceOf(FencedException.class);

            // nothing changed: A's message comes back (its visibility lapses) and B gets it
            bGot.get(0).acknowledge();
            List<Message<String>> back = b.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10)));
            assertThat(back).extracting(Message::body).containsExactly(held.get(0).body());
            back.get(0).acknowledge();
            assertThat(through.approximateCount()).isZero();
        }
    }
}
