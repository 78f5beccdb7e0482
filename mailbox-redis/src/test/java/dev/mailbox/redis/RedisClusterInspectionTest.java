package dev.mailbox.redis;

import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.UnifiedJedis;

/** The inspection contract on a 3-master Redis Cluster: the read-only scripts touch one mailbox's slot only. */
@DisplayName("RedisMailbox on a 3-master cluster meets the Inspection contract")
class RedisClusterInspectionTest extends RedisInspectionTest {

    @Override
    UnifiedJedis client() {
        return SharedRedis.cluster().client;
    }
}
