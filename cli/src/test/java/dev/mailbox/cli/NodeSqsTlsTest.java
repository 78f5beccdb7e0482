package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.internal.Tls;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.testkit.tls.TestCertificates;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.TrustManager;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * {@code node start --sqs-tls}: the node's SQS endpoint serves HTTPS with the node's certificate, so message
 * bodies and SigV4-signed requests do not cross the network in the clear. A client that trusts the CA works as
 * over HTTP; plain HTTP to that port gets no answer; a client that does not trust the CA is refused the handshake.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeSqsTlsTest {

    @Test
    @DisplayName("with --sqs-tls the endpoint serves HTTPS: a client trusting the CA sends and receives, plain HTTP and an untrusting client get nothing")
    void https(@TempDir Path dir) throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued cert = ca.issue("node-a");
        TlsFiles server = TlsFiles.builder().keyPair(cert.certificate(), cert.key()).trusted(ca.caCertificate()).build();
        TlsFiles trusted = TlsFiles.builder().trusted(ca.caCertificate()).build();
        try (TestingCluster cluster = TestingCluster.builder().size(1).start();
             NodeBackend memory = NodeBackend.parse("memory");
             MailboxNode node = MailboxNode.builder("node-a").coordinator(cluster.client()).backend(memory).start();
             NodeSqsEndpoint endpoint = NodeSqsEndpoint.start(node, memory, new InetSocketAddress("127.0.0.1", 0),
                     List.of("AKIDTLS:tls-secret"), ClientSecurity.none(), false, null, Tls.sslContext(server))) {
            URI url = endpoint.url();
            assertThat(url.getScheme()).isEqualTo("https");
            URI byName = url; // the certificate names 127.0.0.1 and localhost; the client checks the name
            try (SqsClient sqs = client(byName, () -> new TrustManager[] {Tls.trustManager(trusted)})) {
                String queue = sqs.createQueue(r -> r.queueName("secure")).queueUrl();
                sqs.sendMessage(r -> r.queueUrl(queue).messageBody("over tls"));
                List<Message> got = sqs.receiveMessage(r -> r.queueUrl(queue).waitTimeSeconds(5)).messages();
                assertThat(got).extracting(Message::body).containsExactly("over tls");
            }
            URI plain = new URI("http", null, url.getHost(), url.getPort(), null, null, null);
            try (SqsClient sqs = client(plain, null)) {
                assertThatThrownBy(() -> sqs.listQueues()).as("plain HTTP to the HTTPS port")
                        .isInstanceOf(SdkClientException.class);
            }
            try (SqsClient sqs = client(byName, null)) {
                assertThatThrownBy(() -> sqs.listQueues()).as("a client that does not trust the node's CA")
                        .isInstanceOf(SdkClientException.class);
            }
        }
    }

    private static SqsClient client(URI endpoint, software.amazon.awssdk.http.TlsTrustManagersProvider trust) {
        UrlConnectionHttpClient.Builder http = UrlConnectionHttpClient.builder();
        if (trust != null) {
            http.tlsTrustManagersProvider(trust);
        }
        return SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDTLS", "tls-secret")))
                .overrideConfiguration(o -> o.retryPolicy(software.amazon.awssdk.core.retry.RetryPolicy.none()))
                .httpClientBuilder(http).build();
    }

    @Test
    @DisplayName("with --require-security an SQS endpoint beyond loopback without TLS refuses to start, naming the fix")
    void plainBeyondLoopbackRefused() throws Exception {
        java.net.InetAddress outside = java.net.NetworkInterface.networkInterfaces()
                .flatMap(java.net.NetworkInterface::inetAddresses)
                .filter(a -> a instanceof java.net.Inet4Address && !a.isLoopbackAddress()).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(outside != null, "this machine has no non-loopback IPv4 address");
        try (TestingCluster cluster = TestingCluster.builder().size(1).start();
             NodeBackend memory = NodeBackend.parse("memory");
             MailboxNode node = MailboxNode.builder("node-a").coordinator(cluster.client()).backend(memory).start()) {
            assertThatThrownBy(() -> NodeSqsEndpoint.start(node, memory, new InetSocketAddress(outside, 0),
                    List.of("AKIDTLS:tls-secret"), ClientSecurity.none(), true, null, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without TLS")
                    .hasMessageContaining("--sqs-tls");
        }
    }
}
