package dev.mailbox.redis;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Data written by an earlier key layout stays usable. The keys are written by hand, exactly as that
 * layout's scripts left them, so the test does not depend on code that no longer exists.
 */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("Redis key layout compatibility")
class LayoutCompatibilityTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a version 1 mailbox (no fence, no deduplication keys) works under version " + RedisMailbox.LAYOUT_VERSION
            + ": fence 0, its handles accepted, its id counter continued")
    void version1(Topology topology) {
        assertThat(RedisMailbox.LAYOUT_VERSION).isEqualTo(2); // a new version adds a test for the one before
        UnifiedJedis c = topology.shared();
        String name = unique("v1");
        String base = Topology.base(name);
        long now = System.currentTimeMillis();
        long later = now + 600_000;
        // version 1: three messages sent; 1 queued with attributes, 2 in flight (delivered once by a
        // version 1 node: token "7f3a-1"), 3 delayed
        c.set(base + "seq", "3");
        c.hset(base + "body", Map.of("000000000001", "queued", "000000000002", "in flight", "000000000003", "delayed"));
        c.hset(base + "meta", Map.of(
                "000000000001", (now - 1000) + "|0|a||",
                "000000000002", (now - 1000) + "|1|-|" + later + "|7f3a-1",
                "000000000003", (now - 1000) + "|0|-||"));
        c.hset(base + "attr", "000000000001", "{\"k\":\"v\"}");
        c.rpush(base + "ready", "000000000001");
        c.zadd(base + "timed", Map.of("000000000002", (double) later, "000000000003", (double) later));

        try (RedisMailbox<String> m = mailbox(name, c)) {
            assertThat(m.approximateCount()).isEqualTo(3);
            Mailbox<String> holder = m.fenced(1); // no fence key: the fence is 0, so epoch 1 passes
            holder.extendVisibility("000000000002:7f3a-1", Duration.ofMinutes(5));
            assertThat(c.get(base + "fence")).isEqualTo("1");
            Message<String> queued = holder.receive().get(0);
            assertThat(queued.id()).isEqualTo("000000000001");
            assertThat(queued.body()).isEqualTo("queued");
            assertThat(queued.attributes()).isEqualTo(Map.of("k", "v"));
            assertThat(queued.deliveryCount()).isEqualTo(1);

            holder.acknowledge("000000000002:7f3a-1"); // a handle a version 1 node issued
            queued.acknowledge();
            assertThat(m.approximateCount()).isEqualTo(1);
            assertThatThrownBy(() -> holder.acknowledge("000000000002:7f3a-1"))
                    .isInstanceOf(ReceiptHandleExpiredException.class); // gone now

            String next = m.send("new", SendOptions.defaults().withDeduplicationId("first"));
            assertThat(next).isEqualTo("000000000004");
            assertThat(m.send("new again", SendOptions.defaults().withDeduplicationId("first"))).isEqualTo(next);
            assertThat(m.receive(ReceiveOptions.defaults())).extracting(Message::body).containsExactly("new");
        }
    }
}
