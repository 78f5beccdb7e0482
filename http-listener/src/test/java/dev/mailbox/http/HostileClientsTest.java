package dev.mailbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.http.HostileHttp;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The listener against clients that try to use it up: too many connections from one address or in all, headers
 * trickled a line at a time, a TLS handshake trickled a byte at a time; plaintext and TLS alike.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@DisplayName("HttpListener holds against hostile clients")
class HostileClientsTest {

    private static final HttpHandler OK = (request, responder) -> responder.respond(HttpResponse.text(200, "ok"));

    @TempDir
    static Path dir;

    private static @Nullable TestTls tls;

    private static TestTls tls() throws Exception {
        if (tls == null) {
            tls = TestTls.create(dir);
        }
        return tls;
    }

    private static HttpListener start(boolean secure, HttpLimits limits) throws Exception {
        return HttpListener.builder("test").fallback(OK).limits(limits).tls(secure ? tls().server() : null).start();
    }

    /** One request on a new connection from {@code from}; its status, or 0 if refused. */
    private static int call(HttpListener l, InetAddress from, boolean secure) throws Exception {
        try (Socket s = HostileHttp.connect(l.address(), from, secure ? tls().client() : null)) {
            HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            return HostileHttp.status(HostileHttp.readAnswer(s, Duration.ofSeconds(5)));
        } catch (IOException refused) {
            return 0;
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("one address gets at most its share of connections: one more is refused at once (plaintext: a 503"
            + " saying why), others are served, and a closed connection frees its place")
    void perAddressCap(boolean secure) throws Exception {
        InetAddress greedy = HostileHttp.loopback(10);
        try (HttpListener l = start(secure, HttpLimits.defaults().withMaxConnectionsPerAddress(4))) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    held.add(HostileHttp.connect(l.address(), greedy, secure ? tls().client() : null));
                }
                if (secure) {
                    assertThat(call(l, greedy, true)).as("a fifth TLS connection: closed before the handshake")
                            .isZero();
                } else {
                    try (Socket fifth = HostileHttp.connect(l.address(), greedy, null)) {
                        String answer = HostileHttp.readAnswer(fifth, Duration.ofSeconds(5));
                        assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                        assertThat(answer).contains("Connection: close").contains("your address has 4 connections");
                    }
                }
                assertThat(call(l, HostileHttp.loopback(11), secure)).as("another address").isEqualTo(200);
                held.remove(0).close();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int status = 0;
                while (status != 200 && System.nanoTime() - deadline < 0) {
                    status = call(l, greedy, secure); // the server notices the close asynchronously
                }
                assertThat(status).as("a place freed by a close").isEqualTo(200);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("past the cap on all connections, one more is refused at once")
    void totalCap() throws Exception {
        try (HttpListener l = start(false, HttpLimits.defaults().withMaxConnections(6))) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    held.add(HostileHttp.connect(l.address(), HostileHttp.loopback(20 + i), null));
                }
                try (Socket seventh = HostileHttp.connect(l.address(), HostileHttp.loopback(30), null)) {
                    String answer = HostileHttp.readAnswer(seventh, Duration.ofSeconds(5));
                    assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                    assertThat(answer).contains("the server has 6 connections open");
                }
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("headers trickled a line every 100 ms (never idle) are cut off at the header deadline")
    void headerDeadline(boolean secure) throws Exception {
        HttpLimits limits = HttpLimits.defaults().withHeaderTimeout(Duration.ofSeconds(1))
                .withIdleTimeout(Duration.ofSeconds(30));
        try (HttpListener l = start(secure, limits);
             Socket s = HostileHttp.connect(l.address(), HostileHttp.loopback(40), secure ? tls().client() : null)) {
            long start = System.nanoTime();
            HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\n");
            boolean cut = false;
            for (int i = 0; i < 100 && !cut; i++) {
                try {
                    Thread.sleep(100); // the trickle's pace
                    HostileHttp.write(s, "X-Slow-" + i + ": y\r\n");
                } catch (IOException closed) {
                    cut = true;
                }
            }
            assertThat(cut).as("the connection was closed").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(call(l, HostileHttp.loopback(41), secure)).isEqualTo(200);
        }
    }

    @Test
    @DisplayName("a TLS handshake trickled a byte every 100 ms is cut off at the header deadline too")
    void trickledHandshake() throws Exception {
        HttpLimits limits = HttpLimits.defaults().withHeaderTimeout(Duration.ofSeconds(1));
        try (HttpListener l = start(true, limits);
             Socket s = HostileHttp.connect(l.address(), HostileHttp.loopback(42), null)) {
            // the start of a TLS 1.2 ClientHello record, then more bytes, slowly
            byte[] hello = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03};
            boolean cut = false;
            long start = System.nanoTime();
            for (int i = 0; i < 100 && !cut; i++) {
                try {
                    s.getOutputStream().write(hello[Math.min(i, hello.length - 1)]);
                    s.getOutputStream().flush();
                    Thread.sleep(100);
                } catch (IOException closed) {
                    cut = true;
                }
            }
            assertThat(cut).as("the connection was closed").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("300 slow connections from 30 addresses take no thread: every request meanwhile is answered"
            + " within 2 s")
    void slowloris(boolean secure) throws Exception {
        try (HttpListener l = start(secure, HttpLimits.defaults())) {
            List<InetAddress> from = IntStream.range(0, 30).mapToObj(i -> HostileHttp.loopback(100 + i)).toList();
            try (HostileHttp.SlowClients slow = HostileHttp.SlowClients.open(l.address(),
                    secure ? tls().client() : null, 300, from, Duration.ofSeconds(1))) {
                assertThat(slow.open()).isEqualTo(300);
                HttpClient client = secure ? HttpClient.newBuilder().sslContext(tls().client()).build()
                        : HttpClient.newHttpClient();
                for (int i = 0; i < 10; i++) {
                    long start = System.nanoTime();
                    var r = client.send(java.net.http.HttpRequest.newBuilder(l.url()).timeout(Duration.ofSeconds(2))
                            .POST(BodyPublishers.ofString("x")).build(), BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
                    Thread.sleep(200); // spread the calls over the attack
                }
            }
        }
    }
}
