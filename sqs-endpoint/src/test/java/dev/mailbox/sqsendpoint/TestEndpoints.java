package dev.mailbox.sqsendpoint;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/** Endpoints and clients the tests share: loopback, free ports, the AWS SDK v2 client every SQS test uses. */
final class TestEndpoints {

    static final String KEY_ID = "AKIDMAILBOXTEST";
    static final String SECRET = "mailbox-test-secret";
    static final String PRINCIPAL = "tester";

    private TestEndpoints() {
    }

    /** @return a directory of in-memory mailboxes that accept SQS's largest messages */
    static QueueDirectory inMemoryDirectory() {
        return QueueDirectory.inMemory(name -> InMemoryMailbox.builder(name, Codec.bytes())
                .maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build());
    }

    /** @return an endpoint over in-memory mailboxes that checks signatures by {@link #KEY_ID} */
    static SqsEndpoint signedInMemory() {
        return SqsEndpoint.builder().queues(inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(KEY_ID, SECRET, PRINCIPAL)))
                .start();
    }

    /** @return an SDK client signing with {@link #KEY_ID} */
    static SqsClient client(URI endpoint) {
        return client(endpoint, KEY_ID, SECRET);
    }

    static SqsClient client(URI endpoint, String keyId, String secret) {
        return SqsClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(keyId, secret)))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .build();
    }
}
