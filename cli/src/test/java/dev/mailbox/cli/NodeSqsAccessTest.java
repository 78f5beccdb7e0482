package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.StderrCapture;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * The SQS endpoint of a node with security on: each access key acts as its principal under the node's access
 * rules. Node "front" serves SQS (memory backend, queues {@code shop} and {@code billing} hosted there); node
 * "owner" owns the mailbox of queue {@code remote}, and its rules differ from front's: front grants alice the
 * client role on {@code remote}, the owner does not. Both nodes hold the client role on every namespace
 * themselves, so a call made with the node's rights instead of the caller's would go through.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NodeSqsAccessTest {

    @TempDir
    static Path dir;

    private static final String COMMON = """
            admin  admin   *
            front  node    *
            owner  node    *
            # the nodes may use every mailbox themselves: the endpoint must not lend that to its callers
            front  client  *
            owner  client  *
            carol  client  remote
            """;
    private static final Map<String, String> TOKENS = new LinkedHashMap<>();
    private static StderrCapture captured;
    private static final List<AutoCloseable> CLOSE = new ArrayList<>();
    private static TestingCluster cluster;
    private static Mailbox<byte[]> remote;
    private static NodeSqsEndpoint endpoint;

    @BeforeAll
    static void start() throws Exception {
        captured = StderrCapture.start();
        StringBuilder tokens = new StringBuilder();
        for (String p : List.of("admin", "front", "owner")) {
            String token = Access.newToken();
            TOKENS.put(p, token);
            tokens.append(Access.tokenLine(p, token)).append('\n');
        }
        Path tokenFile = Files.writeString(dir.resolve("tokens"), tokens.toString());
        Access frontRules = Access.fromFiles(tokenFile, Files.writeString(dir.resolve("front-rules"), COMMON + """
                alice  client  shop,remote
                """));
        Access ownerRules = Access.fromFiles(tokenFile, Files.writeString(dir.resolve("owner-rules"), COMMON));
        cluster = TestingCluster.builder().size(1).configure(b -> b.access(ownerRules)).clientSecurity(as("admin"))
                .start();
        cluster.awaitLeader(Duration.ofSeconds(30));
        NodeBackend memory = NodeBackend.parse("memory");
        CLOSE.add(memory::close);
        MailboxNode owner = node("owner", ownerRules, null);
        MailboxNode front = node("front", frontRules, memory);
        remote = InMemoryMailbox.builder("remote", Codec.bytes()).build();
        CLOSE.add(remote);
        owner.publish(remote);
        assertThat(front.routingTable().orElseThrow().await(t -> t.route("remote").isPresent(), Duration.ofSeconds(10)))
                .isTrue();
        endpoint = NodeSqsEndpoint.start(front, memory, new InetSocketAddress("127.0.0.1", 0),
                List.of("AKIDADMIN:admin-secret:admin", "AKIDALICE:alice-secret:alice", "AKIDCAROL:carol-secret:carol"),
                as("front"), true, frontRules);
        CLOSE.add(endpoint);
        for (String q : List.of("shop", "billing", "remote")) {
            ADMIN.createQueue(r -> r.queueName(q));
        }
    }

    private static final SqsClient ADMIN = sqs("AKIDADMIN", "admin-secret");
    private static final SqsClient ALICE = sqs("AKIDALICE", "alice-secret");
    private static final SqsClient CAROL = sqs("AKIDCAROL", "carol-secret");

    private static MailboxNode node(String id, Access access, NodeBackend backend) {
        CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).security(as(id)).build();
        CLOSE.add(c);
        MailboxNode.Builder b = MailboxNode.builder(id).coordinator(c).access(access).peerSecurity(as(id));
        if (backend != null) {
            b.backend(backend);
        }
        MailboxNode n = b.start();
        CLOSE.add(n);
        return n;
    }

    private static ClientSecurity as(String principal) {
        return ClientSecurity.none().withToken(TOKENS.get(principal));
    }

    private static SqsClient sqs(String keyId, String secret) {
        // the endpoint's URL is known only once it runs: resolved per call through a lazily built client
        return (SqsClient) java.lang.reflect.Proxy.newProxyInstance(SqsClient.class.getClassLoader(),
                new Class<?>[] {SqsClient.class}, new java.lang.reflect.InvocationHandler() {
                    private SqsClient client;

                    @Override
                    public synchronized Object invoke(Object proxy, java.lang.reflect.Method method, Object[] args)
                            throws Throwable {
                        if (client == null) {
                            client = SqsClient.builder().endpointOverride(endpoint.url()).region(Region.US_EAST_1)
                                    .credentialsProvider(StaticCredentialsProvider.create(
                                            AwsBasicCredentials.create(keyId, secret)))
                                    .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
                            CLOSE.add(client);
                        }
                        try {
                            return method.invoke(client, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                });
    }

    @AfterAll
    static void stop() throws Exception {
        for (int i = CLOSE.size() - 1; i >= 0; i--) {
            CLOSE.get(i).close();
        }
        if (cluster != null) {
            cluster.close();
        }
        captured.close();
    }

    private static String url(String queue) {
        return endpoint.url() + "/000000000000/" + queue;
    }

    /** @return every message not yet deleted: visible, in flight and delayed */
    private static long count(String queue) {
        Map<QueueAttributeName, String> a = ADMIN.getQueueAttributes(r -> r.queueUrl(url(queue)).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED)).attributes();
        return a.values().stream().mapToLong(Long::parseLong).sum();
    }

    private static void assertDenied(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SqsException.class, e -> {
            assertThat(e.statusCode()).isEqualTo(403);
            assertThat(e.awsErrorDetails().errorCode()).isEqualTo("AccessDenied");
        });
    }

    @Test
    @DisplayName("a client of namespace shop sends, receives, changes visibility and deletes in shop")
    void clientUsesItsNamespace() {
        String url = url("shop");
        ALICE.sendMessage(r -> r.queueUrl(url).messageBody("for the shop"));
        var m = ALICE.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages();
        assertThat(m).singleElement().satisfies(x -> assertThat(x.body()).isEqualTo("for the shop"));
        ALICE.changeMessageVisibility(r -> r.queueUrl(url).receiptHandle(m.get(0).receiptHandle()).visibilityTimeout(30));
        ALICE.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.get(0).receiptHandle()));
        assertThat(count("shop")).isZero();
        assertThat(ALICE.getQueueUrl(r -> r.queueName("shop")).queueUrl()).isEqualTo(url);
    }

    @Test
    @DisplayName("the same client is refused every message action on billing with AccessDenied, audited, and billing"
            + " stays as it was")
    void clientRefusedOutsideItsNamespace() {
        String url = url("billing");
        ADMIN.sendMessage(r -> r.queueUrl(url).messageBody("not alice's"));
        assertDenied(() -> ALICE.sendMessage(r -> r.queueUrl(url).messageBody("sneaky")));
        assertDenied(() -> ALICE.sendMessageBatch(r -> r.queueUrl(url).entries(
                software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry.builder().id("a")
                        .messageBody("sneaky").build())));
        assertDenied(() -> ALICE.receiveMessage(r -> r.queueUrl(url)));
        assertDenied(() -> ALICE.purgeQueue(r -> r.queueUrl(url)));
        assertDenied(() -> ALICE.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL)));
        assertDenied(() -> ALICE.getQueueUrl(r -> r.queueName("billing")));
        assertThat(ALICE.listQueues().queueUrls()).as("the list shows only alice's queues")
                .containsExactlyInAnyOrder(url("shop"), url("remote"));

        var held = ADMIN.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages();
        assertThat(held).singleElement().satisfies(x -> assertThat(x.body()).isEqualTo("not alice's"));
        assertDenied(() -> ALICE.deleteMessage(r -> r.queueUrl(url).receiptHandle(held.get(0).receiptHandle())));
        assertDenied(() -> ALICE.changeMessageVisibility(r -> r.queueUrl(url)
                .receiptHandle(held.get(0).receiptHandle()).visibilityTimeout(0)));
        assertThat(count("billing")).as("nothing sent, purged or deleted").isEqualTo(1);
        ADMIN.deleteMessage(r -> r.queueUrl(url).receiptHandle(held.get(0).receiptHandle()));
        assertThat(count("billing")).isZero();
        assertThat(captured.text())
                .contains("audit principal=alice action=sqs:SendMessage target=billing outcome=REFUSED")
                .contains("audit principal=alice action=sqs:DeleteMessage target=billing outcome=REFUSED")
                .doesNotContain("alice-secret").doesNotContain("sneaky");
    }

    @Test
    @DisplayName("creating, deleting, configuring and tagging queues is an admin's: refused for a client even in its"
            + " own namespace, and nothing changes")
    void adminOnlyActions() {
        String url = url("shop");
        Map<String, String> before = ADMIN.getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                QueueAttributeName.VISIBILITY_TIMEOUT, QueueAttributeName.DELAY_SECONDS)).attributesAsStrings();
        assertDenied(() -> ALICE.createQueue(r -> r.queueName("shop")));
        assertDenied(() -> ALICE.createQueue(r -> r.queueName("shop-new")));
        assertDenied(() -> ALICE.setQueueAttributes(r -> r.queueUrl(url).attributesWithStrings(
                Map.of("VisibilityTimeout", "5"))));
        assertDenied(() -> ALICE.tagQueue(r -> r.queueUrl(url).tags(Map.of("owner", "alice"))));
        assertDenied(() -> ALICE.untagQueue(r -> r.queueUrl(url).tagKeys("owner")));
        assertDenied(() -> ALICE.deleteQueue(r -> r.queueUrl(url)));

        assertThat(ADMIN.listQueues(r -> r.queueNamePrefix("shop")).queueUrls()).containsExactly(url);
        assertThat(ADMIN.getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                QueueAttributeName.VISIBILITY_TIMEOUT, QueueAttributeName.DELAY_SECONDS)).attributesAsStrings())
                .isEqualTo(before);
        assertThat(ADMIN.listQueueTags(r -> r.queueUrl(url)).tags()).isEmpty();
        assertThat(captured.text())
                .contains("audit principal=alice action=sqs:CreateQueue target=shop-new outcome=REFUSED")
                .contains("audit principal=alice action=sqs:DeleteQueue target=shop outcome=REFUSED");
    }

    @Test
    @DisplayName("an admin's DeleteQueue takes the messages with it under access rules: the queue created again is empty")
    void deleteQueueEmptiesIt() {
        String url = ADMIN.createQueue(r -> r.queueName("gone")).queueUrl();
        ADMIN.sendMessage(r -> r.queueUrl(url).messageBody("left behind?"));
        ADMIN.deleteQueue(r -> r.queueUrl(url));

        String again = ADMIN.createQueue(r -> r.queueName("gone")).queueUrl();
        assertThat(ADMIN.receiveMessage(r -> r.queueUrl(again).waitTimeSeconds(1)).messages()).isEmpty();
    }

    @Test
    @DisplayName("ListDeadLetterSourceQueues names only the source queues the caller may see, like ListQueues")
    void deadLetterSourcesFiltered() {
        ADMIN.createQueue(r -> r.queueName("hidden-src").attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:shop\",\"maxReceiveCount\":\"5\"}")));
        String dlq = url("shop");

        assertThat(ADMIN.listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).queueUrls())
                .anySatisfy(u -> assertThat(u).endsWith("/hidden-src"));
        assertThat(ALICE.listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).queueUrls())
                .as("alice may count shop but not hidden-src").noneSatisfy(u -> assertThat(u).endsWith("/hidden-src"));
    }

    @Test
    @DisplayName("a call forwarded to the node owning the queue is checked there as the key's principal, against the"
            + " owner's rules, not as the forwarding node")
    void forwardedCallCheckedAsTheCaller() {
        String url = url("remote");
        // carol is a client of remote at both nodes: her calls reach the owner's mailbox
        CAROL.sendMessage(r -> r.queueUrl(url).messageBody("from carol"));
        assertThat(remote.approximateCount()).isEqualTo(1);
        var got = CAROL.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages();
        assertThat(got).singleElement().satisfies(x -> assertThat(x.body()).isEqualTo("from carol"));

        // alice is one at front only: front lets her calls through, the owner refuses them, as alice
        assertDenied(() -> ALICE.sendMessage(r -> r.queueUrl(url).messageBody("sneaky")));
        assertDenied(() -> ALICE.deleteMessage(r -> r.queueUrl(url).receiptHandle(got.get(0).receiptHandle())));
        assertDenied(() -> ALICE.purgeQueue(r -> r.queueUrl(url)));
        assertThat(remote.approximateCount()).as("nothing stored, deleted or purged at the owner").isEqualTo(1);
        assertThat(captured.text()).as("the owner's audit line names alice, not front")
                .contains("audit principal=alice action=send target=remote outcome=REFUSED");

        CAROL.deleteMessage(r -> r.queueUrl(url).receiptHandle(got.get(0).receiptHandle()));
        assertThat(remote.approximateCount()).isZero();
    }
}
