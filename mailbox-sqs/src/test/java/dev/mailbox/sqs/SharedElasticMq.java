package dev.mailbox.sqs;

import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.InetSocketAddress;
import java.net.URI;

/** One embedded ElasticMQ server on a free loopback port for the whole test JVM. */
final class SharedElasticMq {

    private static SQSRestServer server;
    private static URI endpoint;
    private static SqsClient client;

    private SharedElasticMq() {
    }

    static synchronized SqsClient client() {
        if (client == null) {
            server = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
            InetSocketAddress address = server.waitUntilStarted().localAddress();
            endpoint = URI.create("http://127.0.0.1:" + address.getPort());
            client = newClient(endpoint);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                client.close();
                server.stopAndWait();
            }, "elasticmq-stop"));
        }
        return client;
    }

    static synchronized URI endpoint() {
        client();
        return endpoint;
    }

    static SqsClient newClient(URI endpoint) {
        return SqsClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .build();
    }
}
