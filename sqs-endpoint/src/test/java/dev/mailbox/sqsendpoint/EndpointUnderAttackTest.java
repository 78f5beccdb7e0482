package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.http.HostileHttp;
import dev.mailbox.testkit.tls.TestCertificates;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The endpoint under the attacks of issue 30, each while signed calls go on: slow clients trickling headers
 * (plaintext and TLS), thousands of long polls, and unauthenticated clients sending the largest bodies at an
 * endpoint with a small heap. Each failed against the endpoint on the JDK's HTTP server: the slow clients and the
 * long polls took every request thread (signed calls timed out), and the bodies, read before authentication, ran
 * the 256 MiB endpoint out of memory.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Isolated("its bounds are on latency under load: other test classes running beside it would be load of their own")
@DisplayName("The SQS endpoint under attack")
class EndpointUnderAttackTest {

    @TempDir
    Path dir;

    /** One signed send and receive; fails unless both are answered within 2 s. */
    private static void signedCallsAnswered(SqsClient client, String url, int rounds) throws InterruptedException {
        for (int i = 0; i < rounds; i++) {
            long start = System.nanoTime();
            String body = "m" + i;
            client.sendMessage(r -> r.queueUrl(url).messageBody(body));
            var got = client.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages();
            assertThat(got).extracting(m -> m.body()).containsExactly(body);
            client.deleteMessage(r -> r.queueUrl(url).receiptHandle(got.get(0).receiptHandle()));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("round " + i)
                    .isLessThan(Duration.ofSeconds(2));
            Thread.sleep(200); // spread the rounds over the attack
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("300 connections sending a header line every second take nothing from signed calls: each is"
            + " answered within 2 s (the JDK server gave each slow client a thread, and ran out)")
    void slowloris(boolean secure) throws Exception {
        Tls tls = secure ? tls(dir) : null;
        SqsEndpoint.Builder b = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET, "tester")));
        if (tls != null) {
            b.tls(tls.server);
        }
        try (SqsEndpoint endpoint = b.start(); SqsClient client = client(endpoint.url(), tls)) {
            String url = client.createQueue(r -> r.queueName("under-slowloris")).queueUrl();
            List<InetAddress> from = IntStream.range(0, 10).mapToObj(i -> HostileHttp.loopback(200 + i)).toList();
            try (HostileHttp.SlowClients slow = HostileHttp.SlowClients.open(endpoint.address(),
                    tls == null ? null : tls.client, 300, from, Duration.ofSeconds(1))) {
                assertThat(slow.open()).isEqualTo(300);
                signedCallsAnswered(client, url, 10);
            }
        }
    }

    @Test
    @DisplayName("2,000 signed long polls at once: the endpoint parks a bounded number and answers the rest at once"
            + " (empty), and a send is answered within 1 s (it waited behind the polls, and timed out)")
    void longPolls() throws Exception {
        try (SqsEndpoint endpoint = TestEndpoints.signedInMemory(); SqsClient client = client(endpoint.url(), null)) {
            String url = client.createQueue(r -> r.queueName("under-long-polls")).queueUrl();
            byte[] poll = ("Action=ReceiveMessage&QueueUrl=" + url + "&WaitTimeSeconds=20")
                    .getBytes(StandardCharsets.UTF_8);
            Map<String, String> signed = TestEndpoints.signed(endpoint.url(),
                    Map.of("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"), poll);
            StringBuilder head = new StringBuilder("POST / HTTP/1.1\r\nHost: " + endpoint.url().getAuthority() + "\r\n"
                    + "Content-Length: " + poll.length + "\r\n");
            signed.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            String request = head.append("\r\n").append(new String(poll, StandardCharsets.UTF_8)).toString();
            List<Socket> polls = new ArrayList<>();
            try {
                for (int i = 0; i < 2000; i++) {
                    Socket s = HostileHttp.connect(endpoint.address(), InetAddress.getLoopbackAddress(), null);
                    polls.add(s);
                    HostileHttp.write(s, request);
                }
                long start = System.nanoTime();
                client.sendMessage(r -> r.queueUrl(url).messageBody("through"));
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the send")
                        .isLessThan(Duration.ofSeconds(1));
                // the polls past the bound were answered at once; the parked ones are still waiting. Each socket is
                // looked at briefly, twice, so that parked polls cost the test little time
                List<Socket> unanswered = new ArrayList<>(polls);
                int answered = 0;
                for (int pass = 0; pass < 2; pass++) {
                    List<Socket> still = new ArrayList<>();
                    for (Socket s : unanswered) {
                        try {
                            String answer = HostileHttp.readAnswer(s, Duration.ofMillis(5));
                            assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(200);
                            answered++;
                        } catch (java.net.SocketTimeoutException parked) {
                            still.add(s);
                        }
                    }
                    unanswered = still;
                }
                int waiting = unanswered.size();
                assertThat(waiting).as("polls still parked").isLessThanOrEqualTo(SqsEndpoint.DEFAULT_MAX_WAITING_RECEIVES);
                assertThat(answered).isGreaterThanOrEqualTo(2000 - SqsEndpoint.DEFAULT_MAX_WAITING_RECEIVES);
            } finally {
                for (Socket s : polls) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("256 connections each sending an unsigned 4 MiB body at an endpoint with a 256 MiB heap are refused"
            + " from their headers, and signed calls are answered meanwhile (the bodies were read first, and the"
            + " endpoint ran out of memory)")
    void unauthenticatedBodies() throws Exception {
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-cp", System.getProperty("java.class.path"),
                EndpointChild.class.getName()).redirectErrorStream(true).start();
        ExecutorService attackers = Executors.newFixedThreadPool(256);
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            int port = -1;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("PORT ")) {
                    port = Integer.parseInt(line.substring(5).trim());
                    break;
                }
            }
            assertThat(port).as("the child printed its port").isPositive();
            StringBuffer printed = new StringBuffer();
            Thread drain = new Thread(() -> out.lines().forEach(l -> printed.append(l).append('\n')), "child-output");
            drain.setDaemon(true);
            drain.start();
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
            URI url = URI.create("http://127.0.0.1:" + port);
            byte[] chunk = new byte[64 * 1024];
            CountDownLatch sent = new CountDownLatch(256);
            CountDownLatch checked = new CountDownLatch(1);
            List<Future<String>> attacks = new ArrayList<>();
            for (int i = 0; i < 256; i++) {
                InetAddress from = HostileHttp.loopback(300 + i % 8);
                attacks.add(attackers.submit(() -> {
                    boolean[] counted = {false};
                    try (Socket s = HostileHttp.connect(address, from, null)) {
                        OutputStream o = s.getOutputStream();
                        o.write(("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                + "Content-Length: " + (4 << 20) + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                        // all of the body but its last byte, then hold it there while the signed calls run: a server
                        // that reads bodies before authenticating holds 256 x 4 MiB
                        for (int n = 0; n < 4 << 20; n += chunk.length) {
                            o.write(chunk, 0, n + chunk.length < 4 << 20 ? chunk.length : chunk.length - 1);
                        }
                        o.flush();
                        sent.countDown();
                        counted[0] = true;
                        checked.await(2, TimeUnit.MINUTES);
                        o.write('x');
                        o.flush();
                        return HostileHttp.readAnswer(s, Duration.ofSeconds(60));
                    } catch (IOException refused) {
                        return "refused: " + refused; // closed while still sending: refused from the headers
                    } finally {
                        if (!counted[0]) {
                            sent.countDown();
                        }
                    }
                }));
            }
            assertThat(sent.await(2, TimeUnit.MINUTES)).as("every attacker sent its body or was cut off").isTrue();
            try (SqsClient client = client(url, null)) {
                String queue = client.createQueue(r -> r.queueName("under-big-bodies")).queueUrl();
                signedCallsAnswered(client, queue, 10);
            } catch (RuntimeException e) {
                throw new AssertionError("signed calls failed; the endpoint " + (child.isAlive() ? "runs" : "exited")
                        + " and printed:\n" + printed, e);
            } finally {
                checked.countDown();
            }
            for (Future<String> a : attacks) {
                String answer = a.get(2, TimeUnit.MINUTES);
                assertThat(answer.startsWith("refused") || HostileHttp.status(answer) == 403).as(answer).isTrue();
            }
            assertThat(child.isAlive()).as("the endpoint is still running; it printed:\n" + printed).isTrue();
        } finally {
            attackers.shutdownNow();
            child.getOutputStream().close();
            if (!child.waitFor(10, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor();
            }
        }
    }

    // ---- clients and certificates

    private record Tls(SSLContext server, SSLContext client, TrustManagerFactory trust) {
    }

    private static SqsClient client(URI url, Tls tls) {
        UrlConnectionHttpClient.Builder http = UrlConnectionHttpClient.builder();
        if (tls != null) {
            http.tlsTrustManagersProvider(tls.trust::getTrustManagers);
        }
        return SqsClient.builder().endpointOverride(url).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(TestEndpoints.KEY_ID,
                        TestEndpoints.SECRET)))
                .httpClientBuilder(http).build();
    }

    private static Tls tls(Path dir) throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued issued = ca.issue("sqs");
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        Certificate[] chain = x509.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(issued.certificate())))
                .toArray(new Certificate[0]);
        String pem = Files.readString(issued.key(), StandardCharsets.US_ASCII);
        var key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(
                Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""))));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("sqs", key, new char[0], chain);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("ca", x509.generateCertificate(new ByteArrayInputStream(
                Files.readAllBytes(ca.caCertificate()))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
        return new Tls(server, client, tmf);
    }
}
