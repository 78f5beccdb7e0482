package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.UnifiedJedis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Data written by an earlier key layout stays usable. Version 1's keys are written by hand, exactly as
 * that layout's scripts left them; version 2's by version 2's own scripts, kept as test resources
 * ({@code dev/mailbox/redis/v2/}, the scripts of the last commit with {@code LAYOUT_VERSION = 2}) and run
 * with the arguments version 2's RedisMailbox gave them, so the test does not depend on code that no
 * longer exists.
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
            // version 1's attributes are plain strings in the stored form of typed attributes (issue 32)
            assertThat(queued.typedAttributes()).isEqualTo(Map.of("k", dev.mailbox.api.AttributeValue.string("v")));
            assertThat(queued.systemAttributes()).isEmpty();
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

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a version 2 mailbox, written by version 2's scripts, is served under version " + RedisMailbox.LAYOUT_VERSION
            + ": every message received and acknowledged, its handles, fence, deduplication ids and dead letters kept")
    void version2(Topology topology) throws InterruptedException {
        assertThat(RedisMailbox.LAYOUT_VERSION).isEqualTo(3); // a new version adds a test for the one before
        UnifiedJedis c = topology.shared();
        String tag = unique("v2");
        V2Mailbox v2 = new V2Mailbox(c, tag, tag);
        V2Mailbox dlq = new V2Mailbox(c, tag, tag + "-dlq");

        // what a version 2 process left behind
        List<String> sent = new ArrayList<>(v2.send(0, "", "", "plain", "first"));
        sent.addAll(v2.send(0, "{\"k\":\"v\"}", "", "with attributes"));
        List<String> batch = v2.send(0, "", "retry-7", "batched 0", "batched 1");
        sent.addAll(batch);
        sent.addAll(v2.send(300, "", "", "delayed"));
        List<Object> held = v2.receive(3, 2, 600_000, 0, dlq); // plain, first: in flight for 10 minutes
        List<Object> lapsing = v2.receive(3, 1, 1, 0, dlq); // with attributes: lapses at once
        List<Object> nacked = v2.receive(3, 1, 600_000, 0, dlq); // batched 0: nacked back to ready
        assertThat(v2.nack(id(nacked, 0), token(nacked, 0), 0)).isEqualTo(1L);
        // a dead letter: a message of its own mailbox with redrive after one receive
        V2Mailbox source = new V2Mailbox(c, tag, tag + "-src");
        source.send(0, "", "", "doomed");
        List<Object> once = source.receive(0, 1, 600_000, 1, dlq);
        source.nack(id(once, 0), token(once, 0), 0);
        assertThat(source.receive(0, 1, 600_000, 1, dlq)).hasSize(3); // moved on this receive: nothing delivered
        Thread.sleep(400); // the delay and the lapse end

        try (RedisMailbox<String> dead = RedisMailbox.builder(tag + "-dlq", Codec.utf8()).client(c).hashTag(tag).build();
             RedisMailbox<String> m = RedisMailbox.builder(tag, Codec.utf8()).client(c)
                     .redrivePolicy(RedrivePolicy.of(5, dead)).build();
             RedisMailbox<String> asFifo = RedisMailbox.builder(tag, Codec.utf8()).client(c).hashTag(tag)
                     .fifo(FifoOptions.defaults()).build()) {
            assertThatThrownBy(asFifo::approximateCount).isInstanceOf(MailboxException.class)
                    .hasMessageContaining("standard mailbox").hasMessageContaining("never changes kind");
            assertThat(m.approximateCount()).isEqualTo(6);
            assertThat(m.sendBatch(List.of("again 0", "again 1"), SendOptions.defaults().withDeduplicationId("retry-7")))
                    .as("a version 2 deduplication id is still remembered").isEqualTo(batch);
            assertThatThrownBy(() -> m.fenced(2).receive()).isInstanceOf(FencedException.class); // the fence is 3
            Mailbox<String> holder = m.fenced(3);

            // version 2's handles: extend and acknowledge the one in flight, acknowledge the lapsed one late
            String plainHandle = id(held, 0) + ":" + token(held, 0);
            holder.extendVisibility(plainHandle, Duration.ofMinutes(1));
            holder.acknowledge(plainHandle);
            holder.acknowledge(id(lapsing, 0) + ":" + token(lapsing, 0));
            assertThatThrownBy(() -> holder.acknowledge(id(nacked, 0) + ":" + token(nacked, 0)))
                    .isInstanceOf(ReceiptHandleExpiredException.class); // nacked by version 2

            // in the order they became visible: batched 0 was nacked behind batched 1, and the lapsed message
            // (acknowledged above) and the delayed one were promoted after both
            List<Message<String>> rest = holder.receive(ReceiveOptions.defaults().withMaxMessages(10));
            assertThat(rest).extracting(Message::body).containsExactly("batched 1", "batched 0", "delayed");
            assertThat(rest).extracting(Message::deliveryCount).containsExactly(1, 2, 1);
            assertThat(rest).extracting(Message::id).containsExactly(batch.get(1), batch.get(0), sent.get(5));
            assertThat(rest).allSatisfy(x -> assertThat(x.groupId()).isNull());
            assertThat(holder.acknowledgeBatch(rest)).isEmpty();
            holder.acknowledge(id(held, 1) + ":" + token(held, 1)); // first
            assertThat(m.approximateCount()).isZero();

            Message<String> deadLetter = dead.receive().get(0);
            assertThat(deadLetter.body()).isEqualTo("doomed");
            deadLetter.acknowledge();
            assertThat(dead.approximateCount()).isZero();

            // and it goes on as a version 3 mailbox: ids continue, tenants are kept
            String next = m.send("tenant's", SendOptions.defaults().withGroupId("tenant-1"));
            assertThat(Long.parseLong(next, 16)).isEqualTo(Long.parseLong(batch.get(1), 16) + 2);
            Message<String> got = m.receive().get(0);
            assertThat(got.groupId()).isEqualTo("tenant-1");
            got.acknowledge();
            assertThat(m.approximateCount()).isZero();
        }
    }

    private static String id(List<Object> reply, int message) {
        return new String((byte[]) reply.get(3 + 6 * message), StandardCharsets.UTF_8);
    }

    private static String token(List<Object> reply, int message) {
        return new String((byte[]) reply.get(3 + 6 * message + 4), StandardCharsets.UTF_8);
    }
}
