package dev.mailbox.sqsendpoint;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

@DisplayName("SqsMailbox through the SQS endpoint over in-memory mailboxes meets the Mailbox contract")
class EndpointInMemoryContractTest extends EndpointContractTest {

    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        endpoint = startEndpoint(TestEndpoints.inMemoryDirectory());
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        client.close();
        endpoint.close();
    }

    @Override
    protected SqsClient client() {
        return client;
    }
}
