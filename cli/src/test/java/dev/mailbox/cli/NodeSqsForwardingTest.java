package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * A queue whose mailbox another node owns: the SQS endpoint of node "front" forwards every call to the owner
 * through its data plane, like any data-plane call, and hosts nothing itself.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeSqsForwardingTest {

    @Test
    @DisplayName("send, receive, change visibility and delete over SQS on one node act on the mailbox another node"
            + " owns")
    void forwardsToTheOwner() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(1).start()) {
            CoordinationClient client = cluster.client();
            NodeBackend memory = NodeBackend.parse("memory");
            try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).start();
                 MailboxNode front = MailboxNode.builder("front").coordinator(client).backend(memory).start();
                 Mailbox<byte[]> orders = InMemoryMailbox.builder("orders", Codec.bytes()).build()) {
                owner.publish(orders);
                assertThat(front.routingTable().orElseThrow().await(t -> t.route("orders").isPresent(),
                        Duration.ofSeconds(10))).isTrue();
                try (NodeSqsEndpoint sqsEndpoint = NodeSqsEndpoint.start(front, memory,
                        new InetSocketAddress("127.0.0.1", 0), List.of("AKIDFRONT:front-secret"), ClientSecurity.none(),
                        false);
                     SqsClient sqs = SqsClient.builder().endpointOverride(sqsEndpoint.url()).region(Region.US_EAST_1)
                             .credentialsProvider(StaticCredentialsProvider.create(
                                     AwsBasicCredentials.create("AKIDFRONT", "front-secret")))
                             .httpClientBuilder(UrlConnectionHttpClient.builder()).build()) {
                    String url = sqs.createQueue(r -> r.queueName("orders")).queueUrl();
                    assertThat(URI.create(url).getPort()).isEqualTo(sqsEndpoint.url().getPort());
                    sqs.sendMessage(r -> r.queueUrl(url).messageBody("to the owner").messageAttributes(Map.of("n",
                            MessageAttributeValue.builder().dataType("Number").stringValue("7").build())));

                    assertThat(front.hosted()).as("the front node hosts nothing").doesNotContain("orders");
                    assertThat(orders.approximateCount()).as("stored in the owner's mailbox").isEqualTo(1);

                    var m = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5).messageAttributeNames("All"))
                            .messages().get(0);
                    assertThat(m.body()).isEqualTo("to the owner");
                    assertThat(m.messageAttributes().get("n").stringValue()).isEqualTo("7");
                    sqs.changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(m.receiptHandle())
                            .visibilityTimeout(0));
                    List<Message<byte[]>> atOwner = orders.receive(ReceiveOptions.defaults()
                            .withWaitTime(Duration.ofSeconds(5)));
                    assertThat(atOwner).singleElement().satisfies(d -> {
                        assertThat(new String(d.body(), StandardCharsets.UTF_8)).isEqualTo("to the owner");
                        assertThat(d.deliveryCount()).isEqualTo(2);
                    });
                    orders.acknowledge(atOwner.get(0).receiptHandle());

                    orders.send("from the owner".getBytes(StandardCharsets.UTF_8), SendOptions.defaults());
                    var back = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages().get(0);
                    assertThat(back.body()).isEqualTo("from the owner");
                    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(back.receiptHandle()));
                    assertThat(orders.approximateCount()).isZero();
                }
            } finally {
                memory.close();
            }
        }
    }
}
