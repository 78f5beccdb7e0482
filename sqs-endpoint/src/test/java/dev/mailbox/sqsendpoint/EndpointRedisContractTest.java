package dev.mailbox.sqsendpoint;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.JedisPooled;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The TCK through the endpoint with every queue's messages on a real redis-server (from the PATH or the bundled
 * binary the testkit finds), all queues on one pooled client of Jedis's default size (8), as a mailbox node
 * has them: this run once hung (each long-polling mailbox held a pooled connection while it waited) and once
 * crossed replies between calls (a second UNSUBSCRIBE left on a returned connection), both fixed in
 * mailbox-redis's WakeHub.
 */
@DisplayName("SqsMailbox through the SQS endpoint over Redis mailboxes meets the Mailbox contract")
class EndpointRedisContractTest extends EndpointContractTest {

    private static RedisServerProcess redis;
    private static SqsEndpoint endpoint;
    private static SqsClient client;
    private static JedisPooled jedis;

    @BeforeAll
    static void start() {
        Assumptions.assumeTrue(RedisServerProcess.available(), "no redis-server on the PATH and no bundled binary"
                + " for this platform");
        redis = RedisServerProcess.start();
        jedis = new JedisPooled(java.net.URI.create(redis.uri()));
        endpoint = startEndpoint(QueueDirectory.inMemory(name -> RedisMailbox.builder(name, Codec.bytes())
                .client(jedis).maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build()));
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
            endpoint.close();
        }
        if (jedis != null) {
            jedis.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected SqsClient client() {
        return client;
    }
}
