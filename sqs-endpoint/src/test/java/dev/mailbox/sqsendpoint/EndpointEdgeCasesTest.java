package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchRequestTooLongException;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * Edge cases found by an adversarial review: hostile request shapes, stale receipt handles as SQS answers them,
 * limits SQS applies to a batch as a whole, and the authorizer's say over where a dead-lettered message goes.
 */
@DisplayName("SQS endpoint edge cases")
class EndpointEdgeCasesTest {

    private static QueueDirectory directory;
    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        directory = TestEndpoints.inMemoryDirectory();
        endpoint = SqsEndpoint.builder().queues(directory).authenticationOff().start();
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        client.close();
        endpoint.close();
    }

    private static Message receiveOne(String url, int visibility) {
        List<Message> got = client.receiveMessage(r -> r.queueUrl(url).visibilityTimeout(visibility)
                .waitTimeSeconds(2).messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages();
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    @Test
    @DisplayName("a query parameter nested thousands of levels deep is refused with a 400, and the server keeps"
            + " answering (it overflowed the request thread's stack and never answered)")
    void deeplyNestedQueryParameter() throws Exception {
        String form = "Action=ListQueues&a" + ".a".repeat(200_000) + "=1";
        HttpRequest request = HttpRequest.newBuilder(endpoint.url()).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        HttpResponse<String> r = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("<Code>InvalidParameterValue</Code>");
        assertThat(RawHttp.query(endpoint.url(), Map.of("Action", "ListQueues")).status()).isEqualTo(200);
    }

    @Test
    @DisplayName("DeleteMessage with a stale handle succeeds without deleting, as SQS and the endpoint's Javadoc"
            + " say (it was refused with ReceiptHandleIsInvalid); a repeated delete succeeds too")
    void staleDeleteSucceedsWithoutDeleting() {
        String url = client.createQueue(r -> r.queueName("edge-stale-delete")).queueUrl();
        client.sendMessage(r -> r.queueUrl(url).messageBody("x"));
        Message first = receiveOne(url, 30);
        client.changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(first.receiptHandle()).visibilityTimeout(0));
        Message second = receiveOne(url, 30);

        assertThatCode(() -> client.deleteMessage(r -> r.queueUrl(url).receiptHandle(first.receiptHandle())))
                .as("a delete with the first delivery's handle").doesNotThrowAnyException();
        var batch = client.deleteMessageBatch(b -> b.queueUrl(url).entries(
                e -> e.id("old").receiptHandle(first.receiptHandle())));
        assertThat(batch.failed()).isEmpty();
        assertThat(batch.successful()).extracting(e -> e.id()).containsExactly("old");
        // nothing was deleted: the current delivery is still in flight and can be let go and received again
        client.changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(second.receiptHandle()).visibilityTimeout(0));
        Message third = receiveOne(url, 30);
        assertThat(third.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT)).isEqualTo("3");

        client.deleteMessage(r -> r.queueUrl(url).receiptHandle(third.receiptHandle()));
        assertThatCode(() -> client.deleteMessage(r -> r.queueUrl(url).receiptHandle(third.receiptHandle())))
                .as("deleting again").doesNotThrowAnyException();
        // a handle that was never issued is still refused
        assertThatThrownBy(() -> client.deleteMessage(r -> r.queueUrl(url).receiptHandle("garbage")))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo("ReceiptHandleIsInvalid"));
    }

    @Test
    @DisplayName("a batch whose messages, counting their attributes, exceed 1 MiB in all is refused whole with"
            + " BatchRequestTooLong (only the bodies were counted, so 1.2 MiB was stored)")
    void batchTotalCountsAttributes() {
        String url = client.createQueue(r -> r.queueName("edge-batch-size")).queueUrl();
        String body = "b".repeat(100 * 1024);
        MessageAttributeValue pad = MessageAttributeValue.builder().dataType("String").stringValue("a".repeat(20 * 1024))
                .build();
        List<SendMessageBatchRequestEntry> entries = IntStream.range(0, 10).mapToObj(i -> SendMessageBatchRequestEntry
                .builder().id("e" + i).messageBody(body).messageAttributes(Map.of("pad", pad)).build()).toList();
        assertThatThrownBy(() -> client.sendMessageBatch(b -> b.queueUrl(url).entries(entries)))
                .isInstanceOf(BatchRequestTooLongException.class);
        assertThat(client.getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes())
                .containsEntry(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, "0");
    }

    @Test
    @DisplayName("a redrive does not move a message into a queue the receiving principal may not send to (the"
            + " authorizer was never asked, so any queue could be written through a redrive policy)")
    void redriveAsksTheAuthorizer() {
        QueueDirectory queues = TestEndpoints.inMemoryDirectory();
        // mallory may do anything with queues named mallory-*, and nothing with others (but create them here)
        SqsEndpoint guarded = SqsEndpoint.builder().queues(queues).authenticationOff()
                .authorizer((principal, action, queue) -> queue == null || queue.startsWith("mallory-")
                        || action.equals("CreateQueue"))
                .start();
        try (SqsClient mallory = TestEndpoints.client(guarded.url())) {
            String victim = mallory.createQueue(r -> r.queueName("victim")).queueUrl();
            assertThatThrownBy(() -> mallory.sendMessage(r -> r.queueUrl(victim).messageBody("direct")))
                    .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.statusCode()).isEqualTo(403));
            String source = mallory.createQueue(r -> r.queueName("mallory-source").attributesWithStrings(Map.of(
                    "RedrivePolicy", "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:victim\","
                            + "\"maxReceiveCount\":\"1\"}"))).queueUrl();
            mallory.sendMessage(r -> r.queueUrl(source).messageBody("injected"));
            assertThat(mallory.receiveMessage(r -> r.queueUrl(source).visibilityTimeout(0).waitTimeSeconds(2))
                    .messages()).hasSize(1);
            List<Message> second = mallory.receiveMessage(r -> r.queueUrl(source).visibilityTimeout(0)
                    .waitTimeSeconds(2).messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages();
            assertThat(queues.mailbox("victim").approximateCount()).as("messages in the victim's queue").isZero();
            assertThat(second).as("past maxReceiveCount, not moved: delivered instead").singleElement()
                    .satisfies(m -> assertThat(m.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT))
                            .isEqualTo("2"));
        } finally {
            guarded.close();
        }
    }

    private static software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue traceHeader(String value) {
        return software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue.builder().dataType("String")
                .stringValue(value).build();
    }

    @Test
    @DisplayName("AWSTraceHeader is kept as the message's system attribute, apart from its attributes: a receive"
            + " asking for it gets the system attribute; it takes no room among the ten attributes, and a message"
            + " attribute of that name is another thing, kept too")
    void traceHeaderIsKept() {
        String url = client.createQueue(r -> r.queueName("edge-trace-header")).queueUrl();
        String header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
        client.sendMessage(r -> r.queueUrl(url).messageBody("traced")
                .messageAttributes(Map.of("tenant", MessageAttributeValue.builder().dataType("String")
                        .stringValue("acme").build()))
                .messageSystemAttributesWithStrings(Map.of("AWSTraceHeader", traceHeader(header))));

        List<dev.mailbox.api.Message<byte[]>> stored = directory.mailbox("edge-trace-header")
                .receive(dev.mailbox.api.ReceiveOptions.defaults().withVisibilityTimeout(Duration.ZERO));
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0).attributes()).containsExactlyEntriesOf(Map.of("tenant", "acme"));
        assertThat(stored.get(0).systemAttributes()).containsEntry("AWSTraceHeader", header)
                .containsEntry("SenderId", SqsEndpoint.ANONYMOUS);

        Message plain = client.receiveMessage(r -> r.queueUrl(url).visibilityTimeout(0).waitTimeSeconds(2)
                .messageAttributeNames("All")).messages().get(0);
        assertThat(plain.messageAttributes()).containsOnlyKeys("tenant");
        assertThat(plain.attributesAsStrings()).doesNotContainKey("AWSTraceHeader");
        Message asked = client.receiveMessage(r -> r.queueUrl(url).visibilityTimeout(0).waitTimeSeconds(2)
                .messageAttributeNames("All").messageSystemAttributeNamesWithStrings("AWSTraceHeader")).messages().get(0);
        assertThat(asked.attributesAsStrings()).containsExactlyEntriesOf(Map.of("AWSTraceHeader", header));
        assertThat(asked.messageAttributes()).containsOnlyKeys("tenant");
        assertThat(receiveOne(url, 30).attributesAsStrings()).containsEntry("AWSTraceHeader", header); // All
        client.purgeQueue(r -> r.queueUrl(url));

        Map<String, MessageAttributeValue> ten = new java.util.LinkedHashMap<>();
        IntStream.range(0, 9).forEach(i -> ten.put("a" + i, MessageAttributeValue.builder().dataType("String")
                .stringValue("v").build()));
        ten.put("AWSTraceHeader", MessageAttributeValue.builder().dataType("Number").stringValue("7").build());
        client.sendMessage(r -> r.queueUrl(url).messageBody("full").messageAttributes(ten)
                .messageSystemAttributesWithStrings(Map.of("AWSTraceHeader", traceHeader(header))));
        Message full = client.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(2).messageAttributeNames("All")
                .messageSystemAttributeNamesWithStrings("All")).messages().get(0);
        assertThat(full.body()).isEqualTo("full");
        assertThat(full.attributesAsStrings()).containsEntry("AWSTraceHeader", header);
        assertThat(full.messageAttributes()).isEqualTo(ten);
    }
}
