package dev.mailbox.samples.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.testkit.redis.RedisClusterProcess;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.util.Set;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;

class RedisClientsTest {

    @Test
    void aSmallPoolServesAMailbox() {
        try (RedisServerProcess redis = RedisServerProcess.start();
             JedisPooled client = RedisClients.standalone(redis.host(), redis.port(), 2);
             Mailbox<Order> orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(client).build()) {
            orders.send(new Order("o-1", "beans", 2));
            assertThat(orders.receive()).extracting(Message::body).containsExactly(new Order("o-1", "beans", 2));
        }
    }

    @Test
    void onAClusterTheDeadLetterMailboxMustShareItsSourcesSlot() {
        try (RedisClusterProcess redis = RedisClusterProcess.start(3);
             JedisCluster cluster = RedisClients.cluster(Set.of(new HostAndPort("127.0.0.1", redis.seedPort())), 4)) {
            Mailbox<Order> elsewhere = RedisMailbox.builder("orders-dlq", JsonCodec.of(Order.class)).client(cluster).build();
            assertThatThrownBy(() -> RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(cluster)
                    .redrivePolicy(RedrivePolicy.of(1, elsewhere)).build())
                    .isInstanceOf(IllegalArgumentException.class);

            Mailbox<Order> deadLetters = RedisMailbox.builder("orders-dlq", JsonCodec.of(Order.class))
                    .client(cluster).hashTag("orders").build();
            Mailbox<Order> orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class)).client(cluster)
                    .redrivePolicy(RedrivePolicy.of(1, deadLetters)).build();
            orders.send(new Order("o-2", "rice", 1));
            orders.receive().get(0).nack();
            assertThat(orders.receive()).as("moved on its second receive").isEmpty();
            assertThat(deadLetters.receive()).extracting(Message::body).containsExactly(new Order("o-2", "rice", 1));
            orders.close();
            deadLetters.close();
            elsewhere.close();
        }
    }
}
