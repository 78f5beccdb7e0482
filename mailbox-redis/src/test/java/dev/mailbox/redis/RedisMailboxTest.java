package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisMailboxTest {

    private static String unique(String hint) {
        return hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static RedisMailbox<String> standalone(String name) {
        return RedisMailbox.builder(name, Codec.utf8()).client(SharedRedis.standalone().client).build();
    }

    /** Starts a receive on its own thread and returns once it is blocked waiting for a notice. */
    private static CompletableFuture<List<Message<String>>> blockedReceive(RedisMailbox<String> m, ReceiveOptions o) {
        CompletableFuture<List<Message<String>>> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(m.receive(o));
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        t.setDaemon(true);
        t.start();
        RedisContractTest.awaitBlocked(t);
        return f;
    }

    @Nested
    @DisplayName("the builder")
    class Builder {

        @Test
        @DisplayName("needs exactly one of a client and a URI, and refuses bad names, prefixes and tags")
        void validation() {
            UnifiedJedis client = SharedRedis.standalone().client;
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one of client");
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).client(client).uri("redis://127.0.0.1:1").build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one of client");
            assertThatThrownBy(() -> RedisMailbox.builder("has space", Codec.utf8()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 161 characters");
            assertThatThrownBy(() -> RedisMailbox.builder("x".repeat(162), Codec.utf8()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).keyPrefix("a{b"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'{'");
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).hashTag("a}b"))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).uri("http://x"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis://");
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).keyTtl(Duration.ofMillis(10)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 second");
            assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).capacity(-1))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        @DisplayName("takes only a RedisMailbox on the same client as dead-letter mailbox")
        void deadLetterChecks() {
            try (InMemoryMailbox<String> memory = new InMemoryMailbox<>("elsewhere");
                 RedisServerProcess other = RedisServerProcess.start();
                 JedisPooled otherClient = new JedisPooled(other.host(), other.port());
                 RedisMailbox<String> foreign = RedisMailbox.builder("dlq", Codec.utf8()).client(otherClient).build()) {
                assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).redrivePolicy(RedrivePolicy.of(2, memory)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be a RedisMailbox");
                assertThatThrownBy(() -> RedisMailbox.builder("m", Codec.utf8()).client(SharedRedis.standalone().client)
                        .redrivePolicy(RedrivePolicy.of(2, foreign)).build())
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("same Redis client");
            }
        }

        @Test
        @DisplayName("on a cluster, wants the dead-letter mailbox in the source's slot and says how")
        void clusterSlot() {
            UnifiedJedis cluster = SharedRedis.cluster().client;
            String source = unique("orders");
            try (RedisMailbox<String> elsewhere = RedisMailbox.builder(unique("dlq"), Codec.utf8()).client(cluster).build();
                 RedisMailbox<String> sameSlot = RedisMailbox.builder(unique("dlq"), Codec.utf8()).client(cluster)
                         .hashTag(source).build()) {
                assertThatThrownBy(() -> RedisMailbox.builder(source, Codec.utf8()).client(cluster)
                        .redrivePolicy(RedrivePolicy.of(1, elsewhere)).build())
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(".hashTag(\"" + source + "\")");

                try (RedisMailbox<String> m = RedisMailbox.builder(source, Codec.utf8()).client(cluster)
                        .redrivePolicy(RedrivePolicy.of(1, sameSlot)).build()) {
                    m.send("doomed");
                    m.receive().get(0).nack();
                    assertThat(m.receive()).isEmpty();
                    assertThat(sameSlot.receive().get(0).body()).isEqualTo("doomed");
                }
            }
        }
    }

    @Nested
    @DisplayName("keys")
    class Keys {

        @Test
        @DisplayName("share one hash tag: mailbox:{name}:..., and name:... under another mailbox's tag")
        void layout() {
            UnifiedJedis client = SharedRedis.standalone().client;
            String name = unique("layout");
            try (RedisMailbox<String> m = standalone(name);
                 RedisMailbox<String> tagged = RedisMailbox.builder(name + "-dlq", Codec.utf8()).client(client)
                         .keyPrefix("app:").hashTag(name).build()) {
                assertThat(m.readyKey()).isEqualTo("mailbox:{" + name + "}:ready");
                assertThat(tagged.readyKey()).isEqualTo("app:{" + name + "}:" + name + "-dlq:ready");

                m.send("now", SendOptions.defaults().withAttribute("k", "v"));
                m.send("later", SendOptions.defaults().withDelay(Duration.ofMinutes(5)));
                String base = "mailbox:{" + name + "}:";
                assertThat(client.type(base + "ready")).isEqualTo("list");
                assertThat(client.type(base + "timed")).isEqualTo("zset");
                assertThat(client.type(base + "body")).isEqualTo("hash");
                assertThat(client.type(base + "meta")).isEqualTo("hash");
                assertThat(client.type(base + "attr")).isEqualTo("hash");
                assertThat(client.llen(base + "ready")).isEqualTo(1);
                assertThat(client.zcard(base + "timed")).isEqualTo(1);
                assertThat(client.hget(base + "meta", m.receive().get(0).id())).matches("\\d+\\|1\\|a\\|\\d+\\|[0-9a-f]+-1");
            }
        }

        @Test
        @DisplayName("carry the configured TTL, renewed by every operation that changes the mailbox")
        void ttl() {
            UnifiedJedis client = SharedRedis.standalone().client;
            String name = unique("ttl");
            try (RedisMailbox<String> m = RedisMailbox.builder(name, Codec.utf8()).client(client)
                    .keyTtl(Duration.ofHours(2)).build()) {
                m.send("x");
                long ttl = client.pttl("mailbox:{" + name + "}:body");
                assertThat(ttl).isBetween(Duration.ofHours(2).minusMinutes(1).toMillis(), Duration.ofHours(2).toMillis());
                assertThat(client.pttl("mailbox:{" + name + "}:seq")).isPositive();
            }
            try (RedisMailbox<String> m = standalone(unique("nottl"))) {
                m.send("x");
                assertThat(client.pttl(m.readyKey())).isEqualTo(-1);
            }
        }

        @Test
        @DisplayName("a send refused as over capacity still renews the TTL of the ready list it may have made")
        void ttlOfARefusedSend() throws Exception {
            UnifiedJedis client = SharedRedis.standalone().client;
            String name = unique("ttlfull");
            try (RedisMailbox<String> m = RedisMailbox.builder(name, Codec.utf8()).client(client)
                    .keyTtl(Duration.ofSeconds(1)).capacity(1).build()) {
                m.send("a");
                assertThat(m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMillis(100)))).hasSize(1);
                Thread.sleep(200); // "a" is due again but still in the timed set: the next send promotes it
                assertThatThrownBy(() -> m.send("b")).isInstanceOf(MailboxFullException.class);
                // the send's promotion made a new ready list; without a TTL it outlives the message it names
                assertThat(client.pttl(m.readyKey())).as("ready list's TTL").isPositive();
                Thread.sleep(1_500); // the keys expire
                assertThat(m.approximateCount()).as("an expired mailbox holds nothing").isZero();
                assertThat(m.send("c")).as("and takes a message again").isNotNull();
            }
        }

        @Test
        @DisplayName("the id counter outlives the deduplication ids: after the keys expire, a retry never answers a reused id")
        void counterOutlivesDeduplication() throws Exception {
            UnifiedJedis client = SharedRedis.standalone().client;
            String name = unique("ttldedup");
            try (RedisMailbox<String> m = RedisMailbox.builder(name, Codec.utf8()).client(client)
                    .keyTtl(Duration.ofSeconds(1)).build()) {
                SendOptions once = SendOptions.defaults().withDeduplicationId("order-42");
                String first = m.send("order-42", once);
                assertThat(client.pttl("mailbox:{" + name + "}:seq")).as("counter's TTL")
                        .isGreaterThan(Limits.DEDUPLICATION_WINDOW.toMillis() - 60_000);
                Thread.sleep(1_500); // idle past the key TTL: the messages expire
                String other = m.send("order-43");
                assertThat(m.send("order-42", once)).as("the retry still answers the first send's id").isEqualTo(first);
                assertThat(other).as("an unrelated message does not get that id").isNotEqualTo(first);
            }
        }
    }

    @Test
    @DisplayName("with more than 1000 messages due at once, a message sent after all of them comes after all of them")
    void moreThanAThousandDue() throws Exception {
        try (RedisMailbox<String> m = standalone(unique("due"))) {
            SendOptions delayed = SendOptions.defaults().withDelay(Duration.ofSeconds(3));
            long start = System.nanoTime();
            for (int b = 0; b < 101; b++) {
                List<String> bodies = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    bodies.add("d" + (b * 10 + i));
                }
                m.sendBatch(bodies, delayed);
            }
            long sentMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assumeTrue(sentMs < 2_500, "the 1,010 delayed sends took " + sentMs + " ms: some could be due already");
            // every delayed message is due, none promoted yet: the last one sent is due 3 s after the sends ended
            // (sleeping until 3.5 s after the first send left the last ones not due when sending took > 0.5 s)
            Thread.sleep(3_500);
            m.send("late");
            List<String> order = new ArrayList<>();
            List<Message<String>> got;
            ReceiveOptions ten = ReceiveOptions.defaults().withMaxMessages(10).withVisibilityTimeout(Duration.ofMinutes(5));
            while (!(got = m.receive(ten)).isEmpty()) {
                got.forEach(x -> order.add(x.body()));
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 1_010; i++) {
                expected.add("d" + i);
            }
            expected.add("late");
            assertThat(order).as("the order they became visible in").containsExactlyElementsOf(expected);
        }
    }

    @Test
    @DisplayName("a mailbox built from a URI owns its client and closes it")
    void ownsUriClient() {
        RedisMailbox<String> m = RedisMailbox.builder(unique("uri"), Codec.utf8())
                .uri(SharedRedis.standalone().server.uri()).build();
        m.send("x");
        assertThat(m.approximateCount()).isEqualTo(1);
        m.purge();
        m.close();
        assertThatThrownBy(m::approximateCount).isInstanceOf(MailboxClosedException.class);
    }

    @Test
    @DisplayName("an id in the ready list whose message is gone is dropped by the next receive, not delivered without a body")
    void orphanIdDropped() {
        try (RedisMailbox<String> m = standalone(unique("orphan"))) {
            m.send("a");
            // what an acknowledgement wrongly taken for current (the server's clock stepped back) leaves behind
            SharedRedis.standalone().client.lpush(m.readyKey(), "0000000000ff");

            assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10))).extracting(Message::body)
                    .containsExactly("a");
            assertThat(SharedRedis.standalone().client.llen(m.readyKey())).isZero();
            assertThat(SharedRedis.standalone().client.hexists(m.readyKey().replaceFirst("ready$", "meta"), "0000000000ff"))
                    .as("no metadata recreated for it").isFalse();
        }
    }

    @Test
    @DisplayName("a receive never waits for the wake subscription: with pub/sub refused it returns what is there at once, and polls")
    void receiveWithoutPubSub() throws Exception {
        RedisServerProcess server = SharedRedis.standalone().server;
        try (UnifiedJedis noPubSub = new UnifiedJedis(new HostAndPort(server.host(), server.port())) {
                 @Override
                 public void subscribe(JedisPubSub listener, String... channels) {
                     throw new JedisConnectionException("pub/sub refused in this test");
                 }
             };
             RedisMailbox<String> m = RedisMailbox.builder(unique("nopubsub"), Codec.utf8()).client(noPubSub).build()) {
            m.send("there");
            long start = System.nanoTime();
            List<Message<String>> got = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10)));
            assertThat(got).extracting(Message::body).containsExactly("there");
            // before, it first waited up to 2 s for a subscription that never came
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1_000));

            CompletableFuture<List<Message<String>>> waiter =
                    blockedReceive(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(30)));
            m.acknowledgeAndReceive(got, ReceiveOptions.defaults(), stale -> {
                throw new AssertionError("stale: " + stale.id());
            });
            m.send("later");
            assertThat(waiter.get(20, TimeUnit.SECONDS)).as("found by polling, without a notice")
                    .extracting(Message::body).containsExactly("later");
        }
    }

    @Test
    @DisplayName("receive() uses the builder's default receive options")
    void defaults() {
        try (RedisMailbox<String> m = RedisMailbox.builder(unique("defaults"), Codec.utf8())
                .client(SharedRedis.standalone().client)
                .defaultReceiveOptions(ReceiveOptions.defaults().withMaxMessages(3)).build()) {
            m.sendBatch(List.of("a", "b", "c", "d"));
            assertThat(m.receive()).hasSize(3);
        }
    }

    @Nested
    @DisplayName("long polling")
    class LongPolling {

        @Test
        @DisplayName("an idle waiter costs at most about two commands a second (here: none between start and end)")
        void idleCost() throws Exception {
            try (RedisServerProcess server = RedisServerProcess.start();
                 JedisPooled client = new JedisPooled(server.host(), server.port());
                 RedisMailbox<String> m = RedisMailbox.builder("idle", Codec.utf8()).client(client).build()) {
                assertThat(m.receive()).isEmpty(); // loads the receive script; waits for nothing
                long before = scriptCalls(server);
                List<Message<String>> got = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(4)));
                long calls = scriptCalls(server) - before;

                assertThat(got).isEmpty();
                // one receive script at the start, one when the mailbox's wake subscription comes up (notices sent
                // before it were not heard), one when the wait ends; a 300 ms poller would need ~13
                assertThat(calls).isLessThanOrEqualTo(3);
            }
        }

        @Test
        @DisplayName("the wake subscription comes back quickly after every one of many drops (its backoff starts over once it was up)")
        void resubscribesAfterEveryDrop() throws Exception {
            try (RedisServerProcess server = RedisServerProcess.start();
                 JedisPooled client = new JedisPooled(server.host(), server.port());
                 RedisMailbox<String> m = RedisMailbox.builder("drops", Codec.utf8()).client(client).build()) {
                CompletableFuture<List<Message<String>>> waiter =
                        blockedReceive(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60)));
                awaitSubscribers(server, 1, Duration.ofSeconds(10));
                long slowest = 0;
                for (int drop = 0; drop < 7; drop++) {
                    long start = System.nanoTime();
                    server.call("CLIENT", "KILL", "TYPE", "pubsub");
                    awaitSubscribers(server, 0, Duration.ofSeconds(10)); // the drop (a reconnect takes 50 ms at least)
                    awaitSubscribers(server, 1, Duration.ofSeconds(10));
                    slowest = Math.max(slowest, System.nanoTime() - start);
                }
                // a backoff that only ever doubled would wait 1.6 s after the sixth drop and 2 s after the seventh
                assertThat(Duration.ofNanos(slowest)).isLessThan(Duration.ofMillis(1_000));
                m.send("still heard");
                assertThat(waiter.get(20, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("still heard");
            }
        }

        @Test
        @DisplayName("a waiter wakes when a delayed message that was sent while it waited becomes due")
        void wakesForNewDelay() throws Exception {
            try (RedisMailbox<String> m = standalone(unique("delay"))) {
                CompletableFuture<List<Message<String>>> waiter =
                        blockedReceive(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60)));
                long start = System.nanoTime();
                m.send("soon", SendOptions.defaults().withDelay(Duration.ofMillis(300)));

                List<Message<String>> got = waiter.get(30, TimeUnit.SECONDS);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(got).extracting(Message::body).containsExactly("soon");
                // the waiter re-timed for the new deadline instead of sleeping to the end of its wait
                assertThat(ms).isBetween(250L, 30_000L);
            }
        }

        @Test
        @DisplayName("a waiter wakes when an extend brings a message's deadline closer")
        void wakesForShorterVisibility() throws Exception {
            try (RedisMailbox<String> m = standalone(unique("shorter"))) {
                m.send("x");
                Message<String> held = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofMinutes(10))).get(0);
                CompletableFuture<List<Message<String>>> waiter =
                        blockedReceive(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60)));
                long start = System.nanoTime();
                held.extendVisibility(Duration.ofMillis(300));

                List<Message<String>> got = waiter.get(30, TimeUnit.SECONDS);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(got).hasSize(1);
                assertThat(got.get(0).deliveryCount()).isEqualTo(2);
                assertThat(ms).as("woken for the new deadline, not at the end of its 60 s wait").isLessThan(30_000);
            }
        }

        @Test
        @DisplayName("blocked receives hold no pooled connection: 12 waiters on a pool of 4 do not block a send")
        void noConnectionStarvation() throws Exception {
            RedisServerProcess server = SharedRedis.standalone().server;
            GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
            pool.setMaxTotal(4);
            pool.setMaxWait(Duration.ofSeconds(2)); // a starved pool would fail a borrow after 2 s
            try (JedisPooled client = new JedisPooled(pool, new HostAndPort(server.host(), server.port()),
                    DefaultJedisClientConfig.builder().build());
                 RedisMailbox<String> m = RedisMailbox.builder(unique("pool"), Codec.utf8()).client(client).build()) {
                List<CompletableFuture<List<Message<String>>>> waiters = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    waiters.add(blockedReceive(m, ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60))));
                }

                m.sendBatch(List.of("a", "b", "c"));

                List<String> bodies = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (bodies.size() < 3 && System.nanoTime() < deadline) {
                    List<CompletableFuture<List<Message<String>>>> finished = new ArrayList<>();
                    for (CompletableFuture<List<Message<String>>> w : waiters) {
                        if (w.isDone()) {
                            finished.add(w);
                        }
                    }
                    for (CompletableFuture<List<Message<String>>> w : finished) {
                        w.get().forEach(msg -> bodies.add(msg.body()));
                    }
                    waiters.removeAll(finished);
                    Thread.onSpinWait();
                }
                assertThat(bodies).containsExactlyInAnyOrder("a", "b", "c");
                m.close(); // wakes the rest
                for (CompletableFuture<List<Message<String>>> w : waiters) {
                    assertThat(w.get(10, TimeUnit.SECONDS)).isEmpty();
                }
            }
        }
    }

    @Test
    @DisplayName("on the cluster, 8 producers and 8 consumers: every message acked once, every handle unique")
    void manyThreadsOnCluster() throws Exception {
        int producers = 8;
        int perProducer = 250;
        int total = producers * perProducer;
        Set<String> acked = ConcurrentHashMap.newKeySet();
        Set<String> handles = ConcurrentHashMap.newKeySet();
        List<String> problems = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(total);
        try (RedisMailbox<String> m = RedisMailbox.builder(unique("many"), Codec.utf8())
                .client(SharedRedis.cluster().client).build()) {
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                threads.add(new Thread(() -> {
                    ReceiveOptions o = ReceiveOptions.defaults().withMaxMessages(10)
                            .withVisibilityTimeout(Duration.ofMinutes(5)).withWaitTime(Duration.ofSeconds(1));
                    while (done.getCount() > 0) {
                        List<Message<String>> batch = m.receive(o);
                        for (Message<String> msg : batch) {
                            if (!handles.add(msg.receiptHandle())) {
                                problems.add("handle reused " + msg.receiptHandle());
                            }
                        }
                        if (!batch.isEmpty()) {
                            assertThat(m.acknowledgeBatch(batch)).isEmpty();
                            for (Message<String> msg : batch) {
                                if (!acked.add(msg.body())) {
                                    problems.add("acked twice " + msg.body());
                                }
                                done.countDown();
                            }
                        }
                    }
                }));
            }
            for (int p = 0; p < producers; p++) {
                int producer = p;
                threads.add(new Thread(() -> {
                    for (int i = 0; i < perProducer; i++) {
                        m.send(producer + ":" + i);
                    }
                }));
            }
            threads.forEach(Thread::start);
            assertThat(done.await(90, TimeUnit.SECONDS)).isTrue();
            for (Thread t : threads) {
                t.join(10_000);
            }
            assertThat(problems).isEmpty();
            assertThat(acked).hasSize(total);
            assertThat(m.approximateCount()).isZero();
        }
    }

    private static final Pattern CALLS = Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)");

    /** Waits until the server has {@code n} clients subscribed to one channel. */
    private static void awaitSubscribers(RedisServerProcess server, int n, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String clients = String.valueOf(server.call("CLIENT", "LIST", "TYPE", "pubsub"));
            // a wake hub's connection holds a channel of its own besides the mailboxes'
            if (clients.lines().filter(l -> l.matches(".*\\bsub=[1-9].*")).count() == n) {
                return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no " + n + " subscriber(s) within " + timeout);
    }

    private static long scriptCalls(RedisServerProcess server) {
        String info = String.valueOf(server.call("INFO", "commandstats"));
        long total = 0;
        Matcher m = CALLS.matcher(info);
        while (m.find()) {
            total += Long.parseLong(m.group(2));
        }
        return total;
    }
}
