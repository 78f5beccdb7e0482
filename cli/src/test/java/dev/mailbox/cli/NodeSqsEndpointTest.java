package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.TestingCluster;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * {@code mailboxctl node start --sqs-listen}: a node process serves its mailboxes over SQS, signed by the keys
 * given with {@code --sqs-access-key}; a message sent by an SQS client is the node's mailbox's message, read by a
 * {@link RemoteMailbox} through the node's data plane.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeSqsEndpointTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private TestingCluster coordinators;
    private Child node;

    @AfterEach
    void stopAll() {
        if (node != null) {
            node.kill();
        }
        if (coordinators != null) {
            coordinators.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static SqsClient client(URI endpoint, String keyId, String secret) {
        return SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(keyId, secret)))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
    }

    @Test
    @DisplayName("an SQS client's queue is the node's mailbox: sent over SQS, received through the data plane, and"
            + " the other way round; unsigned or wrongly signed requests are refused")
    void servesTheNodesMailboxesOverSqs() throws Exception {
        coordinators = TestingCluster.start(1);
        coordinators.awaitLeader(PATIENCE);
        String listen = "127.0.0.1:" + freePort();
        URI sqsUrl = URI.create("http://127.0.0.1:" + freePort());
        node = Child.start(dir.resolve("node.out"), "node", "start", "--id", "node-a", "--listen", listen,
                "-c", String.join(",", coordinators.endpoints()), "--backend", "memory",
                "--sqs-listen", sqsUrl.getAuthority(), "--sqs-access-key", "AKIDNODE:node-secret:orders-app");
        node.awaitOutput("serving SQS at " + sqsUrl, PATIENCE);

        try (SqsClient sqs = client(sqsUrl, "AKIDNODE", "node-secret");
             RemoteMailbox<String> direct = RemoteMailbox.builder("orders", Codec.utf8()).node(listen).build()) {
            String url = sqs.createQueue(r -> r.queueName("orders")).queueUrl();
            assertThat(url).isEqualTo(sqsUrl + "/000000000000/orders");
            sqs.sendMessage(r -> r.queueUrl(url).messageBody("from sqs").messageAttributes(Map.of("n",
                    MessageAttributeValue.builder().dataType("String").stringValue("1").build())));

            List<Message<String>> got = direct.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
            assertThat(got).singleElement().satisfies(m -> {
                assertThat(m.body()).isEqualTo("from sqs");
                assertThat(m.attributes()).containsEntry("n", "1");
            });
            direct.acknowledge(got.get(0).receiptHandle());

            direct.send("from the data plane");
            var received = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages();
            assertThat(received).singleElement().satisfies(m -> assertThat(m.body()).isEqualTo("from the data plane"));
            sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(received.get(0).receiptHandle()));
            assertThat(direct.approximateCount()).isZero();

            // typed attributes and system attributes cross the data plane: the sender's principal comes back as
            // SenderId, a Number stays a Number for an SQS client and for a Java reader
            sqs.sendMessage(r -> r.queueUrl(url).messageBody("typed").messageAttributes(Map.of("total",
                    MessageAttributeValue.builder().dataType("Number").stringValue("12.50").build())));
            var typed = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5).visibilityTimeout(0)
                    .messageAttributeNames("All").messageSystemAttributeNamesWithStrings("SenderId")).messages().get(0);
            assertThat(typed.messageAttributes().get("total").dataType()).isEqualTo("Number");
            assertThat(typed.attributesAsStrings()).containsEntry("SenderId", "orders-app");
            Message<String> seen = direct.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))).get(0);
            assertThat(seen.typedAttributes()).containsEntry("total", dev.mailbox.api.AttributeValue.number("12.50"));
            assertThat(seen.attributes()).isEmpty();
            direct.acknowledge(seen.receiptHandle());

            // the coordinators' queue directory holds no FIFO queues yet: one is refused, and none is left behind
            assertThatThrownBy(() -> sqs.createQueue(r -> r.queueName("events.fifo").attributesWithStrings(
                    Map.of("FifoQueue", "true")))).isInstanceOfSatisfying(SqsException.class, e ->
                    assertThat(e.awsErrorDetails().errorCode()).isEqualTo("AWS.SimpleQueueService.UnsupportedOperation"));
            assertThatThrownBy(() -> sqs.getQueueUrl(r -> r.queueName("events.fifo")))
                    .isInstanceOf(software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException.class);
        }
        try (SqsClient wrong = client(sqsUrl, "AKIDNODE", "not-the-secret")) {
            assertThatThrownBy(wrong::listQueues).isInstanceOfSatisfying(SqsException.class,
                    e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("SignatureDoesNotMatch"));
        }
    }
}
