package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The fence is stored with the messages: two mailbox objects on clients of their own stand for two
 * processes (an old lease holder and its successor).
 */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("fencing on Redis")
class FencingTest {

    private static final ReceiveOptions LONG_VISIBILITY =
            ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(10));

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a fence raised through one process refuses every stale call through another, and the refused calls change nothing")
    void staleCallsFromAnotherProcess(Topology topology) {
        String name = unique("fence");
        try (UnifiedJedis oldClient = topology.newClient();
             UnifiedJedis newClient = topology.newClient();
             RedisMailbox<String> oldProcess = mailbox(name, oldClient);
             RedisMailbox<String> newProcess = mailbox(name, newClient)) {
            oldProcess.sendBatch(List.of("held", "queued"));
            Mailbox<String> stale = oldProcess.fenced(1);
            Message<String> held = stale.receive(LONG_VISIBILITY).get(0);
            assertThat(held.body()).isEqualTo("held");

            Mailbox<String> successor = newProcess.fenced(2);
            assertThat(successor.approximateCount()).isEqualTo(2);
            successor.extendVisibility(held.receiptHandle(), Duration.ofMinutes(10)); // raises the fence to 2
            assertThat(topology.shared().get(Topology.base(name) + "fence")).isEqualTo("2");

            Map<String, Object> before = topology.state(name);
            List<ThrowingCallable> staleCalls = List.of(
                    held::acknowledge,
                    held::nack,
                    () -> held.nack(Duration.ofSeconds(5)),
                    () -> held.extendVisibility(Duration.ofMinutes(1)),
                    () -> stale.receive(LONG_VISIBILITY),
                    () -> stale.receive(LONG_VISIBILITY.withWaitTime(Duration.ofSeconds(5))),
                    () -> stale.acknowledge(held.receiptHandle()),
                    () -> stale.nack(held.receiptHandle(), Duration.ZERO),
                    () -> stale.extendVisibility(held.receiptHandle(), Duration.ofMinutes(1)),
                    () -> stale.acknowledgeBatch(List.of(held)),
                    // the message carries epoch 1, even in a batch acknowledged on the mailbox itself
                    () -> oldProcess.acknowledgeBatch(List.of(held)),
                    // and in a fresh object of the old process: the fence is not in anyone's memory
                    () -> { try (RedisMailbox<String> again = mailbox(name, oldClient)) {
                        again.fenced(1).acknowledge(held.receiptHandle()); } });
            for (ThrowingCallable call : staleCalls) {
                assertThatThrownBy(call)
                        .isInstanceOfSatisfying(FencedException.class, e -> {
                            assertThat(e.epoch()).isEqualTo(1);
                            assertThat(e.fence()).isEqualTo(2);
                            assertThat(e.isRetryable()).isFalse();
                        })
                        .hasMessageContaining(name);
                assertThat(topology.state(name)).isEqualTo(before);
            }

            // the successor, at its epoch or a later one, and unfenced callers still go ahead
            assertThat(successor.receive(LONG_VISIBILITY)).extracting(Message::body).containsExactly("queued");
            successor.acknowledge(held.receiptHandle());
            assertThat(oldProcess.approximateCount()).isEqualTo(1);
            assertThat(oldProcess.purge()).isEqualTo(1);
            oldProcess.send("unfenced");
            assertThat(oldProcess.receive()).extracting(Message::body).containsExactly("unfenced");
        }
    }

    @Test
    @DisplayName("a receive under an old epoch that is already waiting is refused once a later epoch is used, and takes nothing")
    void waitingReceiveIsFenced() throws Exception {
        Topology topology = Topology.STANDALONE;
        String name = unique("waiting");
        try (UnifiedJedis otherClient = topology.newClient();
             RedisMailbox<String> oldProcess = mailbox(name, topology.shared());
             RedisMailbox<String> newProcess = mailbox(name, otherClient)) {
            CompletableFuture<List<Message<String>>> waiter = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    waiter.complete(oldProcess.fenced(3).receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60))));
                } catch (Throwable e) {
                    waiter.completeExceptionally(e);
                }
            });
            t.setDaemon(true);
            t.start();
            RedisContractTest.awaitBlocked(t);

            assertThat(newProcess.fenced(4).receive()).isEmpty(); // the successor takes over
            newProcess.send("for the successor"); // wakes the old waiter, which must not take it

            assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
            assertThat(newProcess.fenced(4).receive()).extracting(Message::body).containsExactly("for the successor");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("the fence only rises: a higher epoch raises it, an equal one passes, a mailbox with no fence key has fence 0")
    void onlyRises(Topology topology) {
        String name = unique("rises");
        try (RedisMailbox<String> m = mailbox(name, topology.shared())) {
            String fenceKey = m.fenceKey();
            assertThat(fenceKey).isEqualTo(Topology.base(name) + "fence");
            m.send("x");
            m.receive().get(0).nack(); // calls on the mailbox itself write no fence
            assertThat(topology.shared().exists(fenceKey)).isFalse();

            assertThat(m.fenced(5).receive()).hasSize(1);
            assertThat(topology.shared().get(fenceKey)).isEqualTo("5");
            assertThat(m.fenced(5).approximateCount()).isEqualTo(1);
            m.fenced(7).receive();
            assertThat(topology.shared().get(fenceKey)).isEqualTo("7");
            assertThatThrownBy(() -> m.fenced(6).receive()).isInstanceOf(FencedException.class);
            assertThat(topology.shared().get(fenceKey)).isEqualTo("7");
            m.purge();
            assertThat(topology.shared().get(fenceKey)).as("purge keeps the fence").isEqualTo("7");

            if (topology == Topology.CLUSTER) {
                assertThat(JedisClusterCRC16.getSlot(fenceKey)).isEqualTo(JedisClusterCRC16.getSlot(m.readyKey()));
            }
        }
    }

    @Test
    @DisplayName("epochs are exact over the whole long range, where a Lua number would round")
    void largeEpochs() {
        try (RedisMailbox<String> m = mailbox(unique("large"), Topology.STANDALONE.shared())) {
            long big = (1L << 53) + 1; // the first long a double cannot hold
            m.fenced(big).receive();
            assertThat(Topology.STANDALONE.shared().get(m.fenceKey())).isEqualTo(Long.toString(big));
            assertThatThrownBy(() -> m.fenced(big - 1).receive()).isInstanceOfSatisfying(FencedException.class, e -> {
                assertThat(e.epoch()).isEqualTo(big - 1);
                assertThat(e.fence()).isEqualTo(big);
            });
            assertThatThrownBy(() -> m.fenced(99).receive()).isInstanceOf(FencedException.class); // fewer digits
        }
        try (RedisMailbox<String> m = mailbox(unique("max"), Topology.STANDALONE.shared())) {
            m.fenced(Long.MAX_VALUE - 1).receive();
            m.fenced(Long.MAX_VALUE).receive();
            assertThatThrownBy(() -> m.fenced(Long.MAX_VALUE - 1).receive()).isInstanceOfSatisfying(FencedException.class,
                    e -> assertThat(e.fence()).isEqualTo(Long.MAX_VALUE));
        }
    }

    @Test
    @DisplayName("with a key TTL the fence expires with the mailbox's other keys instead of outliving them")
    void fenceCarriesKeyTtl() {
        UnifiedJedis client = Topology.STANDALONE.shared();
        try (RedisMailbox<String> m = RedisMailbox.builder(unique("ttl"), Codec.utf8()).client(client)
                .keyTtl(Duration.ofHours(2)).build()) {
            // a stale handle is refused as stale after the fence check passed, which raised the fence
            assertThatThrownBy(() -> m.fenced(1).nack("000000000001:abc-1", Duration.ZERO))
                    .isInstanceOf(ReceiptHandleExpiredException.class);
            assertThat(client.get(m.fenceKey())).isEqualTo("1");
            assertThat(client.pttl(m.fenceKey())).isBetween(Duration.ofHours(2).minusMinutes(1).toMillis(),
                    Duration.ofHours(2).toMillis());
        }
    }

    @Test
    @DisplayName("a view needs an epoch of 1 or more, closes nothing, and sends and counts unfenced")
    void view() {
        try (RedisMailbox<String> m = mailbox(unique("view"), Topology.STANDALONE.shared())) {
            assertThatThrownBy(() -> m.fenced(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 or more");
            assertThatThrownBy(() -> m.fenced(-1)).isInstanceOf(IllegalArgumentException.class);
            Mailbox<String> view = m.fenced(9);
            assertThat(view.name()).isEqualTo(m.name());
            assertThat(view.capabilities().atomicFencing()).isTrue();
            m.fenced(10).receive();
            view.send("sent under an overtaken epoch"); // sends are not fenced
            assertThat(view.approximateCount()).isEqualTo(1);
            view.close();
            assertThat(m.approximateCount()).isEqualTo(1);
            assertThat(m.fenced(10).receive()).hasSize(1);
        }
    }

    @Test
    @DisplayName("a fenced delivery keeps the dead-letter move atomic: a stale receive moves nothing")
    void deadLetterMoveIsFenced() {
        UnifiedJedis client = Topology.STANDALONE.shared();
        String name = unique("dl");
        try (RedisMailbox<String> dlq = RedisMailbox.builder(name + "-dlq", Codec.utf8()).client(client)
                .hashTag(name).build();
             RedisMailbox<String> m = RedisMailbox.builder(name, Codec.utf8()).client(client)
                     .redrivePolicy(RedrivePolicy.of(1, dlq)).build()) {
            m.send("poison");
            m.fenced(2).receive().get(0).nack();
            assertThatThrownBy(() -> m.fenced(1).receive()).isInstanceOf(FencedException.class);
            assertThat(dlq.approximateCount()).isZero();
            assertThat(m.approximateCount()).isEqualTo(1);
            assertThat(m.fenced(2).receive()).isEmpty(); // dead-lettered now
            assertThat(dlq.receive()).extracting(Message::body).containsExactly("poison");
        }
    }
}
