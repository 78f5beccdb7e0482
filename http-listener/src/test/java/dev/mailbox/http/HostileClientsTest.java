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
import java.util.concurrent.CountDownLatch;
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
    @DisplayName("at the cap on all connections, a new client takes the place of the connection that has waited"
            + " longest without a request (connections that sent nothing, from cap / per-address-cap addresses,"
            + " locked everyone else out: two addresses for the SQS endpoint's 4,096 and 2,048)")
    void idleConnectionsMakeRoom() throws Exception {
        try (HttpListener l = start(false, HttpLimits.defaults().withMaxConnections(6))) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    held.add(HostileHttp.connect(l.address(), HostileHttp.loopback(20 + i), null));
                    // the listener sets each up before the next arrives, so that the first is the oldest
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (((dev.mailbox.http.internal.JettyListener) l).freeConnections() < i + 1
                            && System.nanoTime() - deadline < 0) {
                        Thread.sleep(5); // nothing to wait on: the listener accepts on its own threads
                    }
                }
                assertThat(((dev.mailbox.http.internal.JettyListener) l).freeConnections()).isEqualTo(6);
                assertThat(call(l, HostileHttp.loopback(30), false)).as("a new client at the cap").isEqualTo(200);
                held.get(0).setSoTimeout(5_000);
                assertThat(held.get(0).getInputStream().read()).as("the oldest idle connection, closed").isEqualTo(-1);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("at the cap on all connections, a client holding the most gives up its own oldest connection for a"
            + " new one, not another's; a client at its own cap is refused without closing anyone's connection")
    void makingRoomCostsTheGreedyClient() throws Exception {
        InetAddress other = HostileHttp.loopback(40);
        InetAddress greedy = HostileHttp.loopback(41);
        try (HttpListener l = start(false, HttpLimits.defaults().withMaxConnections(6)
                .withMaxConnectionsPerAddress(5))) {
            List<Socket> held = new ArrayList<>();
            List<Socket> greedys = new ArrayList<>();
            try {
                // the other clients' connections are the oldest, so the age alone would pick them
                held.add(connectIdle(l, other, 0));
                for (int i = 0; i < 4; i++) {
                    greedys.add(connectIdle(l, greedy, 1 + i));
                }
                held.add(connectIdle(l, HostileHttp.loopback(42), 5));
                greedys.add(HostileHttp.connect(l.address(), greedy, null)); // at the cap on all: takes its own
                greedys.get(0).setSoTimeout(5_000);
                assertThat(greedys.get(0).getInputStream().read()).as("the greedy client's oldest, closed")
                        .isEqualTo(-1);
                // the other clients' connections stay: a request on each is answered
                for (Socket s : held) {
                    HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                    assertThat(HostileHttp.status(HostileHttp.readAnswer(s, Duration.ofSeconds(5)))).isEqualTo(200);
                }
            } finally {
                for (Socket s : held) {
                    s.close();
                }
                for (Socket s : greedys) {
                    s.close();
                }
            }
        }
        // the greedy client at its own cap (5) and the server at its cap (6)
        try (HttpListener l = start(false, HttpLimits.defaults().withMaxConnections(6)
                .withMaxConnectionsPerAddress(5))) {
            List<Socket> held = new ArrayList<>();
            try {
                held.add(connectIdle(l, other, 0));
                for (int i = 0; i < 5; i++) {
                    held.add(connectIdle(l, greedy, 1 + i));
                }
                try (Socket past = HostileHttp.connect(l.address(), greedy, null)) {
                    String answer = HostileHttp.readAnswer(past, Duration.ofSeconds(5));
                    assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                    assertThat(answer).contains("your address has 5 connections");
                }
                assertThat(((dev.mailbox.http.internal.JettyListener) l).openConnections())
                        .as("no connection closed for a client past its own cap").isEqualTo(6);
                HostileHttp.write(held.get(0), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                assertThat(HostileHttp.status(HostileHttp.readAnswer(held.get(0), Duration.ofSeconds(5))))
                        .as("the other client's oldest connection").isEqualTo(200);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    /** Connects from {@code from} and waits until the listener has set the connection up ({@code before} others). */
    private static Socket connectIdle(HttpListener l, InetAddress from, int before) throws Exception {
        Socket s = HostileHttp.connect(l.address(), from, null);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (((dev.mailbox.http.internal.JettyListener) l).freeConnections() < before + 1
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(5); // nothing to wait on: the listener accepts on its own threads
        }
        return s;
    }

    @Test
    @DisplayName("past the cap on all connections, with every one serving a request, one more is refused at once")
    void totalCap() throws Exception {
        CountDownLatch serving = new CountDownLatch(6);
        CountDownLatch release = new CountDownLatch(1);
        HttpHandler slow = (request, responder) -> {
            serving.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            responder.respond(HttpResponse.text(200, "ok"));
        };
        try (HttpListener l = HttpListener.builder("test").fallback(slow)
                .limits(HttpLimits.defaults().withMaxConnections(6)).start()) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    Socket s = HostileHttp.connect(l.address(), HostileHttp.loopback(20 + i), null);
                    held.add(s);
                    HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
                }
                assertThat(serving.await(10, TimeUnit.SECONDS)).isTrue();
                try (Socket seventh = HostileHttp.connect(l.address(), HostileHttp.loopback(30), null)) {
                    String answer = HostileHttp.readAnswer(seventh, Duration.ofSeconds(5));
                    assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                    assertThat(answer).contains("the server has 6 connections open");
                }
            } finally {
                release.countDown();
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
