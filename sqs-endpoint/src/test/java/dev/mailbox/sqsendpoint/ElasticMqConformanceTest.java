package dev.mailbox.sqsendpoint;

import dev.mailbox.testkit.sqs.ElasticMqServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The conformance scenarios against embedded ElasticMQ, the reference the endpoint is held to.
 *
 * <p>Known differences of ElasticMQ (1.6.x) from SQS met by these scenarios. The scenarios expect SQS's answer
 * (which the endpoint gives) and accept ElasticMQ's only here, through {@code expected(sqs, elasticMq)} or a
 * check skipped when {@link #elasticMq()}:
 * <ul>
 *   <li>a missing queue is {@code QueueDoesNotExist}, not {@code AWS.SimpleQueueService.NonExistentQueue}
 *       (the SDK maps both to {@code QueueDoesNotExistException});</li>
 *   <li>an 11-entry batch is {@code TooManyEntriesInBatchRequest}, without SQS's
 *       {@code AWS.SimpleQueueService.} prefix;</li>
 *   <li>an empty DeleteMessageBatch is accepted instead of refused with {@code EmptyBatchRequest};</li>
 *   <li>MaxNumberOfMessages 11, a body with a forbidden character and a Number attribute that is no number are
 *       {@code InvalidAttributeValue}, not {@code InvalidParameterValue} / {@code InvalidMessageContents};</li>
 *   <li>an invalid queue name is {@code InvalidAttributeName}, not {@code InvalidParameterValue};</li>
 *   <li>VisibilityTimeout 43201 is accepted (SQS's maximum is 43200);</li>
 *   <li>GetQueueAttributes All leaves out MessageRetentionPeriod and MaximumMessageSize, and MaximumMessageSize
 *       is not enforced on send;</li>
 *   <li>ListQueues ignores MaxResults: no paging, no NextToken.</li>
 * </ul>
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
