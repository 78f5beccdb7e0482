package dev.mailbox.samples.fifo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.samples.sqs.SqsOrders;
import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;
import software.amazon.awssdk.services.sqs.SqsClient;

/** README's FIFO mailbox on each backend: per-customer order, one customer's event in flight, duplicates dropped. */
class CustomerEventsTest {

    private static RedisServerProcess redis;
    private static JedisPooled jedis;
    private static ElasticMqServer elasticMq;
    private static SqsClient sqs;

    @BeforeAll
    static void start() {
        redis = RedisServerProcess.start();
        jedis = new JedisPooled(redis.host(), redis.port());
        elasticMq = ElasticMqServer.start();
        sqs = SqsOrders.localClient(elasticMq.endpoint());
    }

    @AfterAll
    static void stop() {
        sqs.close();
        elasticMq.close();
        jedis.close();
        redis.close();
    }

    @Test
    void inMemory() {
        check(CustomerEvents::inMemory);
    }

    @Test
    void onRedis() {
        check(() -> CustomerEvents.onRedis(jedis));
    }

    @Test
    void onSqs() {
        check(() -> CustomerEvents.onSqs(sqs));
    }

    private static void check(Supplier<Mailbox<String>> open) {
        ReceiveOptions one = ReceiveOptions.defaults().withMaxMessages(1).withWaitTime(Duration.ofSeconds(2));
        try (Mailbox<String> events = open.get()) {
            assertThat(events.capabilities().fifo()).isTrue();
            CustomerEvents.publish(events, "customer-42", "created");
            CustomerEvents.publish(events, "customer-7", "created");
            CustomerEvents.publish(events, "customer-42", "paid");
            CustomerEvents.publish(events, "customer-42", "paid"); // the same body again: dropped
            CustomerEvents.publish(events, "customer-42", "shipped");

            Message<String> first = events.receive(one).get(0);
            assertThat(first.groupId()).isEqualTo("customer-42");
            assertThat(first.body()).isEqualTo("created");
            // customer-42's next event waits while its first is in flight; customer-7's does not
            Message<String> other = events.receive(one).get(0);
            assertThat(other.groupId()).isEqualTo("customer-7");
            assertThat(events.receive(one.withWaitTime(Duration.ZERO))).isEmpty();
            first.acknowledge();
            other.acknowledge();
            List<String> rest = new java.util.ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Message<String> m = events.receive(one).get(0);
                rest.add(m.body());
                m.acknowledge();
            }
            assertThat(rest).containsExactly("paid", "shipped");
            assertThat(events.receive(one.withWaitTime(Duration.ZERO))).isEmpty();
            events.purge();
        }
    }
}
