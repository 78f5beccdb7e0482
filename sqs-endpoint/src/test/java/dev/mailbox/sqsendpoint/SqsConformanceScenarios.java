package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.EmptyBatchRequestException;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.ReceiptHandleIsInvalidException;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;
import software.amazon.awssdk.services.sqs.model.TooManyEntriesInBatchRequestException;
import software.amazon.awssdk.services.sqs.model.BatchEntryIdsNotDistinctException;

/**
 * One suite of SQS scenarios, run by the AWS SDK v2 against embedded ElasticMQ ({@link ElasticMqConformanceTest})
 * and against the endpoint ({@link EndpointConformanceTest}) with the same expectations: bodies, attributes of
 * every type, the MD5 digests (computed here independently, and checked by the SDK too), system attributes,
 * queue attributes, redrive, error codes and batch partial failures. Where ElasticMQ is known to answer otherwise
 * than SQS, the scenario says so through {@link #elasticMq()} and the difference is listed in
 * {@code ElasticMqConformanceTest}.
 */
abstract class SqsConformanceScenarios {

    private final List<String> created = new java.util.ArrayList<>();

    /** @return the client of the server under test */
    abstract SqsClient sqs();

    /** @return whether the server is ElasticMQ (for its documented differences) */
    abstract boolean elasticMq();

    String queue(String hint, Map<QueueAttributeName, String> attributes) {
        String url = sqs().createQueue(r -> r.queueName(hint + "-" + UUID.randomUUID().toString().substring(0, 8))
                .attributes(attributes)).queueUrl();
        created.add(url);
        return url;
    }

    /**
     * @param sqs       what SQS (and the endpoint) answers
     * @param elasticMq what ElasticMQ answers instead, a difference listed in {@link ElasticMqConformanceTest}
     * @return the answer expected of the server under test
     */
    <V> V expected(V sqs, V elasticMq) {
        return elasticMq() ? elasticMq : sqs;
    }

    String queue(String hint) {
        return queue(hint, Map.of());
    }

    @AfterEach
    void deleteQueues() {
        for (String url : created) {
            try {
                sqs().deleteQueue(r -> r.queueUrl(url));
            } catch (SqsException ignored) {
                // a scenario deleted it
            }
        }
    }

    static String md5(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** SQS's attribute digest, written here from its published description, independently of the endpoint's. */
    static String attributesMd5(Map<String, MessageAttributeValue> attributes) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        new java.util.TreeMap<>(attributes).forEach((name, v) -> {
            field(out, name.getBytes(StandardCharsets.UTF_8));
            field(out, v.dataType().getBytes(StandardCharsets.UTF_8));
            if (v.binaryValue() != null) {
                out.write(2);
                field(out, v.binaryValue().asByteArray());
            } else {
                out.write(1);
                field(out, v.stringValue().getBytes(StandardCharsets.UTF_8));
            }
        });
        return md5(out.toByteArray());
    }

