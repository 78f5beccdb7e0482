package dev.mailbox.redis;

import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.UnifiedJedis;

@DisplayName("RedisMailbox on a standalone server meets the Mailbox contract")
class RedisStandaloneContractTest extends RedisContractTest {

    @Override
    UnifiedJedis client() {
        return SharedRedis.standalone().client;
    }
}
