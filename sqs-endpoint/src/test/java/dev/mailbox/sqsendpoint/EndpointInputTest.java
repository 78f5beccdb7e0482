package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchRequestTooLongException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * Bad input the endpoint used to take or answer wrongly: a batch over the queue's size limit, bodies that are not
 * UTF-8, list indexes out of range, JSON bodies that are not objects, unknown actions. Each is refused with a
 * clear error and nothing stored.
 */
@DisplayName("SQS endpoint input checks")
class EndpointInputTest {

    private static QueueDirectory directory;
    private static SqsEndpoint endpoint;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        directory = TestEndpoints.inMemoryDirectory();
        // like a node's access rules: an action the authorizer does not know is not allowed
        Set<String> known = Set.of("CreateQueue", "GetQueueUrl", "ListQueues", "SendMessage", "SendMessageBatch",
                "ReceiveMessage", "GetQueueAttributes");
        endpoint = SqsEndpoint.builder().queues(directory)
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester")))
                .authorizer((principal, action, queue) -> known.contains(action))
                .start();
        client = TestEndpoints.client(endpoint.url());
    }

    @AfterAll
    static void stop() {
        client.close();
        endpoint.close();
    }

    private static RawHttp.Reply signedQuery(String form) {
        return signedQuery(form.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static RawHttp.Reply signedQuery(byte[] form) {
        Map<String, String> headers = Map.of("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
        return RawHttp.post(endpoint.url(), form, TestEndpoints.signed(endpoint.url(), headers, form));
    }

    private static RawHttp.Reply signedJson(String action, String body) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/x-amz-json-1.0");
        headers.put("X-Amz-Target", "AmazonSQS." + action);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return RawHttp.post(endpoint.url(), bytes, TestEndpoints.signed(endpoint.url(), headers, bytes));
    }

    private static long count(String queue) {
        return directory.mailbox(queue).approximateCount();
    }

    @Test
    @DisplayName("a SendMessageBatch is limited in total to the queue's MaximumMessageSize, as single messages are"
            + " (300,000 bytes were accepted where one message stops at 262,144); by default to 1 MiB")
    void batchTotalIsTheQueueLimit() {
        String url = client.createQueue(r -> r.queueName("input-batch-total").attributes(Map.of(
                QueueAttributeName.MAXIMUM_MESSAGE_SIZE, "262144"))).queueUrl();
        List<SendMessageBatchRequestEntry> over = IntStream.range(0, 3).mapToObj(i -> SendMessageBatchRequestEntry
                .builder().id("e" + i).messageBody("b".repeat(100_000)).build()).toList();
        assertThatThrownBy(() -> client.sendMessageBatch(b -> b.queueUrl(url).entries(over)))
                .isInstanceOf(BatchRequestTooLongException.class).hasMessageContaining("262144")
                .hasMessageContaining("300000");
        assertThat(count("input-batch-total")).isZero();

        List<SendMessageBatchRequestEntry> within = IntStream.range(0, 2).mapToObj(i -> SendMessageBatchRequestEntry
                .builder().id("e" + i).messageBody("b".repeat(100_000)).build()).toList();
        assertThat(client.sendMessageBatch(b -> b.queueUrl(url).entries(within)).successful()).hasSize(2);

        // a queue with the default (SQS's since 2025: 1 MiB) lets a larger batch through, and stops at 1 MiB
        String big = client.createQueue(r -> r.queueName("input-batch-big")).queueUrl();
        assertThat(client.sendMessageBatch(b -> b.queueUrl(big).entries(over)).successful()).hasSize(3);
        List<SendMessageBatchRequestEntry> overMib = IntStream.range(0, 10).mapToObj(i -> SendMessageBatchRequestEntry
                .builder().id("e" + i).messageBody("b".repeat(110_000)).build()).toList();
        assertThatThrownBy(() -> client.sendMessageBatch(b -> b.queueUrl(big).entries(overMib)))
                .isInstanceOf(BatchRequestTooLongException.class).hasMessageContaining("1048576");
        assertThat(client.sendMessage(r -> r.queueUrl(big).messageBody("m".repeat(1_048_576))).messageId())
                .isNotEmpty();
        assertThatThrownBy(() -> client.sendMessage(r -> r.queueUrl(big).messageBody("m".repeat(1_048_577))))
                .isInstanceOfSatisfying(SqsException.class, e -> assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo("InvalidParameterValue"));
    }

    @Test
    @DisplayName("a query-protocol body that is not UTF-8 (percent-encoded or raw) is refused naming the parameter,"
            + " not stored with replacement characters")
    void invalidUtf8() {
        String url = client.createQueue(r -> r.queueName("input-utf8")).queueUrl();
        RawHttp.Reply encoded = signedQuery("Action=SendMessage&QueueUrl=" + url + "&MessageBody=ok%FF%FEok");
        assertThat(encoded.status()).as(encoded.body()).isEqualTo(400);
        assertThat(encoded.one("Code")).isEqualTo("InvalidParameterValue");
        assertThat(encoded.one("Message")).contains("MessageBody").contains("UTF-8");

        byte[] raw = ("Action=SendMessage&QueueUrl=" + url + "&MessageBody=ok\u00ffok")
                .getBytes(StandardCharsets.ISO_8859_1);
        RawHttp.Reply rawReply = signedQuery(raw);
        assertThat(rawReply.status()).as(rawReply.body()).isEqualTo(400);
        assertThat(rawReply.one("Message")).contains("UTF-8");
        assertThat(count("input-utf8")).isZero();

        RawHttp.Reply good = signedQuery("Action=SendMessage&QueueUrl=" + url + "&MessageBody=%C3%A9t%C3%A9");
        assertThat(good.status()).as(good.body()).isEqualTo(200);
        assertThat(client.receiveMessage(r -> r.queueUrl(url)).messages().get(0).body()).isEqualTo("été");
    }

    @Test
    @DisplayName("MessageAttribute.-1, .0 and huge indexes are refused naming the parameter, not silently dropped")
    void listIndexes() {
        String url = client.createQueue(r -> r.queueName("input-index")).queueUrl();
        for (String index : List.of("-1", "0", "1000001", "99999999999999999999")) {
            String p = "MessageAttribute." + index + ".";
            RawHttp.Reply r = signedQuery("Action=SendMessage&QueueUrl=" + url + "&MessageBody=x&" + p + "Name=a&" + p
                    + "Value.DataType=String&" + p + "Value.StringValue=v");
            assertThat(r.status()).as(index + ": " + r.body()).isEqualTo(400);
            assertThat(r.one("Code")).isEqualTo("InvalidParameterValue");
            assertThat(r.one("Message")).contains("MessageAttribute." + index);
        }
        RawHttp.Reply noValue = signedQuery("Action=SendMessage&QueueUrl=" + url
                + "&MessageBody=x&MessageAttribute.1.Name=a");
        assertThat(noValue.status()).as("an attribute with a name and no value: " + noValue.body()).isEqualTo(400);
        assertThat(noValue.one("Message")).contains("MessageAttribute.1");
        assertThat(count("input-index")).isZero();

        RawHttp.Reply ok = signedQuery("Action=SendMessage&QueueUrl=" + url + "&MessageBody=x"
                + "&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=v");
        assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    }

    @Test
    @DisplayName("a JSON-protocol body that is not one object (a number, a list, an object with more after it), or"
            + " whose text member is a number, is refused with SerializationException")
    void jsonNotAnObject() {
        for (String body : List.of("5", "[1]", "\"x\"", "null", "true", "{\"QueueNamePrefix\":\"a\"} 5", "{} {}",
                "{\"QueueNamePrefix\":5}", "{\"QueueNamePrefix\":{\"a\":1}}")) {
            RawHttp.Reply r = signedJson("ListQueues", body);
            assertThat(r.status()).as(body + ": " + r.body()).isEqualTo(400);
            assertThat(r.header("x-amzn-query-error")).as(body).startsWith("SerializationException;");
        }
        assertThat(signedJson("ListQueues", "{}").status()).isEqualTo(200);
    }

    @Test
    @DisplayName("an unknown action is InvalidAction (400) once the caller is authenticated, whatever the authorizer"
            + " says of it; unauthenticated, it is refused as unauthenticated and learns nothing")
    void unknownAction() {
        RawHttp.Reply query = signedQuery("Action=StealEverything");
        assertThat(query.status()).as(query.body()).isEqualTo(400);
        assertThat(query.one("Code")).isEqualTo("InvalidAction");
        RawHttp.Reply json = signedJson("StealEverything", "{}");
        assertThat(json.status()).as(json.body()).isEqualTo(400);
        assertThat(json.header("x-amzn-query-error")).startsWith("InvalidAction;");

        RawHttp.Reply unsigned = RawHttp.query(endpoint.url(), Map.of("Action", "StealEverything"));
        assertThat(unsigned.status()).isEqualTo(403);
        assertThat(unsigned.one("Code")).isEqualTo("MissingAuthenticationToken");

        RawHttp.Reply known = signedQuery("Action=DeleteQueue&QueueUrl=" + endpoint.url() + "/000000000000/x");
        assertThat(known.status()).as("a known action the authorizer refuses").isEqualTo(403);
        assertThat(known.one("Code")).isEqualTo("AccessDenied");
        assertThat(URI.create(endpoint.url().toString())).isNotNull();
    }
}
