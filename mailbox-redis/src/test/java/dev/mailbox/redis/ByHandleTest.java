package dev.mailbox.redis;

import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Receipt handles carry all a script needs, so any mailbox object of the queue can use them. */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("receipt handles on Redis")
class ByHandleTest {

    private static final ReceiveOptions LONG_VISIBILITY =
            ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(10));

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a handle issued by one process is extended, nacked and acknowledged by another after the first closed")
    void acrossProcesses(Topology topology) {
        String name = unique("handles");
        String first;
        String second;
        try (UnifiedJedis client = topology.newClient();
             RedisMailbox<String> node = mailbox(name, client)) {
            node.sendBatch(List.of("a", "b"));
            List<Message<String>> got = node.receive(LONG_VISIBILITY.withMaxMessages(2));
            first = got.get(0).receiptHandle();
            second = got.get(1).receiptHandle();
            assertThat(first).matches("[0-9a-f]{12}:[0-9a-f]{1,16}-1");
        } // the node that issued them is gone, and so is everything it kept in memory

        try (UnifiedJedis client = topology.newClient();
             RedisMailbox<String> restarted = mailbox(name, client)) {
            restarted.extendVisibility(first, Duration.ofMinutes(20));
            long due = topology.shared().zscore(Topology.base(name) + "timed", first.substring(0, 12)).longValue();
            assertThat(due - System.currentTimeMillis()).isGreaterThan(Duration.ofMinutes(15).toMillis());

            restarted.acknowledge(first);
            assertThat(restarted.approximateCount()).isEqualTo(1);
            assertThatThrownBy(() -> restarted.acknowledge(first))
                    .isInstanceOfSatisfying(ReceiptHandleExpiredException.class,
                            e -> assertThat(e.receiptHandle()).isEqualTo(first))
                    .hasMessageContaining("not the current delivery");

            restarted.nack(second, Duration.ZERO);
            Message<String> again = restarted.receive().get(0);
            assertThat(again.body()).isEqualTo("b");
            assertThat(again.deliveryCount()).isEqualTo(2);
            assertThatThrownBy(() -> restarted.extendVisibility(second, Duration.ofMinutes(1)))
                    .isInstanceOf(ReceiptHandleExpiredException.class);
            restarted.acknowledge(again.receiptHandle());
            assertThat(restarted.approximateCount()).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a lapsed handle cannot nack or extend, but still acknowledges (late acknowledgement), whether a script has requeued the message yet or not")
    void lapsed(Topology topology) {
        UnifiedJedis raw = topology.shared();
        String name = unique("lapsed");
        String base = Topology.base(name);
        try (RedisMailbox<String> m = mailbox(name, raw)) {
            m.send("in-timed");
            String handle = m.receive().get(0).receiptHandle();
            String id = handle.substring(0, 12);
            m.extendVisibility(handle, Duration.ZERO); // its visibility ends now; nothing has requeued it yet
            assertThat(raw.zscore(base + "timed", id)).as("still in timed").isNotNull();
            assertThatThrownBy(() -> m.nack(handle, Duration.ZERO))
                    .isInstanceOf(ReceiptHandleExpiredException.class).hasMessageContaining("visibility timeout ended");
            assertThatThrownBy(() -> m.extendVisibility(handle, Duration.ofMinutes(1)))
                    .isInstanceOf(ReceiptHandleExpiredException.class).hasMessageContaining("visibility timeout ended");

            m.acknowledge(handle);
            assertThat(m.approximateCount()).isZero();
            assertThat(raw.zscore(base + "timed", id)).isNull();
            assertThat(raw.hget(base + "meta", id)).isNull();
            assertThat(raw.hget(base + "body", id)).isNull();

            m.send("before");
            m.send("requeued");
            List<Message<String>> got = m.receive(LONG_VISIBILITY.withMaxMessages(2));
            Message<String> requeued = got.get(1);
            got.get(0).nack(Duration.ZERO);
            requeued.extendVisibility(Duration.ZERO);
            m.send("after"); // a send requeues what is due: the lapsed message goes back into ready
            String requeuedId = requeued.receiptHandle().substring(0, 12);
            assertThat(raw.lrange(base + "ready", 0, -1)).containsExactly(got.get(0).receiptHandle().substring(0, 12),
                    requeuedId, raw.lrange(base + "ready", 2, 2).get(0));

            requeued.acknowledge();
            assertThat(raw.lrange(base + "ready", 0, -1)).as("the others stay, in order").hasSize(2)
                    .doesNotContain(requeuedId);
            assertThat(m.approximateCount()).isEqualTo(2);
            List<Message<String>> rest = m.receive(LONG_VISIBILITY.withMaxMessages(10));
            assertThat(rest).extracting(Message::body).containsExactly("before", "after");
            assertThatThrownBy(requeued::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class)
                    .hasMessageContaining("not the current delivery");
        }
    }

    @Test
    @DisplayName("a string that is not a handle is refused with IllegalArgumentException; another queue's handle is stale here and changes nothing")
    void badHandles() {
        UnifiedJedis client = Topology.STANDALONE.shared();
        String name = unique("bad");
        try (RedisMailbox<String> m = mailbox(name, client);
             RedisMailbox<String> other = mailbox(unique("other"), client)) {
            for (String bad : List.of("", "garbage", "000000000001", "000000000001:", ":abc-1", "00000000001:abc-1",
                    "000000000001:abc", "000000000001:ABC-1", "000000000001:abc-1 ", "x".repeat(1000))) {
                assertThatThrownBy(() -> m.acknowledge(bad)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("not a receipt handle");
                assertThatThrownBy(() -> m.nack(bad, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> m.fenced(1).extendVisibility(bad, Duration.ZERO))
                        .isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> m.acknowledge(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.nack("000000000001:abc-1", Duration.ofHours(13)))
                    .isInstanceOf(IllegalArgumentException.class);

            m.send("mine");
            other.send("theirs");
            String theirs = other.receive(LONG_VISIBILITY).get(0).receiptHandle();
            Map<String, Object> before = Topology.STANDALONE.state(name);
            assertThatThrownBy(() -> m.acknowledge(theirs)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThat(Topology.STANDALONE.state(name)).isEqualTo(before);
            assertThat(other.approximateCount()).isEqualTo(1);
            other.acknowledge(theirs);
        }
    }
}
