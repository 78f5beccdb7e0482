package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Deduplication ids are kept in Redis, so a send retried from another process is stored once. */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("send deduplication on Redis")
class DeduplicationTest {

    private static SendOptions dedup(String id) {
        return SendOptions.defaults().withDeduplicationId(id);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a send retried by another process with the same id stores nothing and returns the first id")
    void acrossProcesses(Topology topology) {
        String name = unique("dedup");
        // braces and punctuation in the id must not move the key out of the mailbox's slot
        String id = "order-{42}/retry:#1";
        try (UnifiedJedis otherClient = topology.newClient();
             RedisMailbox<String> first = mailbox(name, topology.shared());
             RedisMailbox<String> retry = mailbox(name, otherClient)) {
            String sent = first.send("original", dedup(id));
            assertThat(retry.send("retried", dedup(id))).isEqualTo(sent);
            assertThat(retry.send("other", dedup(id + "x"))).isNotEqualTo(sent);
            assertThat(first.approximateCount()).isEqualTo(2);
            assertThat(first.receive(ReceiveOptions.defaults().withMaxMessages(10)))
                    .extracting(Message::body).containsExactly("original", "other");

            String key = first.deduplicationKey(id);
            assertThat(key).isEqualTo(Topology.base(name) + "dedup/" + id);
            assertThat(topology.shared().get(key)).isEqualTo(sent);
            assertThat(topology.shared().pttl(key)).isBetween(1L, Limits.DEDUPLICATION_WINDOW.toMillis());
            assertThat(JedisClusterCRC16.getSlot(key)).isEqualTo(JedisClusterCRC16.getSlot(first.readyKey()));

            // a duplicate is still a duplicate once the first message is gone, and after a purge
            first.purge();
            assertThat(retry.send("late retry", dedup(id))).isEqualTo(sent);
            assertThat(first.approximateCount()).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("in a batch message i uses id/i: a retried batch stores only what is new, in order")
    void batch(Topology topology) {
        String name = unique("batch");
        try (UnifiedJedis otherClient = topology.newClient();
             RedisMailbox<String> first = mailbox(name, topology.shared());
             RedisMailbox<String> retry = mailbox(name, otherClient)) {
            List<String> ids = first.sendBatch(List.of("p", "q"), dedup("b"));
            List<String> again = retry.sendBatch(List.of("p", "q", "r"), dedup("b"));
            assertThat(again).hasSize(3).startsWith(ids.get(0), ids.get(1));
            assertThat(again.get(2)).isNotIn(ids);
            assertThat(retry.send("q by its batch key", dedup("b/1"))).isEqualTo(ids.get(1));
            assertThat(retry.send("a single send uses the id as it is", dedup("b"))).isNotIn(again);
            assertThat(first.receive(ReceiveOptions.defaults().withMaxMessages(10)))
                    .extracting(Message::body).containsExactly("p", "q", "r", "a single send uses the id as it is");
        }
    }

    @Test
    @DisplayName("a send refused for capacity remembers no id, and a full mailbox still answers a duplicate")
    void allOrNothing() {
        UnifiedJedis client = Topology.STANDALONE.shared();
        try (RedisMailbox<String> m = RedisMailbox.builder(unique("full"), Codec.utf8()).client(client)
                .capacity(2).build()) {
            String kept = m.send("kept", dedup("k"));
            m.send("filler");
            assertThatThrownBy(() -> m.sendBatch(List.of("x", "y"), dedup("z")))
                    .isInstanceOf(MailboxFullException.class).hasMessageContaining("cannot add 2 messages");
            assertThat(client.exists(m.deduplicationKey("z/0"))).isFalse();
            assertThat(m.send("kept again", dedup("k"))).isEqualTo(kept); // stores nothing, so it fits
            assertThatThrownBy(() -> m.sendBatch(List.of("kept", "new"), dedup("k2")))
                    .isInstanceOf(MailboxFullException.class);

            m.purge();
            List<String> ids = m.sendBatch(List.of("x", "y"), dedup("z"));
            assertThat(m.sendBatch(List.of("x", "y"), dedup("z"))).isEqualTo(ids);
            assertThat(m.approximateCount()).isEqualTo(2);
        }
    }

    @Test
    @DisplayName("a partly duplicate batch on a full mailbox counts only its new messages")
    void fullCountsNewOnly() {
        UnifiedJedis client = Topology.STANDALONE.shared();
        try (RedisMailbox<String> m = RedisMailbox.builder(unique("partly"), Codec.utf8()).client(client)
                .capacity(3).build()) {
            List<String> ids = m.sendBatch(List.of("a", "b"), dedup("d"));
            m.send("filler");
            assertThatThrownBy(() -> m.sendBatch(List.of("a", "b", "c"), dedup("d")))
                    .isInstanceOf(MailboxFullException.class).hasMessageContaining("cannot add 1 message");
            m.receive().get(0).acknowledge();
            assertThat(m.sendBatch(List.of("a", "b", "c"), dedup("d"))).startsWith(ids.get(0), ids.get(1));
            assertThat(m.approximateCount()).isEqualTo(3);
        }
    }

    @Test
    @DisplayName("a delayed send with an id is deduplicated the same way and keeps its delay")
    void delayed() {
        try (RedisMailbox<String> m = mailbox(unique("delayed"), Topology.STANDALONE.shared())) {
            SendOptions o = dedup("later").withDelay(Duration.ofMinutes(5));
            String id = m.send("later", o);
            assertThat(m.send("later", o)).isEqualTo(id);
            assertThat(m.approximateCount()).isEqualTo(1);
            assertThat(m.receive()).isEmpty();
        }
    }
}
