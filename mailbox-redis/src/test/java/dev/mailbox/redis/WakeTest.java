package dev.mailbox.redis;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.mailbox.redis.Topology.mailbox;
import static dev.mailbox.redis.Topology.unique;
import static org.assertj.core.api.Assertions.assertThat;

/** The wake path of long polls: who is woken by a notice, and what a subscription holds. */
@ExtendWith(SharedRedis.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class WakeTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    @DisplayName("a waiter that leaves by an exception hands its wake-up on: the fenced-out holder does not keep the current one asleep")
    void wakeHandedOn(Topology topology) throws Exception {
        try (RedisMailbox<String> m = mailbox(unique("handon"), topology.shared())) {
            ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20));
            // subscribed first: a subscription coming up later wakes everyone and reorders the waiters
            m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(1)));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!m.wakeChannel().isSubscribed()) {
                assertThat(System.nanoTime()).as("subscribed within 10 s").isLessThan(deadline);
                Thread.onSpinWait();
            }
            Mailbox<String> old = m.fenced(1);
            Mailbox<String> current = m.fenced(2);
            Started<List<Message<String>>> oldHolder = async("old-holder", () -> old.receive(wait));
            RedisContractTest.awaitBlocked(oldHolder.thread);
            Started<List<Message<String>>> newHolder = async("new-holder", () -> current.receive(wait));
            RedisContractTest.awaitBlocked(newHolder.thread); // the fence is 2 now; the first in line is epoch 1

            long sent = System.nanoTime();
            m.send("work"); // its notice wakes one waiter: the old holder, whose next pass is refused
            List<Message<String>> got = newHolder.get(20, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);

            assertThat(got).extracting(Message::body).containsExactly("work");
            assertThat(oldHolder).failsWithin(Duration.ofSeconds(20)).withThrowableOfType(Exception.class)
                    .withCauseInstanceOf(FencedException.class);
            assertThat(tookMs).as("woken by the send, not by the end of its 20 s wait").isLessThan(10_000);
        }
    }

    @Test
    @DisplayName("on a JedisCluster, subscriptions hold no pooled connection: one thread long-polls 25 mailboxes in turn on a pool of 8 a node")
    void clusterSubscriptionsOutsideThePool() throws Exception {
        JedisCluster client = new JedisCluster(new HostAndPort("127.0.0.1", SharedRedis.cluster().servers.seedPort()));
        List<RedisMailbox<String>> boxes = new ArrayList<>();
        AtomicInteger polled = new AtomicInteger();
        try {
            for (int i = 0; i < 25; i++) {
                boxes.add(mailbox(unique("turn" + i), client));
            }
            ReceiveOptions wait = ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(50));
            Started<Void> poller = async("poller", () -> {
                for (RedisMailbox<String> b : boxes) { // each leaves its subscription up
                    b.receive(wait);
                    polled.incrementAndGet();
                }
                return null;
            });
            try {
                poller.get(20, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                // a script waiting for a pooled connection waits without end; the count below says where
            }
        } finally {
            boxes.forEach(RedisMailbox::close); // frees any pooled connection a subscription held
            client.close();
        }
        assertThat(polled.get()).as("25 receives of 50 ms, one after another, done within 20 s").isEqualTo(25);
    }

    /** A future run on a daemon thread of its own, which the test can watch. */
    private static final class Started<T> extends CompletableFuture<T> {
        private Thread thread;
    }

    private static <T> Started<T> async(String name, Callable<T> c) {
        Started<T> f = new Started<>();
        f.thread = new Thread(() -> {
            try {
                f.complete(c.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, name);
        f.thread.setDaemon(true);
        f.thread.start();
        return f;
    }
}
