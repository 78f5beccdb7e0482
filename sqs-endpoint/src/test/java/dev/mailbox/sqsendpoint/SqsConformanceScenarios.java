package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

    /**
     * @return whether a standard queue of this server is fair (SQS's fair queues): a receive prefers quiet tenants
     *         while one is noisy. The endpoint's are where its mailboxes declare fairness; ElasticMQ's are not
     */
    abstract boolean fairQueues();

    /**
     * @return what this server gives as a message's SenderId: the endpoint the caller's principal, ElasticMQ an id
     *         of its own (null: any non-empty value)
     */
    abstract @org.jspecify.annotations.Nullable String senderId();

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

    /**
     * Creates a FIFO queue; a server whose backend has no FIFO mailboxes (the endpoint over Redis until RedisMailbox
     * has them) refuses with UnsupportedOperation, and the test is then skipped, saying so.
     */
    String fifoQueue(String hint, Map<QueueAttributeName, String> attributes) {
        Map<QueueAttributeName, String> all = new java.util.HashMap<>(attributes);
        all.put(QueueAttributeName.FIFO_QUEUE, "true");
        try {
            return queue(hint, all, ".fifo");
        } catch (SqsException e) {
            org.junit.jupiter.api.Assumptions.assumeFalse(e.awsErrorDetails().errorCode().endsWith("UnsupportedOperation"),
                    "this server's backend has no FIFO mailboxes: " + e.getMessage());
            throw e;
        }
    }

    String queue(String hint, Map<QueueAttributeName, String> attributes, String suffix) {
        String url = sqs().createQueue(r -> r.queueName(hint + "-" + UUID.randomUUID().toString().substring(0, 8)
                + suffix).attributes(attributes)).queueUrl();
        created.add(url);
        return url;
    }

    String arn(String url) {
        return sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
    }

    /** @return the error code of what the call throws (the SDK's from the JSON protocol's x-amzn-query-error) */
    static String errorCode(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        try {
            call.call();
        } catch (SqsException e) {
            return e.awsErrorDetails().errorCode();
        } catch (Throwable t) {
            throw new AssertionError("expected an SQS error, got " + t, t);
        }
        throw new AssertionError("expected an SQS error, the call succeeded");
    }

    long count(String url, QueueAttributeName which) {
        return Long.parseLong(sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(which)).attributes()
                .get(which));
    }

    /** Waits out a visibility timeout of whole seconds: SQS's clock, not one a test can move. */
    static void sleepPast(int seconds) {
        try {
            Thread.sleep(seconds * 1000L + 600);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    List<Message> receive(String url, int max, int visibility, String... systemAttributes) {
        return sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(max).waitTimeSeconds(1)
                .visibilityTimeout(visibility).messageAttributeNames("All")
                .messageSystemAttributeNamesWithStrings(systemAttributes.length == 0 ? new String[] {"All"}
                        : systemAttributes)).messages();
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
        // SQS's message ids are UUIDs, and clients parse them (Spring Cloud AWS does)
        assertThat(UUID.fromString(sent.messageId()).toString()).isEqualTo(sent.messageId());
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

    // ---------------------------------------------------------------------------------------------- FIFO queues

    @org.junit.jupiter.api.Nested
    @DisplayName("FIFO queues")
    class Fifo {

        private SendMessageResponse send(String url, String body, String group, String dedup) {
            return sqs().sendMessage(r -> r.queueUrl(url).messageBody(body).messageGroupId(group)
                    .messageDeduplicationId(dedup));
        }

        @Test
        @DisplayName("CreateQueue: FifoQueue and a .fifo name go together; the FIFO attributes have SQS's defaults;"
                + " FIFO-only attributes are unknown on a standard queue; perMessageGroupId needs messageGroup")
        void create() {
            String url = fifoQueue("create", Map.of());
            assertThat(url).endsWith(".fifo");
            Map<QueueAttributeName, String> a = sqs().getQueueAttributes(r -> r.queueUrl(url)
                    .attributeNames(QueueAttributeName.ALL)).attributes();
            assertThat(a).containsEntry(QueueAttributeName.FIFO_QUEUE, "true")
                    .containsEntry(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "false");
            if (!elasticMq()) {
                assertThat(a).containsEntry(QueueAttributeName.DEDUPLICATION_SCOPE, "queue")
                        .containsEntry(QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perQueue");
            } else { // ElasticMQ leaves out DeduplicationScope and FifoThroughputLimit
                assertThat(a).doesNotContainKeys(QueueAttributeName.DEDUPLICATION_SCOPE,
                        QueueAttributeName.FIFO_THROUGHPUT_LIMIT);
            }
            String name = "plain-" + UUID.randomUUID().toString().substring(0, 8);
            assertThat(errorCode(() -> sqs().createQueue(r -> r.queueName(name).attributes(Map.of(
                    QueueAttributeName.FIFO_QUEUE, "true"))))).isEqualTo(expected("InvalidParameterValue",
                    "InvalidAttributeName"));
            assertThat(errorCode(() -> sqs().createQueue(r -> r.queueName(name + ".fifo"))))
                    .isEqualTo(expected("InvalidParameterValue", "InvalidAttributeName"));
            if (!elasticMq()) { // ElasticMQ makes a standard queue with ContentBasedDeduplication
                assertThat(errorCode(() -> sqs().createQueue(r -> r.queueName(name).attributes(Map.of(
                        QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"))))).isEqualTo("InvalidAttributeName");
            }
            if (!elasticMq()) {
                assertThat(errorCode(() -> sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(
                        QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perMessageGroupId")))))
                        .isEqualTo("InvalidAttributeValue");
            } else { // ElasticMQ refuses FifoThroughputLimit in SetQueueAttributes at all
                assertThat(errorCode(() -> sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(
                        QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perMessageGroupId")))))
                        .isEqualTo("InvalidAttributeName");
            }
            if (elasticMq()) {
                return; // ElasticMQ refuses to set DeduplicationScope on a queue (InvalidAttributeName)
            }
            sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(QueueAttributeName.DEDUPLICATION_SCOPE,
                    "messageGroup", QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perMessageGroupId")));
            assertThat(sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                    QueueAttributeName.FIFO_THROUGHPUT_LIMIT)).attributes())
                    .containsEntry(QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perMessageGroupId");
        }

        @Test
        @DisplayName("a dead-letter queue is of its source's kind")
        void deadLetterKind() {
            String standardDlq = queue("std-dlq");
            String fifo = fifoQueue("kind", Map.of());
            String policy = "{\"deadLetterTargetArn\":\"" + arn(standardDlq) + "\",\"maxReceiveCount\":\"2\"}";
            org.junit.jupiter.api.Assumptions.assumeFalse(elasticMq(), "ElasticMQ takes a dead-letter queue of"
                    + " another kind");
            assertThat(errorCode(() -> sqs().setQueueAttributes(r -> r.queueUrl(fifo).attributes(Map.of(
                    QueueAttributeName.REDRIVE_POLICY, policy))))).isEqualTo("InvalidParameterValue");
        }

        @Test
        @DisplayName("order within each group, sequence numbers that grow in each group and come back on receive,"
                + " and the FIFO system attributes")
        void orderAndSequenceNumbers() {
            String url = fifoQueue("order", Map.of());
            Map<String, String> sequenceById = new java.util.HashMap<>();
            List<String> sent = new java.util.ArrayList<>();
            java.math.BigInteger[] lastA = {java.math.BigInteger.ZERO};
            for (int i = 0; i < 6; i++) {
                String group = i % 2 == 0 ? "A" : "B";
                SendMessageResponse r = send(url, group + i, group, "d" + i);
                assertThat(r.sequenceNumber()).as("SequenceNumber in the reply").matches("[0-9]{1,40}");
                if (group.equals("A")) {
                    java.math.BigInteger n = new java.math.BigInteger(r.sequenceNumber());
                    assertThat(n).isGreaterThan(lastA[0]);
                    lastA[0] = n;
                }
                sequenceById.put(r.messageId(), r.sequenceNumber());
                sent.add(group + i);
            }
            List<Message> got = new java.util.ArrayList<>();
            for (int round = 0; round < 10 && got.size() < 6; round++) {
                List<Message> batch = receive(url, 10, 30);
                got.addAll(batch);
                batch.forEach(m -> sqs().deleteMessage(d -> d.queueUrl(url).receiptHandle(m.receiptHandle())));
            }
            assertThat(got).extracting(Message::body).containsExactlyInAnyOrderElementsOf(sent);
            assertThat(got.stream().map(Message::body).filter(b -> b.startsWith("A")).toList())
                    .containsExactly("A0", "A2", "A4");
            assertThat(got.stream().map(Message::body).filter(b -> b.startsWith("B")).toList())
                    .containsExactly("B1", "B3", "B5");
            for (Message m : got) {
                Map<String, String> a = m.attributesAsStrings();
                assertThat(a).containsEntry("MessageGroupId", m.body().substring(0, 1))
                        .containsEntry("MessageDeduplicationId", "d" + m.body().substring(1))
                        .containsEntry("SequenceNumber", sequenceById.get(m.messageId()));
            }
        }

        @Test
        @DisplayName("while a message of a group is in flight no later message of that group is received; other"
                + " groups go on; deleting it lets the next through")
        void oneInFlightPerGroup() {
            String url = fifoQueue("inflight", Map.of());
            send(url, "a1", "A", "1");
            send(url, "a2", "A", "2");
            send(url, "b1", "B", "3");
            Message first = receive(url, 1, 30).get(0);
            assertThat(first.body()).isEqualTo("a1");
            assertThat(receive(url, 1, 30)).extracting(Message::body).containsExactly("b1");
            assertThat(receive(url, 10, 30)).as("A waits for a1, B for b1").isEmpty();
            sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(first.receiptHandle()));
            assertThat(receive(url, 10, 30)).extracting(Message::body).containsExactly("a2");
        }

        @Test
        @DisplayName("deduplication: an id seen in the last five minutes stores nothing; content-based"
                + " deduplication hashes the body; an explicit id wins over the content")
        void deduplication() {
            String url = fifoQueue("dedup", Map.of());
            SendMessageResponse first = send(url, "once", "g", "same-id");
            SendMessageResponse again = send(url, "twice", "g", "same-id");
            assertThat(again.messageId()).isEqualTo(first.messageId());
            assertThat(receive(url, 10, 30)).extracting(Message::body).containsExactly("once");

            String content = fifoQueue("content", Map.of(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"));
            sqs().sendMessage(r -> r.queueUrl(content).messageBody("body").messageGroupId("g"));
            sqs().sendMessage(r -> r.queueUrl(content).messageBody("body").messageGroupId("g"));
            sqs().sendMessage(r -> r.queueUrl(content).messageBody("body").messageGroupId("g")
                    .messageDeduplicationId("explicit"));
            List<Message> got = receive(content, 10, 30);
            assertThat(got).extracting(Message::body).containsExactly("body", "body");
            assertThat(got.get(0).attributesAsStrings().get("MessageDeduplicationId")).as("SHA-256 of the body")
                    .isEqualTo(sha256("body"));
            assertThat(got.get(1).attributesAsStrings().get("MessageDeduplicationId")).isEqualTo("explicit");
        }

        @Test
        @DisplayName("DeduplicationScope messageGroup: an id deduplicates within its group only")
        void groupScope() {
            String url = fifoQueue("scope", Map.of(QueueAttributeName.DEDUPLICATION_SCOPE, "messageGroup"));
            send(url, "g1", "G1", "id");
            send(url, "g2", "G2", "id");
            send(url, "g1-again", "G1", "id");
            org.junit.jupiter.api.Assumptions.assumeFalse(elasticMq(), "ElasticMQ ignores DeduplicationScope");
            List<Message> got = new java.util.ArrayList<>(receive(url, 10, 30));
            got.addAll(receive(url, 10, 30));
            assertThat(got).extracting(Message::body).containsExactlyInAnyOrder("g1", "g2");
        }

        @Test
        @DisplayName("errors: no group id, no deduplication id without content-based deduplication, a per-message"
                + " delay, a bad group id; in a batch, each entry fails with its code")
        void fifoErrors() { // unique names: surefire's XML counts two tests of one name in a class once
            String url = fifoQueue("errors", Map.of());
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x")
                    .messageDeduplicationId("d")))).isEqualTo("MissingParameter");
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageGroupId("g"))))
                    .isEqualTo("InvalidParameterValue");
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageGroupId("g")
                    .messageDeduplicationId("d").delaySeconds(5)))).isEqualTo("InvalidParameterValue");
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x")
                    .messageGroupId("bad group id with spaces").messageDeduplicationId("d"))))
                    .isEqualTo("InvalidParameterValue");
            String standard = queue("std");
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(standard).messageBody("x")
                    .messageDeduplicationId("d")))).isEqualTo("InvalidParameterValue");

            SendMessageBatchResponse batch = sqs().sendMessageBatch(b -> b.queueUrl(url).entries(
                    SendMessageBatchRequestEntry.builder().id("ok").messageBody("1").messageGroupId("g")
                            .messageDeduplicationId("1").build(),
                    SendMessageBatchRequestEntry.builder().id("nogroup").messageBody("2")
                            .messageDeduplicationId("2").build(),
                    SendMessageBatchRequestEntry.builder().id("nodedup").messageBody("3").messageGroupId("g").build()));
            assertThat(batch.successful()).extracting(e -> e.id()).containsExactly("ok");
            if (!elasticMq()) { // ElasticMQ gives no SequenceNumber in a batch's results
                assertThat(batch.successful().get(0).sequenceNumber()).isNotEmpty();
            }
            assertThat(batch.failed()).extracting(BatchResultErrorEntry::id, BatchResultErrorEntry::code)
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("nogroup", "MissingParameter"),
                            org.assertj.core.groups.Tuple.tuple("nodedup", "InvalidParameterValue"));
        }

        @Test
        @DisplayName("a batch is stored in order, each entry with its sequence number")
        void batch() {
            String url = fifoQueue("batch", Map.of());
            SendMessageBatchResponse r = sqs().sendMessageBatch(b -> b.queueUrl(url).entries(IntStream.range(0, 5)
                    .mapToObj(i -> SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + i)
                            .messageGroupId("g").messageDeduplicationId("d" + i).build()).toList()));
            assertThat(r.successful()).hasSize(5);
            if (!elasticMq()) { // ElasticMQ gives no SequenceNumber in a batch's results
                assertThat(r.successful()).allSatisfy(e -> assertThat(e.sequenceNumber()).isNotEmpty());
            }
            List<Message> got = receive(url, 10, 30);
            assertThat(got).extracting(Message::body).containsExactly("m0", "m1", "m2", "m3", "m4");
        }

        @Test
        @DisplayName("ReceiveRequestAttemptId: a retried receive gets the same messages and handles; once one of"
                + " them is deleted the id starts a new receive")
        void receiveRequestAttemptId() {
            String url = fifoQueue("attempt", Map.of());
            send(url, "a1", "A", "1");
            send(url, "b1", "B", "2");
            send(url, "a2", "A", "3");
            List<Message> first = sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1)
                    .receiveRequestAttemptId("attempt-1").visibilityTimeout(30)).messages();
            List<Message> retried = sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1)
                    .receiveRequestAttemptId("attempt-1").visibilityTimeout(30)).messages();
            if (elasticMq()) { // ElasticMQ gives the same message with a new receipt handle
                assertThat(retried).extracting(Message::messageId).containsExactly(first.get(0).messageId());
                return;
            }
            assertThat(retried).extracting(Message::messageId, Message::receiptHandle)
                    .containsExactlyElementsOf(first.stream().map(m -> org.assertj.core.groups.Tuple.tuple(
                            m.messageId(), m.receiptHandle())).toList());
            sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(first.get(0).receiptHandle()));
            List<Message> after = sqs().receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1)
                    .receiveRequestAttemptId("attempt-1").visibilityTimeout(30)).messages();
            assertThat(after).hasSize(1);
            assertThat(after.get(0).messageId()).isNotEqualTo(first.get(0).messageId());
        }

        @Test
        @DisplayName("a handle whose visibility timeout ended no longer deletes a FIFO message")
        void expiredHandle() {
            String url = fifoQueue("expired", Map.of());
            send(url, "slow", "g", "1");
            Message m = receive(url, 1, 1).get(0);
            sleepPast(1);
            org.junit.jupiter.api.Assumptions.assumeFalse(elasticMq(), "ElasticMQ deletes a FIFO message by a handle"
                    + " whose visibility timeout ended");
            assertThat(errorCode(() -> sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()))))
                    .isEqualTo("ReceiptHandleIsInvalid");
            assertThat(receive(url, 1, 30)).extracting(Message::body).containsExactly("slow");
        }

        @Test
        @DisplayName("a redrive keeps a FIFO message's group, into a FIFO dead-letter queue")
        void fifoRedrive() {
            String dlq = fifoQueue("dlq", Map.of());
            String url = fifoQueue("source", Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + arn(dlq) + "\",\"maxReceiveCount\":\"1\"}"));
            send(url, "poison", "g7", "1");
            assertThat(receive(url, 1, 0)).extracting(Message::body).containsExactly("poison");
            assertThat(receive(url, 1, 30)).as("moved instead of delivered again").isEmpty();
            Message dead = receive(dlq, 1, 30).get(0);
            assertThat(dead.body()).isEqualTo("poison");
            assertThat(dead.attributesAsStrings()).containsEntry("MessageGroupId", "g7");
        }
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    // ---------------------------------------------------------------------------------------------- fair queues

    @org.junit.jupiter.api.Nested
    @DisplayName("fair queues (a MessageGroupId on a standard queue)")
    class Fair {

        @Test
        @DisplayName("a standard queue takes a MessageGroupId and gives it back as the MessageGroupId system"
                + " attribute")
        void groupIdIsKept() {
            String url = queue("tenant");
            org.junit.jupiter.api.Assumptions.assumeFalse(elasticMq(), "ElasticMQ refuses a MessageGroupId on a"
                    + " standard queue");
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageGroupId("tenant-1"));
            Message m = receive(url, 1, 30).get(0);
            assertThat(m.attributesAsStrings()).containsEntry("MessageGroupId", "tenant-1");
        }

        @Test
        @DisplayName("while one tenant is noisy (30 or more in flight, more than a tenth of all), a receive returns"
                + " the quiet tenants' messages first")
        void quietTenantsFirst() {
            org.junit.jupiter.api.Assumptions.assumeTrue(fairQueues(), "this server's standard queues are not fair");
            String url = queue("fair");
            for (int i = 0; i < 6; i++) {
                int from = i * 10;
                sqs().sendMessageBatch(b -> b.queueUrl(url).entries(IntStream.range(from, from + 10).mapToObj(n ->
                        SendMessageBatchRequestEntry.builder().id("n" + n).messageBody("noisy-" + n)
                                .messageGroupId("noisy").build()).toList()));
            }
            int inFlight = 0;
            while (inFlight < 40) {
                inFlight += receive(url, 10, 300).size();
            }
            sqs().sendMessageBatch(b -> b.queueUrl(url).entries(IntStream.range(0, 5).mapToObj(n ->
                    SendMessageBatchRequestEntry.builder().id("q" + n).messageBody("quiet-" + n)
                            .messageGroupId("quiet").build()).toList()));
            assertThat(receive(url, 10, 300)).extracting(Message::body)
                    .contains("quiet-0", "quiet-1", "quiet-2", "quiet-3", "quiet-4");
        }
    }

    // ---------------------------------------------------------------------------------------------- late delete

    @org.junit.jupiter.api.Nested
    @DisplayName("deleting after the visibility timeout (standard queues)")
    class LateDelete {

        @Test
        @DisplayName("the most recent handle deletes the message after its visibility timeout ended, until it is"
                + " received again")
        void latestHandleDeletesLate() {
            String url = queue("late");
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("slow consumer"));
            Message m = receive(url, 1, 1).get(0);
            sleepPast(1);
            sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
            assertThat(receive(url, 1, 30)).as("deleted, not delivered again").isEmpty();
        }

        @Test
        @DisplayName("an older handle succeeds and deletes nothing; the newest one deletes")
        void olderHandleDeletesNothing() {
            String url = queue("older");
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("twice"));
            Message first = receive(url, 1, 1).get(0);
            sleepPast(1);
            Message second = receive(url, 1, 30).get(0);
            assertThat(second.receiptHandle()).isNotEqualTo(first.receiptHandle());
            if (elasticMq()) { // ElasticMQ refuses the older handle where SQS accepts it and deletes nothing
                assertThat(errorCode(() -> sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(first.receiptHandle()))))
                        .isEqualTo("ReceiptHandleIsInvalid");
            } else {
                sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(first.receiptHandle()));
            }
            assertThat(count(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).isEqualTo(1);
            sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(second.receiptHandle()));
            assertThat(count(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).isZero();
            assertThat(count(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).isZero();
        }

        @Test
        @DisplayName("ChangeMessageVisibility to 0 lets the message go, and the same handle still deletes it")
        void deleteAfterVisibilityZero() {
            String url = queue("zero");
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("let go"));
            Message m = receive(url, 1, 60).get(0);
            sqs().changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()).visibilityTimeout(0));
            sqs().deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
            assertThat(receive(url, 1, 30)).as("deleted").isEmpty();
        }
    }

    // ---------------------------------------------------------------------------------------------- system attributes

    @org.junit.jupiter.api.Nested
    @DisplayName("system attributes and attribute selectors")
    class SystemAttributes {

        @Test
        @DisplayName("All gives SenderId, SentTimestamp, ApproximateReceiveCount, ApproximateFirstReceiveTimestamp and"
                + " AWSTraceHeader; a name gives only it; .* is All")
        void allAndNamed() {
            String url = queue("sys");
            String header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageSystemAttributesWithStrings(Map.of(
                    "AWSTraceHeader", software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue.builder()
                            .dataType("String").stringValue(header).build())));
            Message all = receive(url, 1, 0).get(0);
            assertThat(all.attributesAsStrings()).containsKeys("SenderId", "SentTimestamp", "ApproximateReceiveCount",
                    "ApproximateFirstReceiveTimestamp").containsEntry("AWSTraceHeader", header);
            if (senderId() != null) {
                assertThat(all.attributesAsStrings()).containsEntry("SenderId", senderId());
            }
            Message one = receive(url, 1, 0, "SentTimestamp").get(0);
            assertThat(one.attributesAsStrings()).containsOnlyKeys("SentTimestamp");
            Message star = receive(url, 1, 0, ".*").get(0);
            if (!elasticMq()) {
                assertThat(star.attributesAsStrings()).containsKeys("SenderId", "ApproximateReceiveCount");
            } else { // ElasticMQ does not read .* as All for system attributes
                assertThat(star.attributesAsStrings()).doesNotContainKey("SenderId");
            }
        }

        @Test
        @DisplayName("MessageAttributeNames: All, .*, a name and a prefix ending in .*")
        void messageAttributeSelectors() {
            String url = queue("selectors");
            Map<String, MessageAttributeValue> attributes = Map.of(
                    "Custom.a", MessageAttributeValue.builder().dataType("String").stringValue("1").build(),
                    "Custom.b", MessageAttributeValue.builder().dataType("Number").stringValue("2").build(),
                    "Other", MessageAttributeValue.builder().dataType("String").stringValue("3").build());
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageAttributes(attributes));
            java.util.function.Function<String, Set<String>> names = selector -> sqs().receiveMessage(r -> r
                    .queueUrl(url).visibilityTimeout(0).waitTimeSeconds(1).messageAttributeNames(selector)).messages()
                    .get(0).messageAttributes().keySet();
            assertThat(names.apply("All")).containsExactlyInAnyOrder("Custom.a", "Custom.b", "Other");
            assertThat(names.apply(".*")).containsExactlyInAnyOrder("Custom.a", "Custom.b", "Other");
            assertThat(names.apply("Custom.*")).containsExactlyInAnyOrderElementsOf(elasticMq()
                    ? List.of() : List.of("Custom.a", "Custom.b")); // ElasticMQ takes no prefix selectors
            assertThat(names.apply("Other")).containsExactly("Other");
        }

        @Test
        @DisplayName("message attributes named like system attributes are kept apart from them")
        void reservedNamesDoNotCollide() {
            String url = queue("reserved");
            Map<String, MessageAttributeValue> attributes = Map.of(
                    "SenderId", MessageAttributeValue.builder().dataType("String").stringValue("not the sender").build(),
                    "AWSTraceHeader", MessageAttributeValue.builder().dataType("Number").stringValue("7").build());
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("x").messageAttributes(attributes));
            Message m = receive(url, 1, 30).get(0);
            assertThat(m.messageAttributes()).isEqualTo(attributes);
            assertThat(m.attributesAsStrings().get("SenderId")).isNotEqualTo("not the sender");
            assertThat(m.attributesAsStrings()).doesNotContainKey("AWSTraceHeader");
        }

        @Test
        @DisplayName("a dead letter carries DeadLetterQueueSourceArn, its source queue")
        void deadLetterSource() {
            String dlq = queue("dlq");
            String source = queue("src", Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + arn(dlq) + "\",\"maxReceiveCount\":\"1\"}"));
            sqs().sendMessage(r -> r.queueUrl(source).messageBody("poison"));
            receive(source, 1, 0);
            assertThat(receive(source, 1, 30)).isEmpty();
            Message dead = receive(dlq, 1, 30).get(0);
            assertThat(dead.attributesAsStrings()).containsEntry("DeadLetterQueueSourceArn", arn(source));
        }
    }

    // ---------------------------------------------------------------------------------------------- permissions

    @org.junit.jupiter.api.Nested
    @DisplayName("AddPermission and RemovePermission")
    class Permissions {

        @Test
        @DisplayName("a permission shows in the queue's Policy; a label is used once; RemovePermission takes it out")
        void policy() {
            String url = queue("perm");
            String principal = elasticMq() ? "123456789012" : "bob";
            sqs().addPermission(r -> r.queueUrl(url).label("BobSends").awsAccountIds(principal)
                    .actions("SendMessage", "ReceiveMessage"));
            String policy = sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.POLICY))
                    .attributes().get(QueueAttributeName.POLICY);
            org.junit.jupiter.api.Assumptions.assumeFalse(elasticMq() && policy == null, "ElasticMQ accepts"
                    + " AddPermission but keeps no Policy");
            assertThat(policy).as("Policy").isNotNull().contains("BobSends").contains(principal)
                    .contains("SQS:SendMessage").contains(arn(url));
            assertThat(errorCode(() -> sqs().addPermission(r -> r.queueUrl(url).label("BobSends")
                    .awsAccountIds(principal).actions("SendMessage")))).isEqualTo("InvalidParameterValue");
            sqs().removePermission(r -> r.queueUrl(url).label("BobSends"));
            String after = sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.POLICY))
                    .attributes().get(QueueAttributeName.POLICY);
            assertThat(after == null ? "" : after).doesNotContain("BobSends");
            assertThat(errorCode(() -> sqs().removePermission(r -> r.queueUrl(url).label("NoSuchLabel"))))
                    .isEqualTo("InvalidParameterValue");
        }
    }

    // ---------------------------------------------------------------------------------------------- message move tasks

    @org.junit.jupiter.api.Nested
    @DisplayName("message move tasks")
    class MoveTasks {

        private String deadLetters(String dlq, String source, int n) {
            for (int i = 0; i < n; i++) {
                int k = i;
                sqs().sendMessage(r -> r.queueUrl(source).messageBody("dead-" + k));
            }
            for (int round = 0; round < 20 && count(dlq, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES) < n; round++) {
                receive(source, 10, 0);
            }
            assertThat(count(dlq, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).isEqualTo(n);
            return dlq;
        }

        private Map<String, Object> awaitTask(String dlqArn, String status) {
            for (int i = 0; i < 100; i++) {
                var tasks = sqs().listMessageMoveTasks(r -> r.sourceArn(dlqArn).maxResults(10)).results();
                if (!tasks.isEmpty() && tasks.get(0).status().equals(status)) {
                    return Map.of("moved", tasks.get(0).approximateNumberOfMessagesMoved(), "task", tasks.get(0));
                }
                sleepMillis(100);
            }
            throw new AssertionError("no task reached " + status + ": "
                    + sqs().listMessageMoveTasks(r -> r.sourceArn(dlqArn).maxResults(10)).results());
        }

        @Test
        @DisplayName("a task without a destination moves dead letters back to their source queue")
        void backToSource() {
            String dlq = queue("mt-dlq");
            String source = queue("mt-src", Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + arn(dlq) + "\",\"maxReceiveCount\":\"1\"}"));
            deadLetters(dlq, source, 3);
            String handle = sqs().startMessageMoveTask(r -> r.sourceArn(arn(dlq))).taskHandle();
            assertThat(handle).isNotEmpty();
            Map<String, Object> done = awaitTask(arn(dlq), "COMPLETED");
            assertThat(done.get("moved")).isEqualTo(3L);
            assertThat(count(dlq, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).isZero();
            List<Message> back = new java.util.ArrayList<>();
            for (int i = 0; i < 10 && back.size() < 3; i++) {
                back.addAll(receive(source, 10, 30));
            }
            assertThat(back).extracting(Message::body).containsExactlyInAnyOrder("dead-0", "dead-1", "dead-2");
        }

        @Test
        @DisplayName("a task to a named queue at a rate; a running task is cancelled; errors for a queue that is no"
                + " dead-letter queue, an unknown ARN and an unknown task")
        void destinationRateAndCancel() {
            String dlq = queue("mt2-dlq");
            String source = queue("mt2-src", Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + arn(dlq) + "\",\"maxReceiveCount\":\"1\"}"));
            String target = queue("mt2-target");
            // at 1 a second the ten take 9 s, so the task is still running when it is cancelled even if this
            // thread is held up for seconds on a loaded machine (at 2 a second and six, it once was not)
            deadLetters(dlq, source, 10);
            long start = System.nanoTime();
            sqs().startMessageMoveTask(r -> r.sourceArn(arn(dlq)).destinationArn(arn(target))
                    .maxNumberOfMessagesPerSecond(1));
            var running = sqs().listMessageMoveTasks(r -> r.sourceArn(arn(dlq))).results();
            assertThat(running).hasSize(1);
            assertThat(running.get(0).status()).isEqualTo("RUNNING");
            assertThat(running.get(0).taskHandle()).isNotEmpty();
            assertThat(running.get(0).maxNumberOfMessagesPerSecond()).isEqualTo(1);
            assertThat(errorCode(() -> sqs().startMessageMoveTask(r -> r.sourceArn(arn(dlq)))))
                    .as("one task at a time").isEqualTo(expected("AWS.SimpleQueueService.UnsupportedOperation",
                            "UnsupportedOperation"));
            sleepMillis(1200);
            long moved = sqs().cancelMessageMoveTask(r -> r.taskHandle(running.get(0).taskHandle()))
                    .approximateNumberOfMessagesMoved();
            assertThat(moved).as("at 1 a second, about 2 in 1.2 s (more only if this thread was held up)")
                    .isBetween(1L, 6L);
            if (!elasticMq()) { // ElasticMQ lists no task once it is cancelled
                Map<String, Object> cancelled = awaitTask(arn(dlq), "CANCELLED");
                assertThat((Long) cancelled.get("moved")).isLessThan(10L);
            } else {
                sleepMillis(1000);
            }
            assertThat(System.nanoTime() - start).isGreaterThan(1_000_000_000L);
            assertThat(count(target, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)
                    + count(dlq, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).as("nothing lost").isEqualTo(10);

            if (elasticMq()) {
                return; // ElasticMQ answers a task from a queue that is no dead-letter queue with an internal error
            }
            assertThat(errorCode(() -> sqs().startMessageMoveTask(r -> r.sourceArn(arn(target)))))
                    .isEqualTo("InvalidParameterValue");
            assertThat(errorCode(() -> sqs().startMessageMoveTask(r -> r.sourceArn(arn(target) + "-missing"))))
                    .isEqualTo("ResourceNotFoundException");
            assertThat(errorCode(() -> sqs().cancelMessageMoveTask(r -> r.taskHandle("bm8tc3VjaC10YXNr"))))
                    .isEqualTo("ResourceNotFoundException");
        }
    }

    static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ---------------------------------------------------------------------------------------------- paging and sizes

    @org.junit.jupiter.api.Nested
    @DisplayName("paging and message sizes")
    class PagingAndSizes {

        @Test
        @DisplayName("ListQueues and ListDeadLetterSourceQueues page with MaxResults and NextToken, and give no"
                + " NextToken without MaxResults")
        void paging() {
            String dlq = queue("page-dlq");
            String prefix = "page" + UUID.randomUUID().toString().substring(0, 6);
            List<String> sources = IntStream.range(0, 5).mapToObj(i -> queue(prefix, Map.of(
                    QueueAttributeName.REDRIVE_POLICY, "{\"deadLetterTargetArn\":\"" + arn(dlq)
                            + "\",\"maxReceiveCount\":\"3\"}"))).toList();
            var all = sqs().listQueues(r -> r.queueNamePrefix(prefix));
            assertThat(all.queueUrls()).containsExactlyInAnyOrderElementsOf(sources);
            assertThat(all.nextToken()).isNull();
            if (elasticMq()) {
                return; // ElasticMQ does not page
            }
            List<String> walked = new java.util.ArrayList<>();
            String token = null;
            do {
                String t = token;
                var page = sqs().listQueues(r -> r.queueNamePrefix(prefix).maxResults(2).nextToken(t));
                assertThat(page.queueUrls().size()).isBetween(1, 2);
                walked.addAll(page.queueUrls());
                token = page.nextToken();
            } while (token != null);
            assertThat(walked).containsExactlyInAnyOrderElementsOf(sources).doesNotHaveDuplicates();

            List<String> dlqWalk = new java.util.ArrayList<>();
            token = null;
            do {
                String t = token;
                var page = sqs().listDeadLetterSourceQueues(r -> r.queueUrl(dlq).maxResults(2).nextToken(t));
                dlqWalk.addAll(page.queueUrls());
                token = page.nextToken();
            } while (token != null);
            assertThat(dlqWalk).containsExactlyInAnyOrderElementsOf(sources);
            assertThat(sqs().listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).nextToken()).isNull();
        }

        @Test
        @DisplayName("the default and largest MaximumMessageSize is 1 MiB, body and attributes counted (name, type,"
                + " value)")
        void oneMebibyte() {
            String url = queue("mib");
            assertThat(sqs().getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                    QueueAttributeName.MAXIMUM_MESSAGE_SIZE)).attributes().get(QueueAttributeName.MAXIMUM_MESSAGE_SIZE))
                    .isEqualTo(expected("1048576", null));
            if (elasticMq()) {
                return; // ElasticMQ 1.6 stops at 256 KiB
            }
            Map<String, MessageAttributeValue> attribute = Map.of("a", MessageAttributeValue.builder()
                    .dataType("Number").stringValue("1").build());
            int bodyBytes = 1_048_576 - ("a".length() + "Number".length() + 1);
            sqs().sendMessage(r -> r.queueUrl(url).messageBody("x".repeat(bodyBytes)).messageAttributes(attribute));
            assertThat(errorCode(() -> sqs().sendMessage(r -> r.queueUrl(url).messageBody("x".repeat(bodyBytes + 1))
                    .messageAttributes(attribute)))).isEqualTo("InvalidParameterValue");
            assertThat(errorCode(() -> sqs().setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(
                    QueueAttributeName.MAXIMUM_MESSAGE_SIZE, "1048577"))))).isEqualTo("InvalidAttributeValue");
        }
    }
}
