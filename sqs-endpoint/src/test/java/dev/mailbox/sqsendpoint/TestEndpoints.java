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

    /** @return a directory of in-memory mailboxes (FIFO for FIFO queues) that accept SQS's largest messages */
    static QueueDirectory inMemoryDirectory() {
        return QueueDirectory.inMemory((name, fifo) -> {
            InMemoryMailbox.Builder<byte[]> b = InMemoryMailbox.builder(name, Codec.bytes())
                    .maxMessageBytes(Limits.MAX_MESSAGE_BYTES);
            if (fifo != null) {
                b.fifo(fifo);
            }
            return b.build();
        });
    }

    /**
     * @param jedis the Redis client every queue's mailbox uses
     * @return a directory of Redis mailboxes (FIFO for FIFO queues) that accept SQS's largest messages
     */
    static QueueDirectory redisDirectory(redis.clients.jedis.JedisPooled jedis) {
        return QueueDirectory.inMemory((name, fifo) -> {
            dev.mailbox.redis.RedisMailbox.Builder<byte[]> b = dev.mailbox.redis.RedisMailbox.builder(name, Codec.bytes())
                    .client(jedis).maxMessageBytes(Limits.MAX_MESSAGE_BYTES);
            if (fifo != null) {
                b.fifo(fifo);
            }
            return b.build();
        });
    }

    /** @return whether the directory's standard queues are fair: a probe queue's mailbox declares fairness */
    static boolean fair(QueueDirectory directory, SqsClient client) {
        String name = "fairness-probe-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        String url = client.createQueue(r -> r.queueName(name)).queueUrl();
        try {
            return directory.mailbox(name).capabilities().fairness();
        } finally {
            client.deleteQueue(r -> r.queueUrl(url));
        }
    }

    /** @return an endpoint over in-memory mailboxes that checks signatures by {@link #KEY_ID} */
    static SqsEndpoint signedInMemory() {
        return SqsEndpoint.builder().queues(inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(KEY_ID, SECRET, PRINCIPAL)))
                .start();
    }

    /**
     * Signs a raw request as the SDK would, now, with {@link #KEY_ID}.
     *
     * @param endpoint where it goes (its host and port are signed)
     * @param headers  its headers besides the signature's
     * @param body     its body
     * @return the headers to send: those given, the signature's and X-Amz-Date
     */
    static java.util.Map<String, String> signed(URI endpoint, java.util.Map<String, String> headers, byte[] body) {
        software.amazon.awssdk.http.SdkHttpRequest.Builder request = software.amazon.awssdk.http.SdkHttpRequest.builder()
                .method(software.amazon.awssdk.http.SdkHttpMethod.POST).uri(endpoint);
        headers.forEach(request::putHeader);
        var signed = software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.create().sign(r -> r
                .identity(software.amazon.awssdk.identity.spi.AwsCredentialsIdentity.create(KEY_ID, SECRET))
                .request(request.build())
                .payload(software.amazon.awssdk.http.ContentStreamProvider.fromByteArray(body))
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.REGION_NAME, "us-east-1"));
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        signed.request().headers().forEach((k, v) -> {
            if (!k.equalsIgnoreCase("host") && !k.equalsIgnoreCase("content-length")) {
                out.put(k, v.get(0));
            }
        });
        return out;
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
