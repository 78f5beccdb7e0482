package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Queue records live in the coordinators, so the SQS endpoints of two nodes agree on queues, their attributes and
 * tags: what one creates, changes or deletes, the other sees at once; a restarted node forgets nothing; concurrent
 * creates and tag changes from the two nodes neither fork nor lose anything.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeSqsSharedQueuesTest {

    private TestingCluster cluster;
    private NodeBackend memoryA;
    private NodeBackend memoryB;
    private final List<AutoCloseable> open = new ArrayList<>();
    private MailboxNode nodeA;
    private NodeSqsEndpoint endpointA;
    private SqsClient sqsA;
    private SqsClient sqsB;

    @BeforeEach
    void start() {
        cluster = TestingCluster.builder().size(1).start();
        memoryA = NodeBackend.parse("memory");
        memoryB = NodeBackend.parse("memory");
        startA();
        MailboxNode nodeB = MailboxNode.builder("node-b").coordinator(client()).backend(memoryB).start();
        open.add(nodeB);
        NodeSqsEndpoint endpointB = endpoint(nodeB, memoryB);
        sqsB = sqs(endpointB.url());
    }

    private CoordinationClient client() {
        CoordinationClient c = cluster.client();
        open.add(c);
        return c;
    }

    private void startA() {
        nodeA = MailboxNode.builder("node-a").coordinator(client()).backend(memoryA).start();
        endpointA = endpoint(nodeA, memoryA);
        sqsA = sqs(endpointA.url());
    }

    private void stopA() {
        endpointA.close();
        nodeA.close();
    }

    private NodeSqsEndpoint endpoint(MailboxNode node, NodeBackend backend) {
        NodeSqsEndpoint e = NodeSqsEndpoint.start(node, backend, new InetSocketAddress("127.0.0.1", 0),
                List.of("AKID:secret"), ClientSecurity.none(), false);
        open.add(e);
        return e;
    }

    private SqsClient sqs(URI url) {
        SqsClient c = SqsClient.builder().endpointOverride(url).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKID", "secret")))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
        open.add(c);
        return c;
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (RuntimeException alreadyClosed) {
                // a node stopped by the test
            }
        }
        memoryA.close();
        memoryB.close();
        cluster.close();
    }

    private static Map<String, String> attributes(SqsClient sqs, String url) {
        Map<String, String> out = new HashMap<>();
        sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL)).attributes()
                .forEach((k, v) -> out.put(k.toString(), v));
        return out;
    }

    @Test
    @DisplayName("a queue created on node A with attributes and tags is found, read, listed and changed on node B, "
            + "and a delete on A is seen on B")
    void twoNodesAgree() {
        sqsA.createQueue(r -> r.queueName("orders-dlq"));
        String urlA = sqsA.createQueue(r -> r.queueName("orders").attributesWithStrings(Map.of(
                "VisibilityTimeout", "45", "DelaySeconds", "3",
                "RedrivePolicy", "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\","
                        + "\"maxReceiveCount\":\"4\"}")).tags(Map.of("team", "shop"))).queueUrl();

        String urlB = sqsB.getQueueUrl(r -> r.queueName("orders")).queueUrl();
        assertThat(URI.create(urlB).getPath()).isEqualTo(URI.create(urlA).getPath());
        Map<String, String> onB = attributes(sqsB, urlB);
        assertThat(onB).containsEntry("VisibilityTimeout", "45").containsEntry("DelaySeconds", "3");
        assertThat(onB.get("RedrivePolicy")).contains("orders-dlq").contains("4");
        assertThat(onB.get("CreatedTimestamp")).isEqualTo(attributes(sqsA, urlA).get("CreatedTimestamp"));
        assertThat(sqsB.listQueues(r -> r.queueNamePrefix("ord")).queueUrls()).hasSize(2)
                .allMatch(u -> u.startsWith(endpointUrl(sqsB)));
        assertThat(sqsB.listQueueTags(r -> r.queueUrl(urlB)).tags()).containsExactly(Map.entry("team", "shop"));
        assertThat(sqsB.listDeadLetterSourceQueues(r -> r.queueUrl(sqsB.getQueueUrl(q -> q.queueName("orders-dlq"))
                .queueUrl())).queueUrls()).singleElement().satisfies(u -> assertThat(u).endsWith("/orders"));

        sqsB.setQueueAttributes(r -> r.queueUrl(urlB).attributesWithStrings(Map.of("VisibilityTimeout", "90",
                "MaximumMessageSize", "2048")));
        sqsB.untagQueue(r -> r.queueUrl(urlB).tagKeys("team"));
        sqsB.tagQueue(r -> r.queueUrl(urlB).tags(Map.of("env", "prod")));
        assertThat(attributes(sqsA, urlA)).containsEntry("VisibilityTimeout", "90")
                .containsEntry("MaximumMessageSize", "2048").containsEntry("DelaySeconds", "3");
        assertThat(sqsA.listQueueTags(r -> r.queueUrl(urlA)).tags()).containsExactly(Map.entry("env", "prod"));

        sqsA.deleteQueue(r -> r.queueUrl(urlA));
        assertThatThrownBy(() -> sqsB.getQueueUrl(r -> r.queueName("orders")))
                .isInstanceOf(QueueDoesNotExistException.class);
        assertThatThrownBy(() -> sqsB.getQueueAttributes(r -> r.queueUrl(urlB).attributeNames(QueueAttributeName.ALL)))
                .isInstanceOf(QueueDoesNotExistException.class);
        assertThat(sqsB.listQueues(r -> r.queueNamePrefix("ord")).queueUrls()).singleElement()
                .satisfies(u -> assertThat(u).endsWith("/orders-dlq"));
    }

    private static String endpointUrl(SqsClient sqs) {
        return sqs.serviceClientConfiguration().endpointOverride().orElseThrow().toString();
    }

    @Test
    @DisplayName("a restarted node still knows every queue, its attributes and its tags")
    void restartKeepsRecords() {
        String url = sqsA.createQueue(r -> r.queueName("kept").attributesWithStrings(Map.of("DelaySeconds", "7"))
                .tags(Map.of("a", "1"))).queueUrl();
        sqsA.tagQueue(r -> r.queueUrl(url).tags(Map.of("b", "2")));
        stopA();
        startA();
        String again = sqsA.getQueueUrl(r -> r.queueName("kept")).queueUrl();
        assertThat(attributes(sqsA, again)).containsEntry("DelaySeconds", "7");
        assertThat(sqsA.listQueueTags(r -> r.queueUrl(again)).tags()).containsOnly(Map.entry("a", "1"),
                Map.entry("b", "2"));
        sqsA.sendMessage(r -> r.queueUrl(again).messageBody("after the restart").delaySeconds(0));
        assertThat(sqsA.receiveMessage(r -> r.queueUrl(again).waitTimeSeconds(5)).messages()).singleElement()
                .satisfies(m -> assertThat(m.body()).isEqualTo("after the restart"));
    }

    @Test
    @DisplayName("concurrent CreateQueue calls for one name on both nodes all succeed with the one record that won, "
            + "and concurrent TagQueue calls on both nodes all survive")
    void concurrentCreatesAndTagsFromTwoNodes() throws Exception {
        int perNode = 10;
        ExecutorService pool = Executors.newFixedThreadPool(2 * perNode);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> urls = new ArrayList<>();
            for (int i = 0; i < 2 * perNode; i++) {
                SqsClient sqs = i % 2 == 0 ? sqsA : sqsB;
                String by = "caller-" + i;
                urls.add(pool.submit(() -> {
                    go.await();
                    return sqs.createQueue(r -> r.queueName("raced").tags(Map.of("by", by))).queueUrl();
                }));
            }
            go.countDown();
            for (Future<String> u : urls) {
                assertThat(URI.create(u.get(60, TimeUnit.SECONDS)).getPath()).isEqualTo("/000000000000/raced");
            }
            String urlA = sqsA.getQueueUrl(r -> r.queueName("raced")).queueUrl();
            String urlB = sqsB.getQueueUrl(r -> r.queueName("raced")).queueUrl();
            Map<String, String> tagsA = sqsA.listQueueTags(r -> r.queueUrl(urlA)).tags();
            assertThat(tagsA).hasSize(1).containsKey("by");
            assertThat(sqsB.listQueueTags(r -> r.queueUrl(urlB)).tags()).isEqualTo(tagsA);

            CountDownLatch tagGo = new CountDownLatch(1);
            List<Future<?>> tagged = new ArrayList<>();
            for (int i = 0; i < perNode; i++) {
                for (SqsClient sqs : List.of(sqsA, sqsB)) {
                    String key = (sqs == sqsA ? "a-" : "b-") + i;
                    String url = sqs == sqsA ? urlA : urlB;
                    tagged.add(pool.submit(() -> {
                        tagGo.await();
                        return sqs.tagQueue(r -> r.queueUrl(url).tags(Map.of(key, "v")));
                    }));
                }
            }
            tagGo.countDown();
            for (Future<?> f : tagged) {
                f.get(60, TimeUnit.SECONDS);
            }
            Map<String, String> after = sqsB.listQueueTags(r -> r.queueUrl(urlB)).tags();
            assertThat(after).hasSize(1 + 2 * perNode);
            for (int i = 0; i < perNode; i++) {
                assertThat(after).containsKeys("a-" + i, "b-" + i);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
