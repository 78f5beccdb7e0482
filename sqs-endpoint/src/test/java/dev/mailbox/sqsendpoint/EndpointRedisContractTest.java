package dev.mailbox.sqsendpoint;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The TCK through the endpoint with every queue's messages on a real redis-server (from the PATH or the bundled
 * binary the testkit finds). Each queue's RedisMailbox makes its own pooled client from the URI, because one
 * JedisPooled shared by all queues failed in two ways (defects of mailbox-redis, reported, not fixed here): with
 * Jedis's default pool of 8 the run hung, since each mailbox's WakeHub subscription holds a pooled connection for
 * as long as it is subscribed, so 8 long-polled queues take the whole pool and every other call waits forever;
 * with a pool of 256, calls got each other's replies (ClassCastException inside RedisMailbox.string and
 * changeVisibility, an ArrayList where a Long was expected: a pub/sub message read as a script's reply), as if a
 * connection went back to the pool after unsubscribing with messages still unread.
 */
@DisplayName("SqsMailbox through the SQS endpoint over Redis mailboxes meets the Mailbox contract")
class EndpointRedisContractTest extends EndpointContractTest {

    private static RedisServerProcess redis;
    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        Assumptions.assumeTrue(RedisServerProcess.available(), "no redis-server on the PATH and no bundled binary"
                + " for this platform");
        redis = RedisServerProcess.start();
        endpoint = startEndpoint(QueueDirectory.inMemory(name -> RedisMailbox.builder(name, Codec.bytes())
                .uri(redis.uri()).maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build()));
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
            endpoint.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    SqsClient client() {
        return client;
    }
}
