package dev.mailbox.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;

/**
 * Many mailboxes on one small pooled client, as a mailbox node has them: long-polling mailboxes do not
 * hold the pool's connections while they wait, and closing them hands nothing back with an unread reply.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@ExtendWith(SharedRedis.class)
class SharedClientTest {

    private static final int POOL = 2;
    private static final int WAITERS = 6;

    @Test
    @DisplayName("more mailboxes long-poll than the pool has connections, and the client still serves other calls")
    void waitersDoNotHoldThePool() throws Exception {
        SharedRedis.Standalone s = SharedRedis.standalone();
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(POOL);
        ExecutorService threads = Executors.newCachedThreadPool();
        List<RedisMailbox<String>> waiting = new ArrayList<>();
        try (JedisPooled client = new JedisPooled(pool, s.server.host(), s.server.port());
             Jedis observer = new Jedis(s.server.host(), s.server.port())) {
            int channelsBefore = observer.pubsubChannels().size();
            List<Future<List<Message<String>>>> receives = new ArrayList<>();
            for (int i = 0; i < WAITERS; i++) {
                RedisMailbox<String> m = RedisMailbox.builder(Topology.unique("poll"), Codec.utf8()).client(client).build();
                waiting.add(m);
                receives.add(threads.submit(() -> m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(60)))));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (observer.pubsubChannels().size() - channelsBefore < WAITERS) {
                assertThat(System.nanoTime() - until).as("all %d waiters subscribed", WAITERS).isNegative();
                Thread.sleep(20); // polls the server's state; nothing here can signal it
            }
            try (RedisMailbox<String> busy = RedisMailbox.builder(Topology.unique("busy"), Codec.utf8()).client(client).build()) {
                Future<String> cycle = threads.submit(() -> {
                    busy.send("x");
                    List<Message<String>> got = busy.receive(ReceiveOptions.defaults().withWaitTime(Duration.ZERO));
                    got.get(0).acknowledge();
                    return got.get(0).body();
                });
                assertThat(cycle.get(20, TimeUnit.SECONDS)).as("a send, receive and acknowledge while they wait").isEqualTo("x");
            }
            waiting.get(0).send("wake");
            assertThat(receives.get(0).get(20, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("wake");
            for (RedisMailbox<String> m : waiting) {
                m.close(); // the rest are cut short by close
            }
            for (Future<List<Message<String>>> f : receives.subList(1, receives.size())) {
                try {
                    assertThat(f.get(20, TimeUnit.SECONDS)).isEmpty();
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(MailboxClosedException.class);
                }
            }
            // every connection the pool lent came back clean: a stray reply would surface in these calls
            try (RedisMailbox<String> after = RedisMailbox.builder(Topology.unique("after"), Codec.utf8()).client(client).build()) {
                for (int i = 0; i < 50; i++) {
                    after.send("m" + i);
                    assertThat(after.approximateCount()).isEqualTo(i + 1);
                }
            }
        } finally {
            waiting.forEach(RedisMailbox::close);
            threads.shutdownNow();
        }
    }
}