    private static void field(java.io.ByteArrayOutputStream out, byte[] bytes) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.writeBytes(bytes);
    }

    static final Map<String, MessageAttributeValue> TYPED = Map.of(
            "trace", MessageAttributeValue.builder().dataType("String").stringValue("abc-123 ü €").build(),
            "amount", MessageAttributeValue.builder().dataType("Number").stringValue("12.50").build(),
            "count", MessageAttributeValue.builder().dataType("Number.int").stringValue("-7").build(),
            "blob", MessageAttributeValue.builder().dataType("Binary")
                    .binaryValue(SdkBytes.fromByteArray(new byte[] {0, 1, 2, (byte) 0xff})).build(),
            "img", MessageAttributeValue.builder().dataType("Binary.png")
                    .binaryValue(SdkBytes.fromByteArray(new byte[] {(byte) 0x89, 'P', 'N', 'G'})).build());

    private Message receiveOne(String url, int visibility) {
        List<Message> got = sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1).waitTimeSeconds(2)
                .visibilityTimeout(visibility).messageAttributeNames("All")
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages();
        assertThat(got).as("one message in " + url).hasSize(1);
        return got.get(0);
    }

    @Test
    @DisplayName("a body and String, Number and Binary attributes come back as sent, with SQS's digests")
    void typedAttributesAndDigests() {
        String url = queue("typed");
        String body = "héllo {\"json\": true}\r\n\t€ 𝄞";
        SendMessageResponse sent = sqs().sendMessage(r -> r.queueUrl(url).messageBody(body).messageAttributes(TYPED));
        assertThat(sent.md5OfMessageBody()).isEqualTo(md5(body.getBytes(StandardCharsets.UTF_8)));
        assertThat(sent.md5OfMessageAttributes()).isEqualTo(attributesMd5(TYPED));

        Message m = receiveOne(url, 30);
        assertThat(m.body()).isEqualTo(body);
        assertThat(m.messageId()).isEqualTo(sent.messageId());
        assertThat(m.md5OfBody()).isEqualTo(sent.md5OfMessageBody());
        assertThat(m.messageAttributes()).isEqualTo(TYPED);
        assertThat(m.md5OfMessageAttributes()).isEqualTo(attributesMd5(TYPED));
    }

    @Test
    @DisplayName("only the message attributes asked for are returned")
    void attributeFilter() {
        String url = queue("filter");
        sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageAttributes(TYPED));
        Message m = sqs().receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(2).messageAttributeNames("amount", "blob"))
                .messages().get(0);
        assertThat(m.messageAttributes()).containsOnlyKeys("amount", "blob");
        assertThat(m.md5OfMessageAttributes()).isEqualTo(attributesMd5(Map.of("amount", TYPED.get("amount"),
                "blob", TYPED.get("blob"))));
        Message bare = sqs().receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages().stream().findFirst()
                .orElse(null);
        assertThat(bare).as("in flight: not received twice").isNull();
    }

    @Test
    @DisplayName("system attributes: receive count grows per delivery, sent and first-receive timestamps")
    void systemAttributes() {
        String url = queue("system");
        long before = System.currentTimeMillis() - 1000;
        sqs().sendMessage(r -> r.queueUrl(url).messageBody("count me"));
        Message first = receiveOne(url, 0);
        Message second = receiveOne(url, 30);
        assertThat(first.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT)).isEqualTo("1");
        assertThat(second.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT)).isEqualTo("2");
        long sentAt = Long.parseLong(second.attributes().get(MessageSystemAttributeName.SENT_TIMESTAMP));
        long firstAt = Long.parseLong(second.attributes().get(
                MessageSystemAttributeName.APPROXIMATE_FIRST_RECEIVE_TIMESTAMP));
        assertThat(sentAt).isBetween(before, System.currentTimeMillis() + 1000);
        assertThat(firstAt).isBetween(sentAt - 1000, System.currentTimeMillis() + 1000);
        assertThat(first.attributes().get(MessageSystemAttributeName.APPROXIMATE_FIRST_RECEIVE_TIMESTAMP))
                .isEqualTo(Long.toString(firstAt));
        assertThat(second.receiptHandle()).isNotEqualTo(first.receiptHandle());
    }

    @Test
    @DisplayName("a batch send answers per entry: good entries stored, a bad one failed with its code")
    void sendBatchPartialFailure() {
        String url = queue("batch");
        SendMessageBatchResponse r = sqs().sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("a").messageBody("one").build(),
                SendMessageBatchRequestEntry.builder().id("b").messageBody("two").messageAttributes(Map.of("n",
                        MessageAttributeValue.builder().dataType("Number").stringValue("not a number").build())).build(),
                SendMessageBatchRequestEntry.builder().id("c").messageBody("three").delaySeconds(0).build()));
        assertThat(r.successful()).extracting(e -> e.id()).containsExactlyInAnyOrder("a", "c");
        assertThat(r.successful()).allSatisfy(e -> assertThat(e.md5OfMessageBody()).isNotEmpty());
        assertThat(r.failed()).hasSize(1);
        BatchResultErrorEntry failed = r.failed().get(0);
        assertThat(failed.id()).isEqualTo("b");
        assertThat(failed.senderFault()).isTrue();
        assertThat(failed.code()).isEqualTo(expected("InvalidParameterValue", "InvalidAttributeValue"));
        List<Message> got = sqs().receiveMessage(q -> q.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1))
                .messages();
        assertThat(got).extracting(Message::body).containsExactlyInAnyOrder("one", "three");
    }

    @Test
    @DisplayName("a batch delete deletes the good handles and fails a bad one with ReceiptHandleIsInvalid")
    void deleteBatchPartialFailure() {
        String url = queue("delete-batch");
        sqs().sendMessage(r -> r.queueUrl(url).messageBody("x"));
        Message m = receiveOne(url, 30);
        DeleteMessageBatchResponse r = sqs().deleteMessageBatch(b -> b.queueUrl(url).entries(
                e -> e.id("good").receiptHandle(m.receiptHandle()),
                e -> e.id("bad").receiptHandle("not-a-handle")));
        assertThat(r.successful()).extracting(e -> e.id()).containsExactly("good");
        assertThat(r.failed()).extracting(BatchResultErrorEntry::id, BatchResultErrorEntry::code)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("bad", "ReceiptHandleIsInvalid"));
        assertThat(sqs().getQueueAttributes(q -> q.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
                .attributes()).containsEntry(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, "0")
                .containsEntry(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE, "0");
    }

    @Test
    @DisplayName("change visibility to 0 makes a message receivable again; a batch change reports a bad handle")
    void changeVisibility() {
        String url = queue("visibility");
        sqs().sendMessage(r -> r.queueUrl(url).messageBody("again"));
        Message m = receiveOne(url, 60);
        sqs().changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()).visibilityTimeout(0));
        Message again = receiveOne(url, 60);
        assertThat(again.body()).isEqualTo("again");
        var r = sqs().changeMessageVisibilityBatch(b -> b.queueUrl(url).entries(
                e -> e.id("ok").receiptHandle(again.receiptHandle()).visibilityTimeout(120),
                e -> e.id("bad").receiptHandle("garbage").visibilityTimeout(10)));
        assertThat(r.successful()).extracting(e -> e.id()).containsExactly("ok");
        assertThat(r.failed()).extracting(BatchResultErrorEntry::id, BatchResultErrorEntry::code)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("bad", "ReceiptHandleIsInvalid"));
        assertThatThrownBy(() -> sqs().changeMessageVisibility(c -> c.queueUrl(url).receiptHandle("garbage")
                .visibilityTimeout(5))).isInstanceOf(ReceiptHandleIsInvalidException.class);
    }

    @Test
    @DisplayName("queue attributes are stored and read back; defaults are SQS's")
    void queueAttributes() {
        String url = queue("attrs", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "45",
                QueueAttributeName.MESSAGE_RETENTION_PERIOD, "3600"));
        sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(QueueAttributeName.DELAY_SECONDS, "2",
                QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, "1", QueueAttributeName.MAXIMUM_MESSAGE_SIZE, "2048")));
        Map<QueueAttributeName, String> a = sqs().getQueueAttributes(r -> r.queueUrl(url)
                .attributeNames(QueueAttributeName.ALL)).attributes();
        assertThat(a).containsEntry(QueueAttributeName.VISIBILITY_TIMEOUT, "45")
                .containsEntry(QueueAttributeName.DELAY_SECONDS, "2")
                .containsEntry(QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, "1")
                .containsKeys(QueueAttributeName.QUEUE_ARN, QueueAttributeName.CREATED_TIMESTAMP,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES);
        // ElasticMQ neither reports MessageRetentionPeriod nor MaximumMessageSize
        assertThat(a.get(QueueAttributeName.MESSAGE_RETENTION_PERIOD)).isEqualTo(expected("3600", null));
        assertThat(a.get(QueueAttributeName.MAXIMUM_MESSAGE_SIZE)).isEqualTo(expected("2048", null));
        assertThat(a.get(QueueAttributeName.QUEUE_ARN)).startsWith("arn:aws:sqs:").endsWith(url.substring(url.lastIndexOf('/') + 1));
        // MaximumMessageSize is enforced (not by ElasticMQ)
        if (!elasticMq()) assertThatThrownBy(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x".repeat(4096))))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo("InvalidParameterValue"));
        // DelaySeconds applies to sends that give none
        sqs().sendMessage(r -> r.queueUrl(url).messageBody("later"));
        assertThat(sqs().receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages()).isEmpty();
    }

    @Test
    @DisplayName("a message received more than maxReceiveCount times moves to the dead-letter queue")
    void redrive() {
        String dlq = queue("dlq");
        String dlqArn = sqs().getQueueAttributes(r -> r.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String source = queue("source", Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"1\"}"));
        sqs().sendMessage(r -> r.queueUrl(source).messageBody("poison").messageAttributes(Map.of("a", TYPED.get("amount"))));
        Message first = receiveOne(source, 0);
        assertThat(first.body()).isEqualTo("poison");
        assertThat(sqs().receiveMessage(r -> r.queueUrl(source).waitTimeSeconds(1)).messages())
                .as("received once already: moved instead of delivered again").isEmpty();
        Message dead = receiveOne(dlq, 30);
        assertThat(dead.body()).isEqualTo("poison");
        assertThat(dead.messageAttributes()).isEqualTo(Map.of("a", TYPED.get("amount")));
        assertThat(sqs().listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).queueUrls())
                .singleElement().asString().endsWith(source.substring(source.lastIndexOf('/')));
        assertThat(sqs().getQueueAttributes(r -> r.queueUrl(source).attributeNames(QueueAttributeName.REDRIVE_POLICY))
                .attributes().get(QueueAttributeName.REDRIVE_POLICY)).contains(dlqArn);
    }

    @Test
    @DisplayName("queues are listed by prefix and paged; URLs resolve; tags are set, listed and removed")
    void listingAndTags() {
        String prefix = "list" + UUID.randomUUID().toString().substring(0, 6);
        List<String> urls = IntStream.range(0, 3).mapToObj(i -> queue(prefix)).toList();
        assertThat(sqs().listQueues(r -> r.queueNamePrefix(prefix)).queueUrls()).containsExactlyInAnyOrderElementsOf(urls);
        var page1 = sqs().listQueues(r -> r.queueNamePrefix(prefix).maxResults(2));
        if (!elasticMq()) { // ElasticMQ does not page: it returns every queue and no NextToken
            assertThat(page1.queueUrls()).hasSize(2);
            assertThat(page1.nextToken()).isNotNull();
            var page2 = sqs().listQueues(r -> r.queueNamePrefix(prefix).maxResults(2).nextToken(page1.nextToken()));
            assertThat(page2.queueUrls()).hasSize(1).doesNotContainAnyElementsOf(page1.queueUrls());
        }
        String name = urls.get(0).substring(urls.get(0).lastIndexOf('/') + 1);
        assertThat(sqs().getQueueUrl(r -> r.queueName(name)).queueUrl()).isEqualTo(urls.get(0));

        sqs().tagQueue(r -> r.queueUrl(urls.get(0)).tags(Map.of("team", "orders", "env", "test")));
        sqs().untagQueue(r -> r.queueUrl(urls.get(0)).tagKeys("env"));
        assertThat(sqs().listQueueTags(r -> r.queueUrl(urls.get(0))).tags()).isEqualTo(Map.of("team", "orders"));
    }

    @Test
    @DisplayName("purge empties a queue; a deleted queue no longer exists")
    void purgeAndDelete() {
        String url = queue("purge");
        sqs().sendMessageBatch(b -> b.queueUrl(url).entries(IntStream.range(0, 5).mapToObj(i ->
                SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + i).build()).toList()));
        sqs().purgeQueue(r -> r.queueUrl(url));
        assertThat(sqs().receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages()).isEmpty();
        sqs().deleteQueue(r -> r.queueUrl(url));
        assertThatThrownBy(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x")))
                .isInstanceOf(QueueDoesNotExistException.class);
    }

    @Test
    @DisplayName("errors: SQS's codes and exception types for what is wrong")
    void errors() {
        String url = queue("errors");
        assertThatThrownBy(() -> sqs().getQueueUrl(r -> r.queueName("no-such-queue-" + UUID.randomUUID())))
                .isInstanceOfSatisfying(QueueDoesNotExistException.class, e -> {
                    assertThat(e.awsErrorDetails().errorCode()).isEqualTo(expected(
                            "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"));
                    assertThat(e.statusCode()).isEqualTo(400);
                });
        List<SendMessageBatchRequestEntry> eleven = IntStream.range(0, 11).mapToObj(i ->
                SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m").build()).toList();
        assertThatThrownBy(() -> sqs().sendMessageBatch(b -> b.queueUrl(url).entries(eleven)))
                .isInstanceOfSatisfying(TooManyEntriesInBatchRequestException.class, e -> assertThat(
                        e.awsErrorDetails().errorCode()).isEqualTo(expected("AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
                        "TooManyEntriesInBatchRequest")));
        assertThatThrownBy(() -> sqs().sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("same").messageBody("1").build(),
                SendMessageBatchRequestEntry.builder().id("same").messageBody("2").build())))
                .isInstanceOf(BatchEntryIdsNotDistinctException.class);
        if (!elasticMq()) { // ElasticMQ accepts an empty batch
            assertThatThrownBy(() -> sqs().deleteMessageBatch(b -> b.queueUrl(url).entries(List.of())))
                    .isInstanceOf(EmptyBatchRequestException.class);
        }
        assertThatThrownBy(() -> sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(11)))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo(expected("InvalidParameterValue", "InvalidAttributeValue")));
        assertThatThrownBy(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").delaySeconds(901)))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo("InvalidParameterValue"));
        assertThatThrownBy(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("bad \u0001 char")))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo(expected("InvalidMessageContents", "InvalidAttributeValue")));
        assertThatThrownBy(() -> sqs().createQueue(r -> r.queueName("bad name!")))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo(expected("InvalidParameterValue", "InvalidAttributeName")));
        if (!elasticMq()) { // ElasticMQ accepts any visibility timeout
            assertThatThrownBy(() -> sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(
                    QueueAttributeName.VISIBILITY_TIMEOUT, "43201"))))
                    .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                            .isEqualTo("InvalidAttributeValue"));
        }
        assertThatThrownBy(() -> sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle("garbage")))
                .isInstanceOf(ReceiptHandleIsInvalidException.class);
    }
}
