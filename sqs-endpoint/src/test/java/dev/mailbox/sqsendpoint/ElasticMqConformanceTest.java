package dev.mailbox.sqsendpoint;

import dev.mailbox.testkit.sqs.ElasticMqServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The conformance scenarios against embedded ElasticMQ. Its differences from SQS met by the scenarios are accepted
 * only here (through {@code expected(sqs, elasticMq)} or a check made only when {@link #elasticMq()}) and listed,
 * each with what the SQS API reference says, in {@code docs/reference/sqs-conformance.md}.
 */
@DisplayName("SQS conformance scenarios on embedded ElasticMQ")
class ElasticMqConformanceTest extends SqsConformanceScenarios {

    private static SqsClient client;

    @BeforeAll
    static void start() {
        client = TestEndpoints.client(ElasticMqServer.shared().endpoint(), "test", "test");
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    @Override
    SqsClient sqs() {
        return client;
    }

    @Override
    boolean elasticMq() {
        return true;
    }

    @Override
    boolean fairQueues() {
        return false;
    }

    @Override
    String senderId() {
        return null;
    }
}
