package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the kit cannot see of FIFO and fair mailboxes on Redis: where their state lives (one slot, its TTL,
 * nothing left behind), the kind check between objects, the tenants' bookkeeping through lapses and late
 * acknowledgements, the wake-up a FIFO acknowledgement sends, and that a standard mailbox without group
 * ids runs exactly the commands version 2 ran.
 */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("message groups on Redis")
class GroupsTest {

    private static final ReceiveOptions TEN = ReceiveOptions.defaults().withMaxMessages(10);

    private static RedisMailbox<String> fifo(String name, UnifiedJedis client, FifoOptions options) {
        return RedisMailbox.builder(name, Codec.utf8()).client(client).fifo(options).build();
    }

    private static SendOptions group(String id) {
        return SendOptions.defaults().withGroupId(id);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a FIFO mailbox keeps its groups in gq, gready and gstate, in its slot, and leaves nothing behind")
    void fifoKeys(Topology topology) {
        UnifiedJedis c = topology.shared();
        String name = unique("fifo-keys");
        String base = Topology.base(name);
        String braces = "b{x}"; // after the mailbox's own {tag}, so it cannot move a key to another slot
        try (RedisMailbox<String> m = fifo(name, c, FifoOptions.defaults()
                .withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP))) {
            String a1 = m.send("a1", group("a").withAttribute("k", "v"));
            String b1 = m.send("b1", group(braces).withDeduplicationId("d1"));
            assertThat(c.zrange(base + "gq", 0, -1)).containsExactly("a " + a1, braces + " " + b1);
            assertThat(c.lrange(base + "gready", 0, -1)).containsExactly("a", braces);
            assertThat(c.hgetAll(base + "gstate")).isEqualTo(Map.of("a", "q", braces, "q"));
            assertThat(c.hget(base + "meta", a1)).matches("\\d+\\|0\\|G\\|\\|\\|\\|a");
            assertThat(c.hget(base + "meta", b1)).matches("\\d+\\|0\\|g\\|\\|\\|\\|b\\{x}");
            assertThat(c.get(base + "kind")).isEqualTo("fifo");
            String dedup = m.deduplicationKey(braces + " d1");
            assertThat(c.get(dedup)).isEqualTo(b1);
            for (String key : List.of(base + "gq", base + "gready", base + "gstate", base + "kind", dedup)) {
                assertThat(JedisClusterCRC16.getSlot(key)).as(key).isEqualTo(JedisClusterCRC16.getSlot(m.readyKey()));
            }
            assertThat(c.exists(base + "ready")).as("FIFO mailboxes do not use ready").isFalse();

            Message<String> got = m.receive().get(0);
            assertThat(got.id()).isEqualTo(a1);
            assertThat(got.sequenceNumber()).isEqualTo(String.format("%020d", Long.parseLong(a1, 16)));
            assertThat(c.hgetAll(base + "gstate")).isEqualTo(Map.of("a", "1", braces, "q"));
            assertThat(c.zrange(base + "gq", 0, -1)).containsExactly(braces + " " + b1);
            got.acknowledge();
            m.receive().get(0).acknowledge();
            for (String key : List.of("gq", "gready", "gstate", "timed", "body", "meta", "attr")) {
                assertThat(c.exists(base + key)).as("%s after everything was acknowledged", key).isFalse();
            }
        }
    }

