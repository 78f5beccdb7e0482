package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.internal.Tls;
import dev.mailbox.testkit.tls.TestCertificates;
import io.micrometer.core.instrument.Counter;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
class MetricsEndpointTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpResponse<String> send(MetricsEndpoint e, String method, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + e.address().getPort() + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @DisplayName("GET and HEAD /metrics serve the registry; other paths are 404, other methods 405")
    void pathsAndMethods() throws Exception {
        try (MetricsEndpoint e = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0))) {
            Counter.builder("cli.test.hits").register(e.registry()).increment(3);
            HttpResponse<String> get = send(e, "GET", "/metrics");
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.body()).contains("cli_test_hits_total 3.0");
            assertThat(get.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                    .startsWith("text/plain; version=0.0.4"));
            HttpResponse<String> head = send(e, "HEAD", "/metrics");
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            assertThat(send(e, "GET", "/metricsXYZ").statusCode()).isEqualTo(404);
            assertThat(send(e, "GET", "/").statusCode()).isEqualTo(404);
            HttpResponse<String> post = send(e, "POST", "/metrics");
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
        }
    }

    @Test
    @DisplayName("with the server's TLS files the endpoint serves HTTPS: a client trusting the CA scrapes it, plain HTTP gets nothing")
    void https(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued cert = ca.issue("metrics");
        TlsFiles server = TlsFiles.builder().keyPair(cert.certificate(), cert.key()).trusted(ca.caCertificate()).build();
        try (MetricsEndpoint e = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), Tls.sslContext(server))) {
            Counter.builder("cli.test.secure").register(e.registry()).increment();
            HttpClient trusting = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
                    .sslContext(trusting(TlsFiles.builder().trusted(ca.caCertificate()).build())).build();
            HttpResponse<String> get = trusting.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                    + e.address().getPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.body()).contains("cli_test_secure_total 1.0");
            assertThatThrownBy(() -> send(e, "GET", "/metrics")).as("plain HTTP to the HTTPS port")
                    .isInstanceOf(java.io.IOException.class);
        }
    }

    @Test
    @DisplayName("coordinator start with TLS files announces its metrics as https://, the scheme they are served with")
    void coordinatorAnnouncesHttps(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued cert = ca.issue("s1");
        int metrics;
        int plane;
        int raft;
        try (java.net.ServerSocket a = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             java.net.ServerSocket b = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
             java.net.ServerSocket c = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            metrics = a.getLocalPort();
            plane = b.getLocalPort();
            raft = c.getLocalPort();
        }
        Child child = Child.start(dir.resolve("out.log"), "coordinator", "start", "--id", "s1", "--warm-up", "false",
                "--raft", "127.0.0.1:" + raft, "--control-plane", "127.0.0.1:" + plane, "--metrics",
                "127.0.0.1:" + metrics, "--data-dir", dir.resolve("data").toString(), "--tls-cert",
                cert.certificate().toString(), "--tls-key", cert.key().toString(), "--tls-ca",
                ca.caCertificate().toString());
        try {
            child.awaitOutput("coordinator s1 of cluster", Duration.ofSeconds(60));
            assertThat(child.output()).contains("metrics https://127.0.0.1:" + metrics + "/metrics")
                    .doesNotContain("http://127.0.0.1:" + metrics);
        } finally {
            child.kill();
        }
    }

    @Test
    @DisplayName("a metrics address that cannot be bound is refused with the reason, not only the address")
    void portInUse() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", taken.getLocalPort())))
                    .hasMessageContaining(String.valueOf(taken.getLocalPort()))
                    .hasMessageContaining("in use");
        }
    }

    private static javax.net.ssl.SSLContext trusting(TlsFiles ca) throws Exception {
        javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] {Tls.trustManager(ca)}, null);
        return context;
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "tls={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    @DisplayName("300 connections sending a header line every second, from 30 addresses, hold up no scrape: each is"
            + " answered within 2 s, over HTTPS as over HTTP (the HTTPS listener had no read timeout at all)")
    void slowloris(boolean secure, @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        javax.net.ssl.SSLContext server = null;
        javax.net.ssl.SSLContext client = null;
        if (secure) {
            TestCertificates ca = TestCertificates.create(dir, "ca");
            TestCertificates.Issued cert = ca.issue("metrics");
            server = Tls.sslContext(TlsFiles.builder().keyPair(cert.certificate(), cert.key())
                    .trusted(ca.caCertificate()).build());
            client = trusting(TlsFiles.builder().trusted(ca.caCertificate()).build());
        }
        try (MetricsEndpoint e = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), server)) {
            Counter.builder("cli.test.slow").register(e.registry()).increment();
            List<java.net.InetAddress> from = java.util.stream.IntStream.range(0, 30)
                    .mapToObj(i -> dev.mailbox.testkit.http.HostileHttp.loopback(400 + i)).toList();
            HttpClient scraper = secure ? HttpClient.newBuilder().sslContext(client).build() : HTTP;
            URI url = URI.create(e.url());
            try (var slow = dev.mailbox.testkit.http.HostileHttp.SlowClients.open(e.address(), client, 300, from,
                    Duration.ofSeconds(1))) {
                assertThat(slow.open()).isEqualTo(300);
                for (int i = 0; i < 10; i++) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = scraper.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2))
                            .build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).contains("cli_test_slow_total 1.0");
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
                    Thread.sleep(200); // spread the scrapes over the attack
                }
            }
        }
    }

    @Test
    @DisplayName("with --require-security, plaintext metrics beyond loopback refuse to start, naming the fix; with TLS,"
            + " or on loopback, they start")
    void requireSecurity(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        InetSocketAddress anywhere = new InetSocketAddress("0.0.0.0", 0);
        assertThatThrownBy(() -> MetricsEndpoint.start(anywhere, null, true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--require-security")
                .hasMessageContaining("plaintext").hasMessageContaining("--tls-cert");
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued cert = ca.issue("metrics");
        try (MetricsEndpoint secure = MetricsEndpoint.start(anywhere, Tls.sslContext(TlsFiles.builder()
                .keyPair(cert.certificate(), cert.key()).build()), true);
             MetricsEndpoint loopback = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), null, true)) {
            assertThat(secure.url()).startsWith("https://");
            assertThat(loopback.url()).startsWith("http://127.0.0.1:");
        }
    }

    @Test
    @DisplayName("scrapes at once share renderings of the registry, one at a time: an unauthenticated client could"
            + " otherwise keep every worker formatting every meter (30 scrapes rendered it 30 times, 8 at once)")
    void scrapesShareRenderings() throws Exception {
        try (MetricsEndpoint e = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0))) {
            java.util.concurrent.atomic.AtomicInteger renderings = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger rendering = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger mostAtOnce = new java.util.concurrent.atomic.AtomicInteger();
            // a gauge that takes a while to read, as one asking a backend does
            io.micrometer.core.instrument.Gauge.builder("cli.test.slow.gauge", renderings, r -> {
                int now = rendering.incrementAndGet();
                mostAtOnce.accumulateAndGet(now, Math::max);
                try {
                    Thread.sleep(20); // the gauge's own cost
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                rendering.decrementAndGet();
                return r.incrementAndGet();
            }).register(e.registry());
            List<CompletableFuture<HttpResponse<String>>> scrapes = new ArrayList<>();
            for (int i = 0; i < 30; i++) { // within the 32 connections one address may open
                scrapes.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + e.address().getPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> f : scrapes) {
                HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).contains("cli_test_slow_gauge");
            }
            assertThat(mostAtOnce.get()).as("renderings at once").isEqualTo(1);
            assertThat(renderings.get()).as("renderings for 30 scrapes").isLessThan(30);
            // a scrape after a change sees it: answers are never older than their request
            Counter.builder("cli.test.after").register(e.registry()).increment(7);
            assertThat(send(e, "GET", "/metrics").body()).contains("cli_test_after_total 7.0");
        }
    }

    @Test
    @DisplayName("clients that never finish their request hold up no other scrape, and are dropped after the read timeout")
    void stalledClients() throws Exception {
        try (MetricsEndpoint e = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0))) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) { // more than the endpoint's worker threads
                    Socket s = new Socket("127.0.0.1", e.address().getPort());
                    OutputStream out = s.getOutputStream();
                    out.write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.ISO_8859_1)); // no end
                    out.flush();
                    stalled.add(s);
                }
                long start = System.nanoTime();
                List<CompletableFuture<HttpResponse<String>>> scrapes = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    scrapes.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + e.address().getPort() + "/metrics")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.ofString()));
                }
                for (CompletableFuture<HttpResponse<String>> f : scrapes) {
                    assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                }
                // at once, beside the stalled ones: they hold no thread (this allowed 15 s, which would have passed
                // an endpoint whose stalled clients held every worker until the read timeout dropped them)
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
                Socket first = stalled.get(0);
                first.setSoTimeout(15_000);
                InputStream in = first.getInputStream();
                assertThat(in.read()).as("a stalled connection is closed by the endpoint").isEqualTo(-1);
            } finally {
                for (Socket s : stalled) {
                    s.close();
                }
            }
        }
    }
}
