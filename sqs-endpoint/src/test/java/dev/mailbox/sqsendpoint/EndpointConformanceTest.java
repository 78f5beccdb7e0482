package dev.mailbox.sqsendpoint;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

/** The conformance scenarios against the endpoint over in-memory mailboxes, with signed requests. */
@DisplayName("SQS conformance scenarios on the endpoint over memory")
class EndpointConformanceTest extends SqsConformanceScenarios {

    private static QueueDirectory directory;
    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        directory = TestEndpoints.inMemoryDirectory();
        endpoint = EndpointContractTest.startEndpoint(directory);
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        client.close();
        endpoint.close();
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
