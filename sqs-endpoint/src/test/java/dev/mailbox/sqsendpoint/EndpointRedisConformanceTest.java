package dev.mailbox.sqsendpoint;

import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.JedisPooled;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The conformance scenarios against the endpoint over Redis mailboxes (a real redis-server from the PATH or the
 * testkit's bundled binary), with signed requests, FIFO queues on Redis FIFO mailboxes
 * ({@link TestEndpoints#redisDirectory}); fairness is probed from the mailboxes' capabilities.
 */
@DisplayName("SQS conformance scenarios on the endpoint over Redis")
class EndpointRedisConformanceTest extends SqsConformanceScenarios {

    private static RedisServerProcess redis;
    private static JedisPooled jedis;
    private static QueueDirectory directory;
    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        Assumptions.assumeTrue(RedisServerProcess.available(), "no redis-server on the PATH and no bundled binary"
                + " for this platform");
        redis = RedisServerProcess.start();
        jedis = new JedisPooled(java.net.URI.create(redis.uri()));
        directory = TestEndpoints.redisDirectory(jedis);
        endpoint = EndpointContractTest.startEndpoint(directory);
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
    SqsClient sqs() {
        return client;
    }

    @Override
    boolean elasticMq() {
        return false;
    }

    @Override
    boolean fairQueues() {
        return TestEndpoints.fair(directory, client);
    }

    @Override
    String senderId() {
        return TestEndpoints.PRINCIPAL;
    }
}
