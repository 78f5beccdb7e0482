package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.http.BodyBudget;
import dev.mailbox.testkit.ForwardingMailbox;
import dev.mailbox.testkit.http.HostileHttp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The endpoint against clients that cost it more than their requests: a long poll whose client has gone, a
 * signature whose signed headers make it hash megabytes, bodies announced with nothing but a known access key id
 * and never sent, and receives of large messages whose answers are never read. Each failed against the endpoint
 * as first moved onto the HTTP listener.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("The SQS endpoint against greedy clients")
class EndpointGreedyClientsTest {

    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    /** A request signed as the SDK signs, written by hand. */
    private static String signedRequest(SqsEndpoint endpoint, String form) {
        byte[] body = form.getBytes(StandardCharsets.UTF_8);
        Map<String, String> signed = TestEndpoints.signed(endpoint.url(),
                Map.of("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"), body);
        StringBuilder head = new StringBuilder("POST / HTTP/1.1\r\nHost: " + endpoint.url().getAuthority() + "\r\n"
                + "Content-Length: " + body.length + "\r\n");
        signed.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        return head.append("\r\n").append(form).toString();
    }

    /** A query-protocol GET, signed as the SDK signs: a request without a body, which takes no memory budget. */
    private static String signedGet(SqsEndpoint endpoint, Map<String, String> query) {
        var request = software.amazon.awssdk.http.SdkHttpRequest.builder()
                .method(software.amazon.awssdk.http.SdkHttpMethod.GET).uri(endpoint.url());
        query.forEach(request::putRawQueryParameter);
        var signed = software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.create().sign(r -> r
                .identity(software.amazon.awssdk.identity.spi.AwsCredentialsIdentity.create(TestEndpoints.KEY_ID,
                        TestEndpoints.SECRET))
                .request(request.build())
                .payload(software.amazon.awssdk.http.ContentStreamProvider.fromByteArray(new byte[0]))
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.REGION_NAME, "us-east-1"));
        StringBuilder head = new StringBuilder("GET /?" + signed.request().encodedQueryParameters().orElseThrow()
                + " HTTP/1.1\r\n");
        signed.request().headers().forEach((k, v) -> head.append(k).append(": ").append(v.get(0)).append("\r\n"));
        return head.append("\r\n").toString();
    }

    /**
     * The headers of a request that only someone knowing the access key id (not its secret) can make: they pass
     * every check the headers allow, and the signature is wrong.
     */
    private static String keyIdOnlyHead(SqsEndpoint endpoint, String signedHeaders, String extraHeaders) {
        String amzDate = AMZ_DATE.format(Instant.now());
        return "POST / HTTP/1.1\r\nHost: " + endpoint.url().getAuthority() + "\r\nX-Amz-Date: " + amzDate + "\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n" + extraHeaders
                + "Authorization: AWS4-HMAC-SHA256 Credential=" + TestEndpoints.KEY_ID + "/" + amzDate.substring(0, 8)
                + "/us-east-1/sqs/aws4_request, SignedHeaders=" + signedHeaders + ", Signature=" + "0".repeat(64)
                + "\r\n";
    }

    private static String answerWithin(Socket s, Duration timeout) throws IOException {
        try {
            return HostileHttp.readAnswer(s, timeout);
        } catch (SocketTimeoutException none) {
            return "";
        }
    }

    private static void awaitAvailable(BodyBudget budget, long available) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (budget.available() != available && System.nanoTime() - deadline < 0) {
            Thread.sleep(10); // nothing to wait on: the listener takes from the budget on its own threads
        }
        assertThat(budget.available()).isEqualTo(available);
    }

    /** Reads an answer's status line and headers only, leaving its body unread. */
    private static String head(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        while (!seen.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            seen.write(b);
        }
        return seen.toString(StandardCharsets.ISO_8859_1);
    }

    /** A directory whose mailboxes say when a waiting receive starts and when it ends. */
    private static final class WatchedDirectory implements QueueDirectory {
        final QueueDirectory delegate = TestEndpoints.inMemoryDirectory();
        final CountDownLatch waiting = new CountDownLatch(1);
        final CountDownLatch ended = new CountDownLatch(1);

        @Override
        public QueueRecord createIfAbsent(QueueRecord queue) {
            return delegate.createIfAbsent(queue);
        }

        @Override
        public Optional<QueueRecord> get(String name) {
            return delegate.get(name);
        }

        @Override
        public List<String> list(String prefix, String after, int limit) {
            return delegate.list(prefix, after, limit);
        }

        @Override
        public Optional<QueueRecord> update(String name, QueueUpdate change) {
            return delegate.update(name, change);
        }

        @Override
        public boolean delete(String name) {
            return delegate.delete(name);
        }

        @Override
        public Mailbox<byte[]> mailbox(String name) {
            return new Watched(delegate.mailbox(name));
        }

        private final class Watched extends ForwardingMailbox<byte[]> {
            Watched(Mailbox<byte[]> delegate) {
                super(delegate);
            }

            @Override
            public List<Message<byte[]>> receive(ReceiveOptions options) {
                if (options.waitTime().isZero()) {
                    return super.receive(options);
                }
                waiting.countDown();
                try {
                    return super.receive(options);
                } finally {
                    ended.countDown();
                }
            }

            @Override
            public Mailbox<byte[]> fenced(long epoch) {
                return new Watched(delegate.fenced(epoch));
            }
        }
    }

    @Test
    @DisplayName("a long poll whose client goes away is cancelled: it takes no message, and the next receive gets"
            + " the message at once (the poll went on waiting for its 20 s, took the message for nobody and hid it"
            + " for the visibility timeout)")
    void longPollOfAClientThatLeft() throws Exception {
        WatchedDirectory directory = new WatchedDirectory();
        try (SqsEndpoint endpoint = SqsEndpoint.builder().queues(directory)
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester")))
                .start();
             SqsClient client = TestEndpoints.client(endpoint.url())) {
            String url = client.createQueue(r -> r.queueName("left-behind")).queueUrl();
            try (Socket poll = HostileHttp.connect(endpoint.address(), InetAddress.getLoopbackAddress(), null)) {
                HostileHttp.write(poll, signedRequest(endpoint, "Action=ReceiveMessage&QueueUrl=" + url
                        + "&WaitTimeSeconds=20&VisibilityTimeout=60"));
                assertThat(directory.waiting.await(10, TimeUnit.SECONDS)).as("the poll waits").isTrue();
            }
            assertThat(directory.ended.await(10, TimeUnit.SECONDS)).as("the poll of the client that left was cut"
                    + " short").isTrue();
            client.sendMessage(r -> r.queueUrl(url).messageBody("for a live client"));
            var got = client.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(2)).messages();
            assertThat(got).extracting(m -> m.body()).containsExactly("for a live client");
        }
    }

    @Test
    @DisplayName("an Authorization header naming one signed header thousands of times is refused from the headers"
            + " (knowing only a key id, a 15 KiB request made the endpoint build and hash a canonical request of"
            + " megabytes, after waiting for its body)")
    void repeatedSignedHeaders() throws Exception {
        try (SqsEndpoint endpoint = TestEndpoints.signedInMemory();
             Socket s = HostileHttp.connect(endpoint.address(), InetAddress.getLoopbackAddress(), null)) {
            String head = keyIdOnlyHead(endpoint, "host" + ";x-padding".repeat(900) + ";x-amz-date",
                    "X-Padding: " + "p".repeat(5000) + "\r\n");
            // the body is announced and never sent: a refusal from the headers needs none of it
            HostileHttp.write(s, head + "Content-Length: 100\r\n\r\n");
            String answer = answerWithin(s, Duration.ofSeconds(5));
            assertThat(HostileHttp.status(answer)).as("answered from the headers: " + answer).isEqualTo(403);
            assertThat(answer).contains("SignedHeaders");
        }
    }

    @Test
    @DisplayName("bodies announced under a known key id and never sent cannot take the memory budget from signed"
            + " calls: one address holds a share of it (four 4 MiB announcements took all 16 MiB, and every signed"
            + " call got 503 until the body deadline)")
    void announcedBodiesUnderAKeyId() throws Exception {
        BodyBudget budget = BodyBudget.of(16 << 20);
        try (SqsEndpoint endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester")))
                .bodyBudget(budget).start();
             SqsClient client = TestEndpoints.client(endpoint.url())) {
            String url = client.createQueue(r -> r.queueName("budget-held")).queueUrl();
            InetAddress attacker = HostileHttp.loopback(700);
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    Socket s = HostileHttp.connect(endpoint.address(), attacker, null);
                    held.add(s);
                    HostileHttp.write(s, keyIdOnlyHead(endpoint, "host;x-amz-date", "") + "Content-Length: "
                            + (4 << 20) + "\r\n\r\n");
                    if (i == 0) {
                        awaitAvailable(budget, 12 << 20);
                    }
                }
                // each announcement is either holding budget or refused: wait for the three that are refused
                List<Integer> statuses = new ArrayList<>();
                for (Socket s : held.subList(1, 4)) {
                    statuses.add(HostileHttp.status(answerWithin(s, Duration.ofSeconds(5))));
                }
                long start = System.nanoTime();
                client.sendMessage(r -> r.queueUrl(url).messageBody("signed"));
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
                assertThat(statuses).as("announcements past the address's share").containsExactly(503, 503, 503);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("receives whose large answers are not read stop taking messages once those answers fill the memory"
            + " budget: of six, one is answered with the messages and five with 503 (each of the six was given a"
            + " 10 MiB answer, held for a client that read nothing)")
    void unreadReceiveAnswers() throws Exception {
        try (SqsEndpoint endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester")))
                .bodyBudget(BodyBudget.of(8 << 20)).start();
             SqsClient client = TestEndpoints.client(endpoint.url())) {
            String url = client.createQueue(r -> r.queueName("large-answers")).queueUrl();
            String body = "<".repeat(256 * 1024); // escaped as &lt; in XML: each message answers as 1 MiB
            for (int i = 0; i < 10; i++) {
                client.sendMessage(r -> r.queueUrl(url).messageBody(body));
            }
            // visibility 0: every receive gets the same ten messages again. As GETs, without a body: the listener
            // takes no budget for them, so only the endpoint can see that their answers would not fit
            String receive = signedGet(endpoint, Map.of("Action", "ReceiveMessage", "QueueUrl", url,
                    "MaxNumberOfMessages", "10", "VisibilityTimeout", "0"));
            List<Socket> readers = new ArrayList<>();
            List<Integer> statuses = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    Socket s = new Socket();
                    s.setReceiveBufferSize(4096);
                    s.bind(new InetSocketAddress(HostileHttp.loopback(710), 0));
                    s.connect(endpoint.address(), 5_000);
                    s.setSoTimeout(10_000);
                    readers.add(s);
                    HostileHttp.write(s, receive);
                    statuses.add(HostileHttp.status(head(s)));
                }
            } finally {
                for (Socket s : readers) {
                    s.close();
                }
            }
            assertThat(statuses).as("answered with messages, then refused").containsExactly(200, 503, 503, 503, 503,
                    503);
        }
    }
}
