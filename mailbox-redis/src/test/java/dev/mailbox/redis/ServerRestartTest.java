package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.JedisPooled;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ServerRestartTest {

    private static final int MESSAGES = 600;

    @Test
    @SuppressWarnings("unchecked")
    @DisplayName("redis-server SIGKILLed mid-stream (AOF, fsync always) loses no message whose send returned; clients recover")
    void killAndRestart() throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start(Map.of("appendonly", "yes", "appendfsync", "always"));
             JedisPooled client = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> mailbox = RedisMailbox.builder("restart", Codec.utf8()).client(client).build();
             RedisMailbox<String> wakeMailbox = RedisMailbox.builder("restart-wake", Codec.utf8()).client(client).build()) {

            Set<String> returned = ConcurrentHashMap.newKeySet();  // send() returned normally
            Set<String> attempted = ConcurrentHashMap.newKeySet();
            Set<String> received = ConcurrentHashMap.newKeySet();
            CountDownLatch halfway = new CountDownLatch(1);
            AtomicBoolean producing = new AtomicBoolean(true);
            int[] failures = new int[1];

            Thread producer = new Thread(() -> {
                for (int i = 0; i < MESSAGES; i++) {
                    String body = "m" + i;
                    attempted.add(body);
                    while (true) {
                        try {
                            mailbox.send(body);
                            returned.add(body);
                            break;
                        } catch (MailboxException e) {
                            failures[0]++;
                            pause(20); // the server is down; the same client retries
                        }
                    }
                    if (i == MESSAGES / 2) {
                        halfway.countDown();
                    }
                }
                producing.set(false);
            }, "producer");
            Thread consumer = new Thread(() -> {
                ReceiveOptions options = ReceiveOptions.defaults().withMaxMessages(10)
                        .withVisibilityTimeout(Duration.ofSeconds(2)).withWaitTime(Duration.ofMillis(500));
                while (producing.get() || count(mailbox) != 0) {
                    try {
                        for (Message<String> m : mailbox.receive(options)) {
                            received.add(m.body());
                            m.acknowledge();
                        }
                    } catch (MailboxException e) {
                        pause(20); // down, or an ack whose reply was lost: the message comes back
                    }
                }
            }, "consumer");
            // a receive blocked across the crash must still be woken afterwards
            List<Message<String>>[] woken = new List[1];
            Thread waiter = new Thread(() -> woken[0] = wakeMailbox.receive(
                    ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60))), "waiter");
            waiter.start();
            RedisContractTest.awaitBlocked(waiter);

            producer.start();
            assertThat(halfway.await(60, TimeUnit.SECONDS)).isTrue();
            long backlog = mailbox.approximateCount();
            server.kill();
            pause(300);
            server.restart();
            // nothing consumed yet: the whole backlog has to survive the crash
            consumer.start();
            wakeMailbox.send("after the restart");
            waiter.join(30_000);
            assertThat(woken[0]).extracting(Message::body).containsExactly("after the restart");
            assertThat(backlog).isGreaterThan(MESSAGES / 2);

            producer.join(120_000);
            consumer.join(120_000);
            assertThat(producer.isAlive() || consumer.isAlive()).isFalse();

            assertThat(failures[0]).as("sends failed while the server was down").isPositive();
            assertThat(received).as("every message whose send returned was received").containsAll(returned);
            assertThat(attempted).as("nothing was received that was never sent").containsAll(received);
            assertThat(mailbox.approximateCount()).isZero();
        }
    }

    private static long count(RedisMailbox<String> m) {
        try {
            return m.approximateCount();
        } catch (MailboxException e) {
            return -1;
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
