package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * Both wire protocols as bytes on the wire (no SDK): the query protocol's flattened form parameters and XML
 * answers, the JSON protocol's bodies, and each protocol's error format. Authentication is off here (the
 * SigV4 tests sign); everything else is the same endpoint.
 */
@DisplayName("The SQS wire protocols")
class WireProtocolsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static SqsEndpoint endpoint;
    private static URI url;

    @BeforeAll
    static void start() {
        endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory()).authenticationOff().start();
        url = endpoint.url();
    }

    @AfterAll
    static void stop() {
        endpoint.close();
    }

    private static Map<String, String> params(String... keysAndValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    private static String newQueue(String name) {
        RawHttp.Reply r = RawHttp.query(url, params("Action", "CreateQueue", "QueueName", name,
                "Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "40"));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r.one("QueueUrl");
    }

    @Nested
    @DisplayName("query protocol (Action=..., form-encoded, XML answers)")
    class Query {

        @Test
        @DisplayName("creates a queue with attributes and answers in SQS's XML namespace")
        void createQueue() {
            String queueUrl = newQueue("query-create");
            assertThat(queueUrl).isEqualTo(url + "/000000000000/query-create");
            RawHttp.Reply attrs = RawHttp.query(url, params("Action", "GetQueueAttributes", "QueueUrl", queueUrl,
                    "AttributeName.1", "VisibilityTimeout", "AttributeName.2", "QueueArn"));
            assertThat(attrs.xml().getDocumentElement().getNamespaceURI())
                    .isEqualTo("http://queue.amazonaws.com/doc/2012-11-05/");
            assertThat(attrs.xml().getDocumentElement().getLocalName()).isEqualTo("GetQueueAttributesResponse");
            Map<String, Element> a = attrs.pairs("Attribute");
            assertThat(a).containsOnlyKeys("VisibilityTimeout", "QueueArn");
            assertThat(a.get("VisibilityTimeout").getTextContent()).isEqualTo("40");
            assertThat(a.get("QueueArn").getTextContent()).isEqualTo("arn:aws:sqs:us-east-1:000000000000:query-create");
            assertThat(attrs.all("RequestId")).singleElement().asString().isNotEmpty();
        }

        @Test
        @DisplayName("sends with typed attributes and receives them, body and digests intact (a CR survives XML)")
        void sendAndReceive() {
            String queueUrl = newQueue("query-messages");
            String body = "line one\r\nline <two> & \"three\"";
            byte[] blob = {0, 1, (byte) 0xfe};
            RawHttp.Reply sent = RawHttp.query(url, params("Action", "SendMessage", "QueueUrl", queueUrl,
                    "MessageBody", body,
                    "MessageAttribute.1.Name", "price", "MessageAttribute.1.Value.DataType", "Number",
                    "MessageAttribute.1.Value.StringValue", "9.99",
                    "MessageAttribute.2.Name", "raw", "MessageAttribute.2.Value.DataType", "Binary",
                    "MessageAttribute.2.Value.BinaryValue", Base64.getEncoder().encodeToString(blob)));
            assertThat(sent.status()).as(sent.body()).isEqualTo(200);
            String bodyMd5 = SqsConformanceScenarios.md5(body.getBytes(StandardCharsets.UTF_8));
            assertThat(sent.one("MD5OfMessageBody")).isEqualTo(bodyMd5);
            String attributesMd5 = SqsConformanceScenarios.attributesMd5(Map.of(
                    "price", software.amazon.awssdk.services.sqs.model.MessageAttributeValue.builder()
                            .dataType("Number").stringValue("9.99").build(),
                    "raw", software.amazon.awssdk.services.sqs.model.MessageAttributeValue.builder()
                            .dataType("Binary").binaryValue(software.amazon.awssdk.core.SdkBytes.fromByteArray(blob))
                            .build()));
            assertThat(sent.one("MD5OfMessageAttributes")).isEqualTo(attributesMd5);

            RawHttp.Reply got = RawHttp.query(url, params("Action", "ReceiveMessage", "QueueUrl", queueUrl,
                    "AttributeName.1", "All", "MessageAttributeName.1", "All", "WaitTimeSeconds", "1"));
            assertThat(got.status()).as(got.body()).isEqualTo(200);
            assertThat(got.one("Body")).isEqualTo(body);
            assertThat(got.one("MD5OfBody")).isEqualTo(bodyMd5);
            assertThat(got.one("MessageId")).isEqualTo(sent.one("MessageId"));
            assertThat(got.one("MD5OfMessageAttributes")).isEqualTo(attributesMd5);
            assertThat(got.pairs("Attribute").get("ApproximateReceiveCount").getTextContent()).isEqualTo("1");
            Map<String, Element> typed = got.pairs("MessageAttribute");
            assertThat(typed.get("price").getElementsByTagNameNS("*", "StringValue").item(0).getTextContent())
                    .isEqualTo("9.99");
            assertThat(typed.get("price").getElementsByTagNameNS("*", "DataType").item(0).getTextContent())
                    .isEqualTo("Number");
            assertThat(typed.get("raw").getElementsByTagNameNS("*", "BinaryValue").item(0).getTextContent())
                    .isEqualTo(Base64.getEncoder().encodeToString(blob));

            RawHttp.Reply deleted = RawHttp.query(url, params("Action", "DeleteMessage", "QueueUrl", queueUrl,
                    "ReceiptHandle", got.one("ReceiptHandle")));
            assertThat(deleted.status()).isEqualTo(200);
            assertThat(deleted.xml().getDocumentElement().getLocalName()).isEqualTo("DeleteMessageResponse");
        }

        @Test
        @DisplayName("a batch answers with result entries and error entries")
        void batch() {
            String queueUrl = newQueue("query-batch");
            RawHttp.Reply r = RawHttp.query(url, params("Action", "SendMessageBatch", "QueueUrl", queueUrl,
                    "SendMessageBatchRequestEntry.1.Id", "ok", "SendMessageBatchRequestEntry.1.MessageBody", "fine",
                    "SendMessageBatchRequestEntry.2.Id", "late", "SendMessageBatchRequestEntry.2.MessageBody", "x",
                    "SendMessageBatchRequestEntry.2.DelaySeconds", "901"));
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            assertThat(r.all("SendMessageBatchResultEntry")).hasSize(1);
            assertThat(r.all("BatchResultErrorEntry")).hasSize(1);
            assertThat(r.all("Id")).containsExactlyInAnyOrder("ok", "late");
            assertThat(r.one("Code")).isEqualTo("InvalidParameterValue");
            assertThat(r.one("SenderFault")).isEqualTo("true");
        }

        @Test
        @DisplayName("an error is an ErrorResponse with Type, Code and Message, and SQS's status")
        void queryErrors() {
            RawHttp.Reply missing = RawHttp.query(url, params("Action", "GetQueueUrl", "QueueName", "nope"));
            assertThat(missing.status()).isEqualTo(400);
            assertThat(missing.xml().getDocumentElement().getLocalName()).isEqualTo("ErrorResponse");
            assertThat(missing.one("Type")).isEqualTo("Sender");
            assertThat(missing.one("Code")).isEqualTo("AWS.SimpleQueueService.NonExistentQueue");
            assertThat(missing.one("Message")).isEqualTo("The specified queue does not exist.");
            assertThat(missing.one("RequestId")).isEqualTo(missing.header("x-amzn-RequestId"));

            RawHttp.Reply noAction = RawHttp.query(url, params("QueueName", "x"));
            assertThat(noAction.status()).isEqualTo(400);
            assertThat(noAction.one("Code")).isEqualTo("MissingAction");

            RawHttp.Reply unknown = RawHttp.query(url, params("Action", "FlyToTheMoon"));
            assertThat(unknown.one("Code")).isEqualTo("InvalidAction");

            // a .fifo name without FifoQueue=true names a standard queue, which may not have a '.' (SQS's answer)
            RawHttp.Reply fifo = RawHttp.query(url, params("Action", "CreateQueue", "QueueName", "orders.fifo"));
            assertThat(fifo.status()).isEqualTo(400);
            assertThat(fifo.one("Code")).isEqualTo("InvalidParameterValue");
            assertThat(fifo.one("Message")).contains("alphanumeric");
        }

        @Test
        @DisplayName("a request posted to the queue's URL needs no QueueUrl parameter")
        void postToQueueUrl() {
            String queueUrl = newQueue("query-path");
            RawHttp.Reply sent = RawHttp.query(URI.create(queueUrl), params("Action", "SendMessage", "MessageBody", "hi"));
            assertThat(sent.status()).as(sent.body()).isEqualTo(200);
            RawHttp.Reply got = RawHttp.query(URI.create(queueUrl), params("Action", "ReceiveMessage"));
            assertThat(got.one("Body")).isEqualTo("hi");
        }
    }

    @Nested
    @DisplayName("query protocol: FIFO queues, permissions and move tasks")
    class QueryFifoAndNewActions {

        @Test
        @DisplayName("a FIFO queue by the query protocol: SequenceNumber in SendMessageResult, the FIFO system"
                + " attributes in the XML, a retried ReceiveRequestAttemptId, and the FIFO errors in XML")
        void fifo() {
            RawHttp.Reply created = RawHttp.query(url, params("Action", "CreateQueue", "QueueName", "query-q.fifo",
                    "Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true",
                    "Attribute.2.Name", "ContentBasedDeduplication", "Attribute.2.Value", "true"));
            assertThat(created.status()).as(created.body()).isEqualTo(200);
            String q = created.one("QueueUrl");
            RawHttp.Reply sent = RawHttp.query(url, params("Action", "SendMessage", "QueueUrl", q, "MessageBody", "one",
                    "MessageGroupId", "g-1"));
            assertThat(sent.status()).as(sent.body()).isEqualTo(200);
            assertThat(sent.one("SequenceNumber")).matches("[0-9]{20}");
            RawHttp.Reply batch = RawHttp.query(url, params("Action", "SendMessageBatch", "QueueUrl", q,
                    "SendMessageBatchRequestEntry.1.Id", "a", "SendMessageBatchRequestEntry.1.MessageBody", "two",
                    "SendMessageBatchRequestEntry.1.MessageGroupId", "g-1",
                    "SendMessageBatchRequestEntry.2.Id", "b", "SendMessageBatchRequestEntry.2.MessageBody", "three"));
            assertThat(batch.all("SequenceNumber")).hasSize(1);
            assertThat(batch.one("Code")).isEqualTo("MissingParameter");

            RawHttp.Reply got = RawHttp.query(url, params("Action", "ReceiveMessage", "QueueUrl", q,
                    "MaxNumberOfMessages", "10", "AttributeName.1", "All", "ReceiveRequestAttemptId", "try-1"));
            assertThat(got.all("Body")).containsExactly("one", "two");
            Map<String, Element> attributes = got.pairs("Attribute");
            assertThat(attributes.get("MessageGroupId").getTextContent()).isEqualTo("g-1");
            // the pairs of both messages, the later one's last: its number is the batch entry's
            assertThat(attributes.get("SequenceNumber").getTextContent()).isEqualTo(batch.one("SequenceNumber"));
            assertThat(attributes).containsKey("MessageDeduplicationId");
            RawHttp.Reply again = RawHttp.query(url, params("Action", "ReceiveMessage", "QueueUrl", q,
                    "MaxNumberOfMessages", "10", "ReceiveRequestAttemptId", "try-1"));
            assertThat(again.all("ReceiptHandle")).isEqualTo(got.all("ReceiptHandle"));

            RawHttp.Reply noGroup = RawHttp.query(url, params("Action", "SendMessage", "QueueUrl", q,
                    "MessageBody", "x"));
            assertThat(noGroup.status()).isEqualTo(400);
            assertThat(noGroup.one("Code")).isEqualTo("MissingParameter");
            assertThat(noGroup.one("Message")).contains("MessageGroupId");
            RawHttp.Reply delayed = RawHttp.query(url, params("Action", "SendMessage", "QueueUrl", q,
                    "MessageBody", "x", "MessageGroupId", "g", "DelaySeconds", "3"));
            assertThat(delayed.one("Code")).isEqualTo("InvalidParameterValue");
        }

        @Test
        @DisplayName("AddPermission with AWSAccountId.N and ActionName.N; the Policy in GetQueueAttributes;"
                + " RemovePermission; ListMessageMoveTasks and CancelMessageMoveTask errors in XML")
        void permissionsAndMoveTasks() {
            String q = newQueue("query-perm");
            RawHttp.Reply added = RawHttp.query(url, params("Action", "AddPermission", "QueueUrl", q, "Label", "L1",
                    "AWSAccountId.1", "bob", "AWSAccountId.2", "carol", "ActionName.1", "SendMessage",
                    "ActionName.2", "ReceiveMessage"));
            assertThat(added.status()).as(added.body()).isEqualTo(200);
            assertThat(added.xml().getDocumentElement().getLocalName()).isEqualTo("AddPermissionResponse");
            String policy = RawHttp.query(url, params("Action", "GetQueueAttributes", "QueueUrl", q,
                    "AttributeName.1", "Policy")).pairs("Attribute").get("Policy").getTextContent();
            assertThat(policy).contains("\"Sid\":\"L1\"", "arn:aws:iam::carol:root", "SQS:ReceiveMessage");
            RawHttp.Reply bad = RawHttp.query(url, params("Action", "AddPermission", "QueueUrl", q, "Label", "L2",
                    "AWSAccountId.1", "bob", "ActionName.1", "DeleteQueue"));
            assertThat(bad.one("Code")).isEqualTo("InvalidParameterValue");
            assertThat(RawHttp.query(url, params("Action", "RemovePermission", "QueueUrl", q, "Label", "L1")).status())
                    .isEqualTo(200);

            String arn = RawHttp.query(url, params("Action", "GetQueueAttributes", "QueueUrl", q,
                    "AttributeName.1", "QueueArn")).pairs("Attribute").get("QueueArn").getTextContent();
            RawHttp.Reply listed = RawHttp.query(url, params("Action", "ListMessageMoveTasks", "SourceArn", arn));
            assertThat(listed.status()).as(listed.body()).isEqualTo(200);
            assertThat(listed.all("ListMessageMoveTasksResultEntry")).isEmpty();
            RawHttp.Reply notDlq = RawHttp.query(url, params("Action", "StartMessageMoveTask", "SourceArn", arn));
            assertThat(notDlq.one("Code")).isEqualTo("InvalidParameterValue");
            RawHttp.Reply cancel = RawHttp.query(url, params("Action", "CancelMessageMoveTask", "TaskHandle", "nope"));
            assertThat(cancel.status()).isEqualTo(404);
            assertThat(cancel.one("Code")).isEqualTo("ResourceNotFoundException");
        }
    }

    @Nested
    @DisplayName("JSON protocol (X-Amz-Target: AmazonSQS.*)")
    class Json {

        @Test
        @DisplayName("answers with JSON objects in the SDK's shapes")
        void roundTrip() throws Exception {
            String queueUrl = newQueue("json-round-trip");
            RawHttp.Reply sent = RawHttp.json(url, "SendMessage", "{\"QueueUrl\":\"" + queueUrl
                    + "\",\"MessageBody\":\"hello\",\"MessageAttributes\":{\"n\":{\"DataType\":\"Number\","
                    + "\"StringValue\":\"42\"}}}");
            assertThat(sent.status()).as(sent.body()).isEqualTo(200);
            assertThat(sent.header("content-type")).isEqualTo("application/x-amz-json-1.0");
            JsonNode s = JSON.readTree(sent.body());
            assertThat(s.get("MD5OfMessageBody").asText()).isEqualTo(SqsConformanceScenarios.md5(
                    "hello".getBytes(StandardCharsets.UTF_8)));
            RawHttp.Reply got = RawHttp.json(url, "ReceiveMessage", "{\"QueueUrl\":\"" + queueUrl
                    + "\",\"MessageAttributeNames\":[\"All\"],\"MessageSystemAttributeNames\":[\"SentTimestamp\"]}");
            JsonNode m = JSON.readTree(got.body()).get("Messages").get(0);
            assertThat(m.get("Body").asText()).isEqualTo("hello");
            assertThat(m.get("MessageAttributes").get("n").get("StringValue").asText()).isEqualTo("42");
            assertThat(m.get("Attributes").fieldNames()).toIterable().containsExactly("SentTimestamp");
        }

        @Test
        @DisplayName("an error carries __type, message and the query code in x-amzn-query-error")
        void jsonErrors() throws Exception {
            RawHttp.Reply missing = RawHttp.json(url, "GetQueueUrl", "{\"QueueName\":\"nope\"}");
            assertThat(missing.status()).isEqualTo(400);
            JsonNode e = JSON.readTree(missing.body());
            assertThat(e.get("__type").asText()).isEqualTo("com.amazonaws.sqs#QueueDoesNotExist");
            assertThat(e.get("message").asText()).isEqualTo("The specified queue does not exist.");
            assertThat(missing.header("x-amzn-query-error")).isEqualTo("AWS.SimpleQueueService.NonExistentQueue;Sender");

            RawHttp.Reply badJson = RawHttp.json(url, "ListQueues", "{not json");
            assertThat(badJson.status()).isEqualTo(400);
            assertThat(JSON.readTree(badJson.body()).get("__type").asText()).endsWith("#SerializationException");

            RawHttp.Reply unknown = RawHttp.json(url, "FlyToTheMoon", "{}");
            assertThat(JSON.readTree(unknown.body()).get("__type").asText()).isEqualTo("com.amazonaws.sqs#InvalidAction");

            RawHttp.Reply wrongType = RawHttp.json(url, "ReceiveMessage", "{\"QueueUrl\":\"" + newQueue("json-err")
                    + "\",\"MaxNumberOfMessages\":0}");
            assertThat(wrongType.header("x-amzn-query-error")).isEqualTo("InvalidParameterValue;Sender");
        }
    }
}
