package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.testkit.InspectionContract;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inspection contract on RedisMailbox, on a standalone server (RedisClusterInspectionTest: on a 3-master cluster). Redis deadlines are the server's clock, so letting
 * time pass is waiting for it: the test that needs it waits twice a 300 ms timeout.
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
    protected void elapse(Duration duration) {
        try {
            Thread.sleep(duration.toMillis()); // the server's clock is the one that counts: nothing to move
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
