package dev.mailbox.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.JedisPooled;

/**
 * The waiting receives of one client share a bounded set of subscriber connections and threads, and an idle
 * waiter costs Redis nothing: sized for CI (a few hundred waiters); the scale harness (RedisWaitersHarness in
 * benchmarks) runs 10,000.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SharedWakeTest {

    private static final Pattern CALLS = Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)");
    private static RedisServerProcess server;

    @BeforeAll
    static void start() {
        server = RedisServerProcess.start(); // of its own: the counts below must be this test's alone
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static long scriptCalls() {
        Matcher m = CALLS.matcher(String.valueOf(server.call("INFO", "commandstats")));
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(2));
        }
        return total;
    }

    /** Connections that hold a subscription now. */
    private static long subscriberConnections() {
        return String.valueOf(server.call("CLIENT", "LIST", "TYPE", "pubsub")).lines()
                .filter(l -> l.matches(".*\\bsub=[1-9].*")).count();
    }

    private static long clientConnections() {
        return String.valueOf(server.call("CLIENT", "LIST", "TYPE", "normal")).lines().count() - 1; // this call's
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    /** The name prefix of the wake threads of one client's mailboxes (on today's code: of every mailbox's). */
    private static String hubThreads(JedisPooled client) {
        return "mailbox-wake-" + Integer.toHexString(System.identityHashCode(client));
    }

    private static List<RedisMailbox<String>> mailboxes(JedisPooled client, String prefix, int n) {
        List<RedisMailbox<String>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(RedisMailbox.builder(prefix + i, Codec.utf8()).client(client).build());
        }
        return out;
    }

    @Test
    @DisplayName("200 threads blocked in receive on 200 mailboxes of one client share at most 2 subscriber "
            + "connections and threads (not one of each per mailbox), and each send still wakes its own waiter")
    void blockedWaitersShareSubscribers() throws Exception {
        int n = 200;
        try (JedisPooled client = new JedisPooled(server.host(), server.port())) {
            List<RedisMailbox<String>> boxes = mailboxes(client, "blocked-", n);
            List<CompletableFuture<List<Message<String>>>> waiting = new ArrayList<>();
            CountDownLatch started = new CountDownLatch(n);
            for (RedisMailbox<String> m : boxes) {
                CompletableFuture<List<Message<String>>> f = new CompletableFuture<>();
                Thread t = new Thread(() -> {
                    started.countDown();
                    try {
                        f.complete(m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60))));
                    } catch (RuntimeException e) {
                        f.completeExceptionally(e);
                    }
                }, "blocked-receiver");
                t.setDaemon(true);
                t.start();
                waiting.add(f);
            }
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            // every receive has run its first script and subscribed its channel (or asked to)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (scriptCalls() < n && System.nanoTime() - until < 0) {
                Thread.sleep(20);
            }
            Thread.sleep(500); // time for a subscriber per mailbox, if that is what it made, to show

            assertThat(subscriberConnections()).as("subscriber connections for %s waiting mailboxes", n)
                    .isBetween(1L, (long) WakeHub.SUBSCRIBERS);
            assertThat(threadsNamed(hubThreads(client))).as("wake threads").isLessThanOrEqualTo(WakeHub.SUBSCRIBERS + 1L);

            for (int i = 0; i < n; i += 4) {
                boxes.get(i).send("for " + i);
            }
            for (int i = 0; i < n; i += 4) {
                assertThat(waiting.get(i).get(10, TimeUnit.SECONDS)).as("waiter %s", i)
                        .extracting(Message::body).containsExactly("for " + i);
            }
            assertThat(waiting.get(1)).as("a mailbox nobody sent to still waits").isNotDone();
            boxes.forEach(RedisMailbox::close);
            for (CompletableFuture<List<Message<String>>> f : waiting) {
                assertThat(f.get(10, TimeUnit.SECONDS)).as("closing wakes the rest, empty-handed").isNotNull();
            }
        }
        TestWaits.await(() -> subscriberConnections() == 0, "the last mailbox closed drops the subscriptions");
    }

    @Test
    @DisplayName("600 receives parked without a thread on 600 mailboxes of one client: a handful of threads, at most "
            + "2 subscriber connections beside the pool, no script while idle; each send wakes its own")
    void parkedReceivesWithinBounds() throws Exception {
        int n = 600;
        long threadsBefore = Thread.activeCount();
        try (JedisPooled client = new JedisPooled(server.host(), server.port())) {
            List<RedisMailbox<String>> boxes = mailboxes(client, "parked-", n);
            List<CompletableFuture<List<Message<String>>>> waiting = new ArrayList<>();
            for (RedisMailbox<String> m : boxes) {
                waiting.add(m.receiveAsync(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60))));
            }
            TestWaits.await(() -> boxes.stream().allMatch(m -> m.wakeChannel().isSubscribed()),
                    "every channel subscribed");

            long threadsWaiting = Thread.activeCount() - threadsBefore;
            long scripts = scriptCalls();
            Thread.sleep(1_500); // idle: nothing sent, no wait ends

            assertThat(scriptCalls() - scripts).as("scripts run by %s idle waiters in 1.5 s", n).isZero();
            assertThat(threadsNamed(hubThreads(client))).as("wake threads")
                    .isLessThanOrEqualTo(WakeHub.SUBSCRIBERS + 1L + WakeHub.PASS_THREADS);
            assertThat(threadsWaiting).as("threads added while %s receives wait", n).isLessThan(30);
            assertThat(subscriberConnections()).isBetween(1L, (long) WakeHub.SUBSCRIBERS);
            assertThat(clientConnections()).as("pooled connections (at most the pool's 8)").isLessThanOrEqualTo(8);

            for (int i = 0; i < n; i += 6) {
                boxes.get(i).send("for " + i);
            }
            for (int i = 0; i < n; i += 6) {
                assertThat(waiting.get(i).get(10, TimeUnit.SECONDS)).as("waiter %s", i)
                        .extracting(Message::body).containsExactly("for " + i);
            }
            assertThat(waiting.get(1)).as("a mailbox nobody sent to still waits").isNotDone();

            // a cancelled receive takes nothing: the next send goes to the one who still waits
            RedisMailbox<String> shared = boxes.get(5);
            CompletableFuture<List<Message<String>>> second =
                    shared.receiveAsync(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60)));
            waiting.get(5).cancel(false);
            shared.send("to the second");
            assertThat(second.get(10, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("to the second");

            boxes.forEach(RedisMailbox::close);
            for (int i = 0; i < n; i++) {
                if (i != 5) {
                    assertThat(waiting.get(i).get(10, TimeUnit.SECONDS)).as("closing ends every wait").isNotNull();
                }
            }
        }
    }

    @Test
    @DisplayName("a wait that runs to its end with nothing heard costs one script, not a second one to find nothing")
    void idleWaitCostsOneScript() throws Exception {
        try (JedisPooled client = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("idle-one", Codec.utf8()).client(client).build()) {
            m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(1))); // subscribes
            TestWaits.await(() -> m.wakeChannel().isSubscribed(), "subscribed");
            long before = scriptCalls();
            assertThat(m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(800)))).isEmpty();
            assertThat(m.receiveAsync(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(800)))
                    .get(10, TimeUnit.SECONDS)).isEmpty();
            assertThat(scriptCalls() - before).as("scripts for two idle waits of 800 ms").isEqualTo(2);
        }
    }

    /** Polls a condition that no latch can signal (a Redis server's state). */
    static final class TestWaits {
        static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!condition.getAsBoolean()) {
                assertThat(System.nanoTime() - until).as("timed out waiting for: " + what).isNegative();
                Thread.sleep(10);
            }
        }
    }
}
