package dev.mailbox.cli;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.sqs.SqsMailboxContract;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The whole Mailbox TCK through {@link SqsMailbox} (AWS SDK v2, signed requests) pointed at the SQS endpoint of a
 * real {@link MailboxNode} ({@code mailboxctl node start --sqs-listen}, in this JVM), registered with a
 * coordinator from {@link TestingCluster}: every call takes the node's path, SQS wire to the endpoint, then the
 * node's own data plane to the backend. Subclasses pick the node's backend. The tests run concurrently (they
 * mostly wait on whole-second timeouts), each on its own queue.
 */
@Execution(ExecutionMode.CONCURRENT)
abstract class NodeSqsContractTest extends SqsMailboxContract {

    static final String KEY_ID = "AKIDNODETCK";
    static final String SECRET = "node-tck-secret";

    /** A running coordinator, node and endpoint, and a client of the endpoint. */
    static final class Running implements AutoCloseable {
        private final List<AutoCloseable> close = new ArrayList<>();
        SqsClient client;

        /**
         * @param backend the node's backend (closed with the rest)
         * @param dir     where the access files go, or null to run with security off
         */
        static Running start(NodeBackend backend, @Nullable Path dir) throws Exception {
            Running r = new Running();
            r.close.add(backend::close);
            try {
                Access access = null;
                String nodeToken = null;
                String adminToken = Access.newToken();
                if (dir != null) {
                    nodeToken = Access.newToken();
                    Path tokens = Files.writeString(dir.resolve("tokens"), Access.tokenLine("admin", adminToken) + "\n"
                            + Access.tokenLine("node-tck", nodeToken) + "\n");
                    // the key's principal may create and delete the TCK's queues, and nothing else
                    Path rules = Files.writeString(dir.resolve("rules"), """
                            admin     admin  *
                            node-tck  node   *
                            tck       admin  tck-*
                            """);
                    access = Access.fromFiles(tokens, rules);
                }
                Access a = access;
                TestingCluster cluster = TestingCluster.builder().size(1)
                        .configure(b -> a == null ? b : b.access(a))
                        .clientSecurity(a == null ? ClientSecurity.none() : ClientSecurity.none().withToken(adminToken))
                        .start();
                r.close.add(cluster);
                cluster.awaitLeader(Duration.ofSeconds(30));
                ClientSecurity asNode = nodeToken == null ? ClientSecurity.none()
                        : ClientSecurity.none().withToken(nodeToken);
                CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).security(asNode)
                        .build();
                r.close.add(c);
                MailboxNode.Builder nb = MailboxNode.builder("node-tck").coordinator(c).backend(backend)
                        .peerSecurity(asNode);
                if (access != null) {
                    nb.access(access);
                }
                MailboxNode node = nb.start();
                r.close.add(node);
                NodeSqsEndpoint endpoint = NodeSqsEndpoint.start(node, backend, new InetSocketAddress("127.0.0.1", 0),
                        List.of(KEY_ID + ":" + SECRET + ":tck"), asNode, access != null, access);
                r.close.add(endpoint);
                r.client = SqsClient.builder().endpointOverride(endpoint.url()).region(Region.US_EAST_1)
                        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(KEY_ID,
                                SECRET)))
                        .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
                r.close.add(r.client);
                return r;
            } catch (Exception | Error e) {
                r.close();
                throw e;
            }
        }

        @Override
        public void close() {
            for (int i = close.size() - 1; i >= 0; i--) {
                try {
                    close.get(i).close();
                } catch (Exception e) {
                    // the rest still closes
                }
            }
            close.clear();
        }
    }
}
