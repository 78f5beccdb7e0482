package dev.mailbox.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Inspection;
import dev.mailbox.testkit.InspectionContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inspection contract on RedisMailbox, on a standalone server (RedisClusterInspectionTest: on a 3-master
 * cluster), with its FIFO cases on FIFO mailboxes. Redis deadlines are the server's clock, so letting time pass is
 * waiting for it: the tests that need it wait twice a 300 ms timeout.
 */
@DisplayName("RedisMailbox meets the Inspection contract")
@ExtendWith(SharedRedis.class)
class RedisInspectionTest extends InspectionContract {

    redis.clients.jedis.UnifiedJedis client() {
        return SharedRedis.standalone().client;
    }

    @Override
    protected Mailbox<byte[]> mailbox(String name) {
        return RedisMailbox.builder(name, Codec.bytes()).client(client()).build();
    }

    @Override
    protected Mailbox<byte[]> mailbox(String name, RedrivePolicy policy) {
        // the dead-letter mailbox's keys must share the source's hash slot: the source takes the dead-letter's tag
        return RedisMailbox.builder(name, Codec.bytes()).client(client()).redrivePolicy(policy)
                .hashTag(policy.deadLetterMailbox().name()).build();
    }

    @Override
    protected Mailbox<byte[]> fifoMailbox(String name) {
        return RedisMailbox.builder(name, Codec.bytes()).client(client()).fifo(FifoOptions.defaults()).build();
    }

    @Override
    protected void elapse(Duration duration) {
        try {
            Thread.sleep(duration.toMillis()); // the server's clock is the one that counts: nothing to move
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ---- what layout version 3 keeps outside ready and timed (the contract's cases above cover the rest)

    private static String name(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static SendOptions group(String g) {
        return SendOptions.defaults().withGroupId(g);
    }

    private static List<String> peeked(Mailbox<byte[]> m) {
        return ((Inspection) m).peek(Inspection.MAX_PEEK).stream()
                .map(p -> text(p.body()) + "/" + p.state() + "/" + p.deliveryCount()).toList();
    }

    @Test
    @DisplayName("FIFO: a lapsed delivery is queued at its group's head, a nacked message of a run waits in its place as queued, and neither is moved by inspecting")
    void fifoRunInspected() {
        String name = name("fifo-run");
        try (Mailbox<byte[]> m = fifoMailbox(name)) {
            m.sendBatch(List.of("a1".getBytes(StandardCharsets.UTF_8), "a2".getBytes(StandardCharsets.UTF_8),
                    "a3".getBytes(StandardCharsets.UTF_8)), group("a"));
            m.send("b1".getBytes(StandardCharsets.UTF_8), group("b"));
            List<Message<byte[]>> run = m.receive(ReceiveOptions.defaults().withMaxMessages(3)
                    .withVisibilityTimeout(Duration.ofMinutes(1)));
            assertThat(run).extracting(x -> text(x.body())).containsExactly("a1", "a2", "a3");
            run.get(1).nack(); // waits in its place: a1 and a3 are still out
            run.get(0).extendVisibility(Duration.ZERO); // lapsed, not yet moved back by any call

            Inspection.Stats s = ((Inspection) m).inspect();
            assertThat(s.queued()).as("a1 (lapsed), a2 (nacked inside the run), b1").isEqualTo(3);
            assertThat(s.inFlight()).as("a3").isEqualTo(1);
            assertThat(s.delayed()).isZero();
            assertThat(s.total()).isEqualTo(m.approximateCount()).isEqualTo(4);
            List<String> seen = peeked(m);
            assertThat(seen).as("queued first, each group in send order").hasSize(4).endsWith("a3/IN_FLIGHT/1");
            assertThat(seen.subList(0, 3)).containsSubsequence("a1/QUEUED/1", "a2/QUEUED/1").contains("b1/QUEUED/0");
            assertThat(client().zscore(Topology.base(name) + "timed", run.get(0).id()))
                    .as("the lapsed delivery is still where the receive left it: inspecting promotes nothing").isNotNull();

            List<Message<byte[]>> b = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
            assertThat(b).as("group a waits for a3, held by the run").extracting(x -> text(x.body())).containsExactly("b1");
            b.get(0).acknowledge();
            run.get(2).acknowledge();
            assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10))).extracting(x -> text(x.body()))
                    .containsExactly("a1", "a2");
        }
    }

    @Test
    @DisplayName("FIFO: a dead-letter mailbox peeks its messages under the ids they had in the source, as Message.id() shows them")
    void fifoDeadLettersPeekedByTheirIds() {
        String dlqName = name("fifo-dlq");
        try (Mailbox<byte[]> dlq = fifoMailbox(dlqName);
             Mailbox<byte[]> m = RedisMailbox.builder(name("fifo-source"), Codec.bytes()).client(client())
                     .fifo(FifoOptions.defaults()).hashTag(dlqName).redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
            m.sendBatch(List.of("a1".getBytes(StandardCharsets.UTF_8), "a2".getBytes(StandardCharsets.UTF_8)),
                    group("a"));
            Message<byte[]> a1 = m.receive().get(0);
            a1.nack();
            List<Message<byte[]>> next = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
            assertThat(next).as("a1 used up its one receive").extracting(x -> text(x.body())).containsExactly("a2");

            List<Inspection.Peeked> seen = ((Inspection) dlq).peek(10);
            assertThat(seen).hasSize(1);
            assertThat(seen.get(0).id()).isEqualTo(a1.id());
            assertThat(text(seen.get(0).body())).isEqualTo("a1");
            assertThat(seen.get(0).state()).isEqualTo(Inspection.State.QUEUED);
            assertThat(((Inspection) dlq).inspect().queued()).isEqualTo(1);
            assertThat(dlq.receive().get(0).id()).isEqualTo(a1.id());
        }
    }

    @Test
    @DisplayName("a tenant's message in flight counts as in flight and, lapsed, as queued; the tenant state's marker in timed is no message")
    void tenantDeliveryCounted() {
        String name = name("tenant");
        try (Mailbox<byte[]> m = mailbox(name)) {
            m.send("x".getBytes(StandardCharsets.UTF_8), group("t"));
            Message<byte[]> x = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(1))).get(0);
            assertThat(client().zscore(Topology.base(name) + "timed", "fair")).as("tenant state marked").isNotNull();

            Inspection.Stats s = ((Inspection) m).inspect();
            assertThat(List.of(s.queued(), s.inFlight(), s.delayed())).containsExactly(0L, 1L, 0L);
            assertThat(peeked(m)).containsExactly("x/IN_FLIGHT/1");

            x.extendVisibility(Duration.ZERO);
            s = ((Inspection) m).inspect();
            assertThat(List.of(s.queued(), s.inFlight(), s.delayed())).containsExactly(1L, 0L, 0L);
            assertThat(s.exact()).isTrue();
            assertThat(peeked(m)).containsExactly("x/QUEUED/1");
        }
    }
}
