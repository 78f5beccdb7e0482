package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * Signature Version 4 on the endpoint: requests signed by the SDK's own signer, then sent as signed, late, or
 * altered after signing; and the SDK client with a wrong secret or an unknown key.
 */
@DisplayName("SigV4 authentication")
class SigV4Test {

    private static SqsEndpoint endpoint;

    @BeforeAll
    static void start() {
        endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester"),
                        new AccessKey("AKIDREADER", "reader-secret", "reader")))
                .authorizer((principal, action, queue) -> !principal.equals("reader") || action.startsWith("List")
                        || action.startsWith("Get") || action.equals("ReceiveMessage"))
                .start();
    }

    @AfterAll
    static void stop() {
        endpoint.close();
    }

    /** Signs a JSON-protocol call as the SDK would, at the given time. */
    private static Map<String, String> signedHeaders(String action, String body, String secret, Instant at) {
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(endpoint.url())
                .putHeader("Content-Type", "application/x-amz-json-1.0")
                .putHeader("X-Amz-Target", "AmazonSQS." + action).build();
        SignedRequest signed = AwsV4HttpSigner.create().sign(r -> r
                .identity(AwsCredentialsIdentity.create(TestEndpoints.KEY_ID, secret))
                .request(request)
                .payload(ContentStreamProvider.fromUtf8String(body))
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                .putProperty(AwsV4HttpSigner.REGION_NAME, "eu-west-1")
                .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(at, ZoneOffset.UTC)));
        Map<String, String> headers = new HashMap<>();
        signed.request().headers().forEach((k, v) -> {
            if (!k.equalsIgnoreCase("host") && !k.equalsIgnoreCase("content-length")) {
                headers.put(k, v.get(0));
            }
        });
        return headers;
    }

    private static RawHttp.Reply send(String action, String body, Map<String, String> headers) {
        return RawHttp.post(endpoint.url(), body, headers);
    }

    @Test
    @DisplayName("a request signed with a known key's secret is served, in any region")
    void valid() {
        String body = "{\"QueueName\":\"signed\"}";
        RawHttp.Reply r = send("CreateQueue", body, signedHeaders("CreateQueue", body, TestEndpoints.SECRET,
                Instant.now()));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("/000000000000/signed");
    }

    @Test
    @DisplayName("the SDK with a wrong secret gets SignatureDoesNotMatch (403)")
    void wrongSecret() {
        try (SqsClient client = TestEndpoints.client(endpoint.url(), TestEndpoints.KEY_ID, "not-the-secret")) {
            assertThatThrownBy(client::listQueues).isInstanceOfSatisfying(SqsException.class, e -> {
                assertThat(e.statusCode()).isEqualTo(403);
                assertThat(e.awsErrorDetails().errorCode()).isEqualTo("SignatureDoesNotMatch");
            });
        }
    }

    @Test
    @DisplayName("the SDK with an unknown key gets InvalidClientTokenId (403)")
    void unknownKey() {
        try (SqsClient client = TestEndpoints.client(endpoint.url(), "AKIDUNKNOWN", "whatever")) {
            assertThatThrownBy(client::listQueues).isInstanceOfSatisfying(SqsException.class, e -> {
                assertThat(e.statusCode()).isEqualTo(403);
                assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidClientTokenId");
            });
        }
    }

    @Test
    @DisplayName("a request signed more than 15 minutes ago (or ahead) is refused as expired")
    void expired() {
        String body = "{}";
        RawHttp.Reply late = send("ListQueues", body, signedHeaders("ListQueues", body, TestEndpoints.SECRET,
                Instant.now().minus(Duration.ofMinutes(16))));
        assertThat(late.status()).isEqualTo(403);
        assertThat(late.header("x-amzn-query-error")).startsWith("SignatureDoesNotMatch;");
        assertThat(late.body()).contains("Signature expired");
        RawHttp.Reply early = send("ListQueues", body, signedHeaders("ListQueues", body, TestEndpoints.SECRET,
                Instant.now().plus(Duration.ofMinutes(16))));
        assertThat(early.status()).isEqualTo(403);
        assertThat(early.body()).contains("not yet current");
        RawHttp.Reply recent = send("ListQueues", body, signedHeaders("ListQueues", body, TestEndpoints.SECRET,
                Instant.now().minus(Duration.ofMinutes(14))));
        assertThat(recent.status()).as("within 15 minutes").isEqualTo(200);
    }

    @Test
    @DisplayName("a signed request altered on the way (body, signed header) no longer matches")
    void altered() {
        String body = "{\"QueueName\":\"harmless\"}";
        Map<String, String> headers = signedHeaders("CreateQueue", body, TestEndpoints.SECRET, Instant.now());
        RawHttp.Reply otherBody = send("CreateQueue", "{\"QueueName\":\"evil\"}", headers);
        assertThat(otherBody.status()).isEqualTo(403);
        assertThat(otherBody.header("x-amzn-query-error")).startsWith("SignatureDoesNotMatch;");

        Map<String, String> otherAction = new HashMap<>(headers);
        otherAction.put("X-Amz-Target", "AmazonSQS.DeleteQueue");
        assertThat(send("DeleteQueue", body, otherAction).status()).isEqualTo(403);

        assertThat(send("CreateQueue", body, headers).status()).as("the unaltered request still passes")
                .isEqualTo(200);
    }

    @Test
    @DisplayName("a request without a signature gets MissingAuthenticationToken")
    void unsigned() {
        RawHttp.Reply r = RawHttp.json(endpoint.url(), "ListQueues", "{}");
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.header("x-amzn-query-error")).startsWith("MissingAuthenticationToken;");
        RawHttp.Reply q = RawHttp.query(endpoint.url(), Map.of("Action", "ListQueues"));
        assertThat(q.status()).isEqualTo(403);
        assertThat(q.one("Code")).isEqualTo("MissingAuthenticationToken");
    }

    @Test
    @DisplayName("a verified principal the authorizer refuses gets AccessDenied and changes nothing")
    void authorizer() {
        try (SqsClient writer = TestEndpoints.client(endpoint.url());
             SqsClient reader = TestEndpoints.client(endpoint.url(), "AKIDREADER", "reader-secret")) {
            String url = writer.createQueue(r -> r.queueName("guarded")).queueUrl();
            assertThat(reader.listQueues().queueUrls()).contains(url);
            assertThatThrownBy(() -> reader.sendMessage(r -> r.queueUrl(url).messageBody("x")))
                    .isInstanceOfSatisfying(SqsException.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(403);
                        assertThat(e.awsErrorDetails().errorCode()).isEqualTo("AccessDenied");
                    });
            assertThat(reader.receiveMessage(r -> r.queueUrl(url)).messages()).isEmpty();
        }
    }

    @Test
    @DisplayName("the endpoint URL is where the signature's Host points")
    void hostIsSigned() {
        URI other = URI.create("http://localhost:" + endpoint.address().getPort());
        String body = "{}";
        Map<String, String> headers = signedHeaders("ListQueues", body, TestEndpoints.SECRET, Instant.now());
        // signed for 127.0.0.1:port, sent with Host localhost:port
        RawHttp.Reply r = RawHttp.post(other, body, headers);
        assertThat(r.status()).isEqualTo(403);
    }
}
