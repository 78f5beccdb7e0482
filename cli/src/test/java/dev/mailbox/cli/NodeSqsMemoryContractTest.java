package dev.mailbox.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

/** The node's queues hosted by the node itself, in memory; security off (the endpoint still checks signatures). */
@DisplayName("SqsMailbox through a mailbox node's SQS endpoint over its in-memory mailboxes meets the Mailbox contract")
class NodeSqsMemoryContractTest extends NodeSqsContractTest {

    private static Running node;

    @BeforeAll
    static void start() throws Exception {
        node = Running.start(NodeBackend.parse("memory"), null);
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Override
    protected SqsClient client() {
        return node.client;
    }
}
