package dev.mailbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.testkit.http.HostileHttp;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
@DisplayName("HttpListener serves handlers by path, and reads a body only once it is allowed to")
class HttpListenerTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final InetAddress LOCAL = InetAddress.getLoopbackAddress();

    /** Answers with the method, path, query and body it was given. */
    private static final HttpHandler ECHO = (request, responder) -> responder.respond(HttpResponse.text(200,
            request.method() + " " + request.rawPath() + " " + request.rawQuery() + " "
                    + new String(request.body(), StandardCharsets.UTF_8)));

    private static java.net.http.HttpResponse<String> send(HttpListener l, String method, String pathAndQuery,
                                                            String body) throws Exception {
        return HTTP.send(java.net.http.HttpRequest.newBuilder(URI.create(l.url() + pathAndQuery))
                .method(method, body.isEmpty() ? BodyPublishers.noBody() : BodyPublishers.ofString(body))
                .timeout(Duration.ofSeconds(10)).build(), BodyHandlers.ofString());
    }

    /** The budget is given back once an answer is written, which may be a moment after the client has read it. */
    private static void awaitWhole(BodyBudget budget) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (budget.available() != budget.capacity() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10); // nothing to wait on: the listener gives bytes back on its own thread
        }
        assertThat(budget.available()).isEqualTo(budget.capacity());
    }

    @Test
    @DisplayName("exact paths, paths under a prefix and a fallback; 404 without one; HEAD answers without a body")
    void routes() throws Exception {
        HttpHandler ui = (request, responder) -> responder.respond(HttpResponse.text(200, "ui " + request.rawPath()));
        HttpHandler length = (request, responder) -> responder.respond(HttpResponse.text(200, request.method() + " "
                + request.contentLength() + " " + request.hasBody()));
        try (HttpListener l = HttpListener.builder("test").route("/echo", ECHO).route("/ui/", ui)
                .route("/length", length).start()) {
            assertThat(send(l, "GET", "/length", "").body()).as("no body").isEqualTo("GET 0 false");
            assertThat(send(l, "POST", "/length", "abc").body()).isEqualTo("POST 3 true");
            // as a browser sends a GET: neither Content-Length nor Transfer-Encoding, so no body (Jetty says -1)
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                HostileHttp.write(s, "GET /length HTTP/1.1\r\nHost: x\r\n\r\n");
                assertThat(HostileHttp.readAnswer(s, Duration.ofSeconds(5))).endsWith("GET 0 false");
            }
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                HostileHttp.write(s, "POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3\r\nabc\r\n0\r\n\r\n");
                assertThat(HostileHttp.readAnswer(s, Duration.ofSeconds(5))).as("chunked").endsWith("POST -1 true");
            }
            assertThat(send(l, "POST", "/echo?a=1&b=%20", "hello").body()).isEqualTo("POST /echo a=1&b=%20 hello");
            assertThat(send(l, "GET", "/ui/page/1", "").body()).isEqualTo("ui /ui/page/1");
            assertThat(send(l, "GET", "/echo/more", "").statusCode()).isEqualTo(404);
            var head = send(l, "HEAD", "/echo", "");
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            assertThat(head.headers().firstValueAsLong("Content-Length")).hasValue("HEAD /echo null ".length());
        }
        try (HttpListener l = HttpListener.builder("test").fallback(ECHO).start()) {
            assertThat(send(l, "PUT", "/any/where", "x").body()).isEqualTo("PUT /any/where null x");
        }
    }

    @Test
    @DisplayName("a request admit() refuses is answered from its headers: the 4 MiB body it announced is never"
            + " waited for, and the connection is closed after the answer")
    void admitRefusesBeforeTheBody() throws Exception {
        HttpHandler guarded = new HttpHandler() {
            @Override
            public HttpResponse admit(HttpRequest head) {
                return head.header("authorization") == null ? HttpResponse.text(403, "who are you?") : null;
            }

            @Override
            public void handle(HttpRequest request, HttpResponder responder) {
                ECHO.handle(request, responder);
            }
        };
        try (HttpListener l = HttpListener.builder("test").fallback(guarded)
                .limits(HttpLimits.defaults().withMaxBodyBytes(8 << 20)).start();
             Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
            HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + (4 << 20) + "\r\n\r\n");
            String answer = HostileHttp.readAnswer(s, Duration.ofSeconds(5));
            assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(403);
            assertThat(answer).containsIgnoringCase("Connection: close").endsWith("who are you?");
            assertThat(s.getInputStream().read()).as("closed after the answer").isEqualTo(-1);
        }
    }

    @Test
    @DisplayName("a declared body over the cap is refused with 413 before it is read; a chunked one once it passes"
            + " the cap; a body within it is read whole")
    void bodyCap() throws Exception {
        try (HttpListener l = HttpListener.builder("test").fallback(ECHO)
                .limits(HttpLimits.defaults().withMaxBodyBytes(1000)).start()) {
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n");
                String answer = HostileHttp.readAnswer(s, Duration.ofSeconds(5));
                assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(413);
                assertThat(answer).contains("1001 bytes").contains("at most 1000");
            }
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                String chunk = Integer.toHexString(600) + "\r\n" + "x".repeat(600) + "\r\n";
                HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk);
                assertThat(HostileHttp.status(HostileHttp.readAnswer(s, Duration.ofSeconds(5)))).isEqualTo(413);
            }
            assertThat(send(l, "POST", "/", "y".repeat(1000)).body()).endsWith("y".repeat(1000));
        }
    }

    @Test
    @DisplayName("bodies held at once are bounded by the budget: one past it is refused with 503 before it is read,"
            + " and the budget is whole again when the answers are sent")
    void budget() throws Exception {
        BodyBudget budget = BodyBudget.of(1500);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpHandler slow = (request, responder) -> {
            holding.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            responder.respond(HttpResponse.text(200, "held " + request.body().length));
        };
        try (HttpListener l = HttpListener.builder("test").route("/slow", slow).fallback(ECHO).bodyBudget(budget).start()) {
            var first = HTTP.sendAsync(java.net.http.HttpRequest.newBuilder(URI.create(l.url() + "/slow"))
                    .POST(BodyPublishers.ofString("a".repeat(1000))).build(), BodyHandlers.ofString());
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(budget.available()).isEqualTo(500);
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n");
                String answer = HostileHttp.readAnswer(s, Duration.ofSeconds(5));
                assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                assertThat(answer).contains("memory for request bodies");
            }
            try (Socket s = HostileHttp.connect(l.address(), HostileHttp.loopback(1), null)) {
                // from another client: one client holds at most a quarter of the budget beside its first body
                HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n" + "b".repeat(400));
                assertThat(HostileHttp.status(HostileHttp.readAnswer(s, Duration.ofSeconds(5)))).as("what fits is served")
                        .isEqualTo(200);
            }
            release.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS).body()).isEqualTo("held 1000");
            awaitWhole(budget);
        }
    }

    @Test
    @DisplayName("with every worker busy and no room to wait, a request is refused with 503 before its body is read")
    void workers() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpHandler slow = (request, responder) -> {
            holding.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            responder.respond(HttpResponse.text(200, "done"));
        };
        try (HttpListener l = HttpListener.builder("test").route("/slow", slow).fallback(ECHO)
                .limits(HttpLimits.defaults().withWorkers(1, 0)).start()) {
            var first = HTTP.sendAsync(java.net.http.HttpRequest.newBuilder(URI.create(l.url() + "/slow")).build(),
                    BodyHandlers.ofString());
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            var refused = send(l, "POST", "/", "x");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.body()).contains("busy");
            release.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS).body()).isEqualTo("done");
            assertThat(send(l, "POST", "/", "x").statusCode()).isEqualTo(200);
        }
    }

    @Test
    @DisplayName("a body that stops arriving is answered 408 at the body deadline and its budget given back")
    void bodyDeadline() throws Exception {
        BodyBudget budget = BodyBudget.of(10_000);
        try (HttpListener l = HttpListener.builder("test").fallback(ECHO).bodyBudget(budget)
                .limits(HttpLimits.defaults().withBodyTimeout(Duration.ofMillis(500))).start();
             Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
            long start = System.nanoTime();
            HostileHttp.write(s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf of it");
            String answer = HostileHttp.readAnswer(s, Duration.ofSeconds(10));
            assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(408);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            awaitWhole(budget);
        }
    }

    @Test
    @DisplayName("an address that cannot be bound is refused with the reason")
    void portInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, LOCAL)) {
            assertThatThrownBy(() -> HttpListener.builder("test").fallback(ECHO)
                    .listen(new java.net.InetSocketAddress(LOCAL, taken.getLocalPort())).start())
                    .isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining(String.valueOf(taken.getLocalPort())).hasMessageContaining("in use");
        }
    }

    @Test
    @DisplayName("over TLS: served to a client that trusts the certificate; plaintext to the TLS port gets nothing")
    void tls(@TempDir Path dir) throws Exception {
        TestTls tls = TestTls.create(dir);
        try (HttpListener l = HttpListener.builder("test").fallback(ECHO).tls(tls.server()).start()) {
            assertThat(l.url().getScheme()).isEqualTo("https");
            HttpClient trusting = HttpClient.newBuilder().sslContext(tls.client()).build();
            var r = trusting.send(java.net.http.HttpRequest.newBuilder(l.url().resolve("/x"))
                    .POST(BodyPublishers.ofString("secret")).build(), BodyHandlers.ofString());
            assertThat(r.body()).isEqualTo("POST /x null secret");
            try (Socket s = HostileHttp.connect(l.address(), LOCAL, null)) {
                HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
                InputStream in = s.getInputStream();
                byte[] got = in.readNBytes(5);
                assertThat(new String(got, StandardCharsets.ISO_8859_1)).doesNotStartWith("HTTP/1.1 200");
            }
        }
    }
}