    @Test
    @DisplayName("a FIFO mailbox declares FIFO order that holds runs, a standard one fairness and visibility order; both share delivery state")
    void capabilitiesDeclared() {
        UnifiedJedis c = Topology.STANDALONE.shared();
        try (RedisMailbox<String> f = fifo(unique("caps-fifo"), c, FifoOptions.defaults());
             RedisMailbox<String> s = mailbox(unique("caps-standard"), c)) {
            assertThat(f.capabilities().fifo()).isTrue();
            assertThat(f.capabilities().holdsRuns()).isTrue();
            assertThat(f.capabilities().fairness()).isFalse();
            assertThat(f.capabilities().visibilityOrder()).isFalse();
            assertThat(s.capabilities().fifo()).isFalse();
            assertThat(s.capabilities().holdsRuns()).isFalse();
            assertThat(s.capabilities().fairness()).isTrue();
            assertThat(s.capabilities().visibilityOrder()).isTrue();
            for (RedisMailbox<String> m : List.of(f, s)) {
                assertThat(m.capabilities().sharedDeliveryState()).isTrue();
                assertThat(m.capabilities().lateAcknowledge()).isTrue();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("objects of the other kind are refused at their first call, whichever came first; purge keeps the kind")
    void kindChecked(Topology topology) {
        UnifiedJedis c = topology.shared();
        String fifoName = unique("kind-fifo");
        String standardName = unique("kind-standard");
        try (RedisMailbox<String> f = fifo(fifoName, c, FifoOptions.defaults());
             RedisMailbox<String> wrongF = mailbox(fifoName, c);
             RedisMailbox<String> s = mailbox(standardName, c);
             RedisMailbox<String> wrongS = fifo(standardName, c, FifoOptions.defaults())) {
            assertThat(f.approximateCount()).isZero(); // empty: the first object's kind is taken
            assertThatThrownBy(() -> wrongF.send("x")).isInstanceOf(MailboxException.class)
                    .hasMessageContaining("'" + fifoName + "' is a FIFO mailbox").hasMessageContaining("never changes kind");
            s.send("standard message");
            assertThatThrownBy(() -> wrongS.receive()).isInstanceOf(MailboxException.class)
                    .hasMessageContaining("is a standard mailbox");
            assertThat(s.purge()).isEqualTo(1);
            assertThatThrownBy(() -> wrongS.send("y", group("a"))).as("after a purge").isInstanceOf(MailboxException.class);
            assertThat(s.approximateCount()).isZero();
        }
        // a mailbox whose kind key is gone (expired) shows its kind by its messages
        String older = unique("kind-derived");
        try (RedisMailbox<String> f = fifo(older, c, FifoOptions.defaults())) {
            f.send("a1", group("a"));
        }
        c.del(Topology.base(older) + "kind");
        try (RedisMailbox<String> wrong = mailbox(older, c);
             RedisMailbox<String> right = fifo(older, c, FifoOptions.defaults())) {
            assertThatThrownBy(wrong::approximateCount).isInstanceOf(MailboxException.class);
            assertThat(right.receive().get(0).body()).isEqualTo("a1");
        }
    }

    @Test
    @DisplayName("with a key TTL, FIFO and tenant keys live as long as the rest, renewed by every operation")
    void ttl() {
        UnifiedJedis c = SharedRedis.standalone().client;
        long twoHours = Duration.ofHours(2).toMillis();
        String fifoName = unique("ttl-fifo");
        try (RedisMailbox<String> m = RedisMailbox.builder(fifoName, Codec.utf8()).client(c)
                .fifo(FifoOptions.defaults()).keyTtl(Duration.ofHours(2)).build()) {
            m.sendBatch(List.of("a1", "a2"), group("a"));
            m.send("b1", group("b"));
            m.receive();
            String base = Topology.base(fifoName);
            for (String key : List.of("gq", "gready", "gstate", "kind")) {
                assertThat(c.pttl(base + key)).as(key).isBetween(twoHours - 60_000, twoHours);
            }
        }
        String fairName = unique("ttl-fair");
        try (RedisMailbox<String> m = RedisMailbox.builder(fairName, Codec.utf8()).client(c)
                .keyTtl(Duration.ofHours(2)).build()) {
            String base = Topology.base(fairName);
            int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
            for (int i = 0; i < min + 1; i += 10) {
                m.sendBatch(Collections.nCopies(Math.min(10, min + 1 - i), "n"), group("noisy"));
            }
            List<Message<String>> inFlight = new ArrayList<>();
            while (inFlight.size() < min) {
                inFlight.addAll(m.receive(TEN.withMaxMessages(Math.min(10, min - inFlight.size()))));
            }
            m.send("q", group("quiet"));
            assertThat(m.receive().get(0).body()).isEqualTo("q"); // the noisy tenant's last is set aside
            c.pexpire(base + "tflight", 1_000);
            c.pexpire(base + "tparked", 1_000);
            inFlight.get(0).acknowledge(); // an acknowledgement renews them too
            for (String key : List.of("tflight", "tparked")) {
                assertThat(c.pttl(base + key)).as(key).isBetween(twoHours - 60_000, twoHours);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a tenant's counts follow lapses, redeliveries and late acknowledgements of set-aside messages, and go when it is done")
    void tenantBookkeeping(Topology topology) {
        UnifiedJedis c = topology.shared();
        String name = unique("tenants");
        String base = Topology.base(name);
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        try (RedisMailbox<String> m = mailbox(name, c)) {
            List<String> bodies = new ArrayList<>();
            for (int i = 0; i <= min; i++) {
                bodies.add("a" + i);
            }
            for (int i = 0; i < bodies.size(); i += 10) {
                m.sendBatch(bodies.subList(i, Math.min(bodies.size(), i + 10)), group("a"));
            }
            Message<String> first = m.receive().get(0);
            List<Message<String>> others = new ArrayList<>();
            while (others.size() < min) {
                others.addAll(m.receive(TEN.withMaxMessages(Math.min(10, min - others.size()))));
            }
            assertThat(c.hget(base + "tflight", "a")).isEqualTo(Integer.toString(min + 1));
            assertThat(c.zscore(base + "timed", first.id() + " a")).as("a tenant's delivery in timed").isNotNull();
            assertThat(c.zscore(base + "timed", "fair")).isEqualTo(0.0);

            first.extendVisibility(Duration.ZERO); // lapses
            m.send("q", group("quiet")); // promotes it back to ready, ahead of q
            assertThat(c.hget(base + "tflight", "a")).as("a lapse leaves the count").isEqualTo(Integer.toString(min));
            assertThat(c.lrange(base + "ready", 0, -1)).hasSize(2).first().isEqualTo(first.id());

            // a has min in flight of min: noisy, so its lapsed message is set aside for q
            Message<String> q = m.receive().get(0);
            assertThat(q.body()).isEqualTo("q");
            assertThat(c.zrange(base + "tparked", 0, -1)).containsExactly("a " + first.id());
            first.acknowledge(); // late, while set aside
            assertThat(c.exists(base + "tparked")).isFalse();
            assertThat(m.approximateCount()).isEqualTo(min + 1L);

            assertThat(m.acknowledgeBatch(others.subList(0, 10))).isEmpty();
            assertThat(m.acknowledgeBatch(others.subList(10, 20))).isEmpty();
            assertThat(m.acknowledgeBatch(others.subList(20, min))).isEmpty();
            q.acknowledge();
            assertThat(c.exists(base + "tflight")).isFalse();
            assertThat(m.receive()).isEmpty(); // a receive that finds no tenant state removes 'fair'
            assertThat(c.zscore(base + "timed", "fair")).isNull();
            assertThat(m.approximateCount()).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a receive blocked on a group whose message is in flight wakes when that message is acknowledged")
    void fifoAcknowledgementWakes(Topology topology) throws Exception {
        try (RedisMailbox<String> m = fifo(unique("fifo-wake"), topology.shared(), FifoOptions.defaults())) {
            m.sendBatch(List.of("a1", "a2"), group("a"));
            Message<String> a1 = m.receive().get(0);
            ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20));
            CompletableFuture<List<Message<String>>> waiting = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    waiting.complete(m.receive(wait));
                } catch (Throwable e) {
                    waiting.completeExceptionally(e);
                }
            }, "fifo-waiter");
            t.start();
            RedisContractTest.awaitBlocked(t);
            long acknowledged = System.nanoTime();
            a1.acknowledge();
            List<Message<String>> got = waiting.get(20, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acknowledged);
            assertThat(got).extracting(Message::body).containsExactly("a2");
            assertThat(tookMs).as("woken by the acknowledgement, not at the end of the 20 s wait").isLessThan(10_000);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a receive parked without a thread on a FIFO group whose message is in flight completes when that message is acknowledged, and one on a nacked head when its timeout ends")
    void fifoParkedReceiveWakes(Topology topology) throws Exception {
        try (RedisMailbox<String> m = fifo(unique("fifo-park"), topology.shared(), FifoOptions.defaults())) {
            m.sendBatch(List.of("a1", "a2"), group("a"));
            Message<String> a1 = m.receive().get(0);
            ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20));
            CompletableFuture<List<Message<String>>> parked = m.receiveAsync(wait);
            // subscribed, a parked receive sleeps past the 20 s wait unless a notice wakes it
            SharedWakeTest.TestWaits.await(() -> m.wakeChannel().isSubscribed(), "subscribed");
            assertThat(parked).isNotDone();
            long acknowledged = System.nanoTime();
            a1.acknowledge();
            List<Message<String>> got = parked.get(20, TimeUnit.SECONDS);
            assertThat(got).extracting(Message::body).containsExactly("a2");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acknowledged))
                    .as("woken by the acknowledgement's notice, not at the end of the 20 s wait").isLessThan(10_000);

            // the group's head nacked with a timeout: the parked receive learns the new deadline and takes it then
            got.get(0).nack(Duration.ofMillis(400));
            long nacked = System.nanoTime();
            List<Message<String>> again = m.receiveAsync(wait).get(20, TimeUnit.SECONDS);
            assertThat(again).extracting(Message::body).containsExactly("a2");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nacked)).isBetween(350L, 10_000L);
            again.get(0).acknowledge();
        }
    }


    @Test
    @DisplayName("typed and system attributes (issue 32) come back from a FIFO mailbox, from its dead-letter mailbox"
            + " and from a tenant's message on a fair one, with their types")
    void typedAndSystemAttributesWithGroups() {
        UnifiedJedis c = Topology.STANDALONE.shared();
        SendOptions attributes = SendOptions.defaults().withAttribute("tenant", "acme")
                .withAttribute("total", dev.mailbox.api.AttributeValue.number("12.50"))
                .withAttribute("blob", dev.mailbox.api.AttributeValue.binary(new byte[] {0, 1, (byte) 0xff}))
                .withSystemAttribute("SenderId", "alice");
        String name = unique("fifo-typed");
        try (RedisMailbox<String> dlq = fifo(name + "-dlq", c, FifoOptions.defaults());
             RedisMailbox<String> m = RedisMailbox.builder(name, Codec.utf8()).client(c).fifo(FifoOptions.defaults())
                     .redrivePolicy(dev.mailbox.api.RedrivePolicy.of(1, dlq)).build();
             RedisMailbox<String> fair = mailbox(unique("fair-typed"), c)) {
            m.send("a1", attributes.withGroupId("a"));
            Message<String> got = m.receive().get(0);
            assertThat(got.typedAttributes()).isEqualTo(attributes.typedAttributes());
            assertThat(got.attributes()).isEqualTo(Map.of("tenant", "acme"));
            assertThat(got.systemAttributes()).isEqualTo(Map.of("SenderId", "alice"));
            got.nack();
            assertThat(m.receive()).isEmpty(); // past maxReceiveCount: moved to the dead-letter mailbox
            Message<String> dead = dlq.receive().get(0);
            assertThat(dead.body()).isEqualTo("a1");
            assertThat(dead.typedAttributes()).isEqualTo(attributes.typedAttributes());
            assertThat(dead.systemAttributes()).isEqualTo(Map.of("SenderId", "alice"));

            fair.send("t1", attributes.withGroupId("acme"));
            Message<String> tenant = fair.receive().get(0);
            assertThat(tenant.groupId()).isEqualTo("acme");
            assertThat(tenant.typedAttributes()).isEqualTo(attributes.typedAttributes());
            assertThat(tenant.systemAttributes()).isEqualTo(Map.of("SenderId", "alice"));
        }
    }


    @Test
    @DisplayName("a standard mailbox without group ids runs exactly the commands version 2's scripts ran: fairness costs it nothing")
    void noGroupIdsCostNothing() {
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled c = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = mailbox("now", c)) {
            V2Mailbox before = new V2Mailbox(c, "then", "then");
            m.approximateCount(); // the kind check, once per object, before counting

            Map<String, Long> v2 = commands(c, () -> {
                for (int i = 0; i < 20; i++) {
                    before.send(0, "", "", "x");
                    List<Object> got = before.receive(0, 1, 60_000, 0, before);
                    String id = string(got.get(3));
                    String token = string(got.get(7));
                    before.nack(id, token, 0);
                    got = before.receive(0, 1, 60_000, 0, before);
                    before.acknowledge(string(got.get(3)), string(got.get(7)));
                }
                before.send(1, "", "", "later");
            });
            Map<String, Long> v3 = commands(c, () -> {
                for (int i = 0; i < 20; i++) {
                    m.send("x");
                    m.receive().get(0).nack();
                    m.receive().get(0).acknowledge();
                }
                m.send("later", SendOptions.defaults().withDelay(Duration.ofMillis(1)));
            });
            assertThat(v3).isEqualTo(v2);
        }
    }

    /** @return the commands the server ran during {@code work}, by name, scripts themselves left out */
    private static Map<String, Long> commands(JedisPooled c, Runnable work) {
        c.sendCommand(Protocol.Command.CONFIG, "RESETSTAT");
        work.run();
        String stats = new String((byte[]) c.sendCommand(Protocol.Command.INFO, "commandstats"), StandardCharsets.UTF_8);
        Map<String, Long> out = new TreeMap<>();
        for (String line : stats.split("\\r?\\n")) {
            if (line.startsWith("cmdstat_")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                if (!List.of("eval", "evalsha", "config", "info").contains(command)) {
                    int at = line.indexOf("calls=") + "calls=".length();
                    out.put(command, Long.parseLong(line.substring(at, line.indexOf(',', at))));
                }
            }
        }
        return out;
    }

    private static String string(Object reply) {
        return new String((byte[]) reply, StandardCharsets.UTF_8);
    }
}
