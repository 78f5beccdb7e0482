package dev.mailbox.sqs;

import dev.mailbox.testkit.sqs.ElasticMqServer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.URI;

/** One embedded ElasticMQ server on a free loopback port for the whole test JVM. */
final class SharedElasticMq {

    private static SqsClient client;

    private SharedElasticMq() {
    }

    static synchronized SqsClient client() {
        if (client == null) {
            client = newClient(ElasticMqServer.shared().endpoint());
        }
        return client;
    }

    static URI endpoint() {
        return ElasticMqServer.shared().endpoint();
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
