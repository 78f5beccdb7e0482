package dev.mailbox.redis;

import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.UnifiedJedis;

import java.util.UUID;

/**
 * The same contract on a 3-master cluster. The mailboxes of one test share a hash tag, so a
 * dead-letter mailbox is in its source's slot; different tests land on different slots and nodes.
 */
@DisplayName("RedisMailbox on a 3-master Redis Cluster meets the Mailbox contract")
class RedisClusterContractTest extends RedisContractTest {

    private final String hashTag = "tck-" + UUID.randomUUID();

    @Override
    UnifiedJedis client() {
        return SharedRedis.cluster().client;
    }

    @Override
    <T> void configure(RedisMailbox.Builder<T> b) {
        b.hashTag(hashTag);
    }
}
