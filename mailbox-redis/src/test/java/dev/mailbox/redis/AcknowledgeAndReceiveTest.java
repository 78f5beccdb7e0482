package dev.mailbox.redis;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code acknowledgeAndReceive}: the acknowledgements and the receive in one script call, with every
 * handle rule of a separate {@code acknowledgeBatch} kept.
 */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("acknowledge and receive in one call")
class AcknowledgeAndReceiveTest {

    private static final ReceiveOptions TEN = ReceiveOptions.defaults().withMaxMessages(10);

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("acknowledges the messages given, then receives the next ones")
    void settlesThenReceives(Topology topology) {
        try (RedisMailbox<String> m = mailbox(unique("settle"), topology.shared())) {
            m.sendBatch(List.of("a", "b", "c"));
            List<Message<String>> first = m.receive(ReceiveOptions.defaults().withMaxMessages(2));
            List<Message<String>> stale = new ArrayList<>();

            List<Message<String>> next = m.acknowledgeAndReceive(first, TEN, stale::add);

            assertThat(stale).isEmpty();
            assertThat(next).extracting(Message::body).containsExactly("c");
            assertThat(m.approximateCount()).as("a and b deleted, c in flight").isEqualTo(1);
            assertThat(m.acknowledgeAndReceive(next, TEN, stale::add)).isEmpty();
            assertThat(m.approximateCount()).isZero();
            assertThat(m.acknowledgeAndReceive(List.of(), TEN, stale::add)).as("nothing to settle, nothing to take")
                    .isEmpty();
            assertThat(stale).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("reports every stale handle, in order, and still acknowledges the current and lapsed ones and receives")
    void reportsStale(Topology topology) {
        try (RedisMailbox<String> m = mailbox(unique("stale"), topology.shared())) {
            m.sendBatch(List.of("redelivered", "lapsed", "deleted", "current", "waiting"));
            List<Message<String>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(4));
            Message<String> redelivered = got.get(0);
            Message<String> lapsed = got.get(1);
            Message<String> deleted = got.get(2);
            Message<String> current = got.get(3);
            redelivered.nack(Duration.ZERO); // a new delivery will have a new handle
            lapsed.extendVisibility(Duration.ZERO); // its visibility ends now: the handle has lapsed
            deleted.acknowledge();
            List<Message<String>> stale = new ArrayList<>();

            List<Message<String>> next = m.acknowledgeAndReceive(List.of(redelivered, current, lapsed, deleted), TEN,
                    stale::add);

            assertThat(stale).as("the stale ones, in the order given; a lapsed handle still acknowledges")
                    .containsExactly(redelivered, deleted);
            assertThat(next).extracting(Message::body).containsExactlyInAnyOrder("waiting", "redelivered");
            assertThat(next).filteredOn(x -> !x.body().equals("waiting")).extracting(Message::deliveryCount)
                    .containsOnly(2);
            assertThat(m.approximateCount()).as("current and lapsed deleted; the two received are in flight").isEqualTo(2);
            assertThat(m.acknowledgeBatch(next)).isEmpty();
            assertThat(m.approximateCount()).isZero();
        }
    }

    @Test
    @DisplayName("stale handles are reported and acknowledgements made before a long wait starts")
    void settlesBeforeWaiting() throws Exception {
        try (RedisMailbox<String> m = mailbox(unique("wait"), Topology.STANDALONE.shared())) {
            m.sendBatch(List.of("held", "gone"));
            List<Message<String>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(2));
            got.get(1).acknowledge();
            List<Message<String>> stale = new CopyOnWriteArrayList<>();
            CompletableFuture<List<Message<String>>> waiting = new CompletableFuture<>();
            Thread t = new Thread(() -> waiting.complete(m.acknowledgeAndReceive(got,
                    ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20)), stale::add)));
            t.setDaemon(true);
            t.start();
            RedisContractTest.awaitBlocked(t);

            assertThat(stale).containsExactly(got.get(1));
            assertThat(m.approximateCount()).as("'held' acknowledged while the receive waits").isZero();
            m.send("late");
            assertThat(waiting.get(20, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("late");
            assertThat(stale).as("reported once").hasSize(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("refuses more than 10 messages, and messages of another mailbox object, changing nothing")
    void refusesBadArguments(Topology topology) {
        String name = unique("refuse");
        try (RedisMailbox<String> m = mailbox(name, topology.shared());
             RedisMailbox<String> other = mailbox(name, topology.shared())) {
            m.sendBatch(Collections.nCopies(10, "x"));
            m.send("y");
            List<Message<String>> ten = m.receive(TEN);
            Message<String> eleventh = m.receive().get(0);
            List<Message<String>> eleven = new ArrayList<>(ten);
            eleven.add(eleventh);
            Map<String, Object> before = topology.state(name);

            assertThatThrownBy(() -> m.acknowledgeAndReceive(eleven, TEN, s -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 to 10");
            assertThatThrownBy(() -> other.acknowledgeAndReceive(List.of(eleventh), TEN, s -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not received from");
            assertThat(topology.state(name)).isEqualTo(before);
            m.acknowledgeBatch(ten);
            eleventh.acknowledge();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a message received through an overtaken fenced view refuses the whole call: nothing settled or received")
    void fenced(Topology topology) {
        String name = unique("fenced");
        try (RedisMailbox<String> m = mailbox(name, topology.shared())) {
            m.sendBatch(List.of("a", "b"));
            Message<String> held = m.fenced(5).receive().get(0);
            Message<String> plain = m.receive().get(0);
            m.fenced(6).receive(); // the successor's first call
            Map<String, Object> before = topology.state(name);

            assertThatThrownBy(() -> m.acknowledgeAndReceive(List.of(plain, held), TEN, s -> { }))
                    .isInstanceOf(FencedException.class);
            assertThat(topology.state(name)).isEqualTo(before);
        }
    }

    @Test
    @DisplayName("is one script call: one round trip for the acknowledgements and the receive")
    void oneRoundTrip() {
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled client = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = mailbox("trips", client)) {
            m.sendBatch(List.of("a", "b", "c"));
            List<Message<String>> held = m.acknowledgeAndReceive(List.of(), ReceiveOptions.defaults(), s -> { });
            held = m.acknowledgeAndReceive(held, ReceiveOptions.defaults(), s -> { }); // scripts loaded by now
            long before = scriptCalls(client);

            List<Message<String>> last = m.acknowledgeAndReceive(held, ReceiveOptions.defaults(), s -> { });

            assertThat(scriptCalls(client) - before).isEqualTo(1);
            assertThat(last).extracting(Message::body).containsExactly("c");
            assertThat(m.approximateCount()).isEqualTo(1);
        }
    }

    /** EVAL and EVALSHA calls the server has counted (INFO commandstats). */
    private static long scriptCalls(JedisPooled client) {
        String stats = new String((byte[]) client.sendCommand(Protocol.Command.INFO, "commandstats"),
                StandardCharsets.UTF_8);
        long calls = 0;
        Matcher matcher = Pattern.compile("cmdstat_(?:eval|evalsha):calls=(\\d+)").matcher(stats);
        while (matcher.find()) {
            calls += Long.parseLong(matcher.group(1));
        }
        return calls;
    }
}
