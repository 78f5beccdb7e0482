package dev.mailbox.cli;

import dev.mailbox.testkit.redis.RedisServerProcess;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The node's queues on a real redis-server (its shared backend), with security on: the access key's principal
 * may administer the TCK's namespaces only, and every call goes through the access checks and on the data plane
 * on its behalf.
 */
@DisplayName("SqsMailbox through a secured mailbox node's SQS endpoint over Redis meets the Mailbox contract")
class NodeSqsRedisContractTest extends NodeSqsContractTest {

    @TempDir
    static Path dir;
    private static RedisServerProcess redis;
    private static Running node;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(RedisServerProcess.available(), "no redis-server on the PATH and no bundled binary"
                + " for this platform");
        redis = RedisServerProcess.start();
        node = Running.start(NodeBackend.parse(redis.uri()), dir);
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected SqsClient client() {
        return node.client;
    }
}
