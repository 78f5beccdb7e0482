package dev.mailbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.http.HostileHttp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Clients that cost the listener more than their requests' size: ones that never read (or read a trickle of) a large
 * answer, ones that announce bodies they never send and so hold the memory budget, and ones that go away while
 * their request is served. Each of these tests failed against the listener as first written.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Isolated("measures the JVM's direct memory")
@DisplayName("HttpListener bounds what unread answers, unsent bodies and departed clients cost")
class GreedyClientsTest {

    @TempDir
    static java.nio.file.Path dir;

    private static final HttpHandler ECHO = (request, responder) -> responder.respond(HttpResponse.text(200,
            "got " + request.body().length));

    private static long directMemory() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        throw new IllegalStateException("no direct buffer pool");
    }

    /** A connection that reads as little as it can: a small receive buffer, and nothing read unless asked. */
    private static Socket nonReading(HttpListener l, InetAddress from) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.bind(new InetSocketAddress(from, 0));
        s.connect(l.address(), 5_000);
        s.setSoTimeout(10_000);
        return s;
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

    /** The answer, or "" if none came within the time (the server is still waiting for something). */
    private static String answerWithin(Socket s, Duration timeout) throws IOException {
        try {
            return HostileHttp.readAnswer(s, timeout);
        } catch (SocketTimeoutException none) {
            return "";
        }
    }

    private static void awaitBudget(BodyBudget budget, long available) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (budget.available() != available && System.nanoTime() - deadline < 0) {
            Thread.sleep(10); // nothing to wait on: the listener takes and gives back on its own threads
        }
        assertThat(budget.available()).isEqualTo(available);
    }

    @Test
    @DisplayName("a large plaintext answer to a client that does not read costs no direct memory of its size (the JDK"
            + " copied each whole 32 MiB answer into a temporary direct buffer to write it: 4 unread answers held"
            + " 128 MiB outside the heap)")
    void answersAreWrittenInSlices() throws Exception {
        byte[] large = new byte[32 << 20];
        CountDownLatch answered = new CountDownLatch(4);
        HttpHandler big = (request, responder) -> {
            responder.respond(HttpResponse.of(200, "application/octet-stream", large));
            answered.countDown();
        };
        try (HttpListener l = HttpListener.builder("test").fallback(big).start()) {
            long before = directMemory();
            List<Socket> readers = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    Socket s = nonReading(l, HostileHttp.loopback(600 + i));
                    readers.add(s);
                    HostileHttp.write(s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
                }
                assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(HostileHttp.status(head(readers.get(0)))).isEqualTo(200);
                assertThat(directMemory() - before).as("direct memory taken by 4 unread 32 MiB answers")
                        .isLessThan(8L << 20);
            } finally {
                for (Socket s : readers) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("answers not yet taken by their clients count against the memory budget: while an 8 MiB answer"
            + " waits for a client that does not read, a 1 MiB budget takes no body, and it is whole again once"
            + " that client is gone (the unread answers of any number of clients were held beyond every bound)")
    void unreadAnswersCountAgainstTheBudget() throws Exception {
        BodyBudget budget = BodyBudget.of(1 << 20);
        byte[] large = new byte[8 << 20];
        HttpHandler big = (request, responder) -> responder.respond(HttpResponse.of(200, "application/octet-stream",
                large));
        try (HttpListener l = HttpListener.builder("test").route("/big", big).fallback(ECHO).bodyBudget(budget)
                .start()) {
            try (Socket greedy = nonReading(l, HostileHttp.loopback(610))) {
                HostileHttp.write(greedy, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
                assertThat(HostileHttp.status(head(greedy))).isEqualTo(200);
                try (Socket other = HostileHttp.connect(l.address(), HostileHttp.loopback(611), null)) {
                    HostileHttp.write(other, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
                            + "x".repeat(1000));
                    String answer = answerWithin(other, Duration.ofSeconds(5));
                    assertThat(HostileHttp.status(answer)).as(answer).isEqualTo(503);
                }
            }
            awaitBudget(budget, budget.capacity());
            try (Socket other = HostileHttp.connect(l.address(), HostileHttp.loopback(611), null)) {
                HostileHttp.write(other, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
                        + "x".repeat(1000));
                assertThat(HostileHttp.status(answerWithin(other, Duration.ofSeconds(5)))).isEqualTo(200);
            }
        }
    }

    @Test
    @DisplayName("one client address holds at most a quarter of the budget (or one body, if larger): announcing"
            + " bodies it never sends, it cannot take the budget from everyone else (two connections announcing"
            + " 2,000 bytes took a budget of 4,000, and every other client got 503 until the body deadline)")
    void oneAddressHoldsAShareOfTheBudget() throws Exception {
        BodyBudget budget = BodyBudget.of(4000);
        InetAddress greedy = HostileHttp.loopback(620);
        try (HttpListener l = HttpListener.builder("test").fallback(ECHO).bodyBudget(budget)
                .limits(HttpLimits.defaults().withMaxBodyBytes(2000)).start();
             Socket first = HostileHttp.connect(l.address(), greedy, null);
             Socket second = HostileHttp.connect(l.address(), greedy, null)) {
            HostileHttp.write(first, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n");
            awaitBudget(budget, 2000);
            HostileHttp.write(second, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n");
            String answer = answerWithin(second, Duration.ofSeconds(5));
            assertThat(HostileHttp.status(answer)).as("a second body from an address that holds its share: " + answer)
                    .isEqualTo(503);
            try (Socket other = HostileHttp.connect(l.address(), HostileHttp.loopback(621), null)) {
                HostileHttp.write(other, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1500\r\n\r\n"
                        + "y".repeat(1500));
                String served = answerWithin(other, Duration.ofSeconds(5));
                assertThat(HostileHttp.status(served)).as(served).isEqualTo(200);
                assertThat(served).endsWith("got 1500");
            }
            HostileHttp.write(first, "z".repeat(2000));
            assertThat(answerWithin(first, Duration.ofSeconds(5))).endsWith("got 2000");
        }
    }

    @Test
    @DisplayName("a client that reads its answer a trickle at a time is cut off at the write deadline, and the"
            + " answer's memory given back (it held the connection and the 8 MiB answer for as long as it kept"
            + " reading a little, the idle timeout never firing)")
    void slowReaderIsCutOff() throws Exception {
        BodyBudget budget = BodyBudget.of(64 << 20);
        byte[] large = new byte[8 << 20];
        HttpHandler big = (request, responder) -> responder.respond(HttpResponse.of(200, "application/octet-stream",
                large));
        HttpLimits limits = HttpLimits.defaults().withWriteTimeout(Duration.ofSeconds(1))
                .withIdleTimeout(Duration.ofSeconds(30));
        try (HttpListener l = HttpListener.builder("test").fallback(big).limits(limits).bodyBudget(budget).start();
             Socket slow = nonReading(l, HostileHttp.loopback(630))) {
            HostileHttp.write(slow, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(HostileHttp.status(head(slow))).isEqualTo(200);
            Thread sipping = new Thread(() -> {
                byte[] sip = new byte[4096];
                try {
                    InputStream in = slow.getInputStream();
                    while (in.read(sip) >= 0) {
                        Thread.sleep(50); // the attack's pace: a sip every 50 ms, never idle
                    }
                } catch (IOException | InterruptedException stopped) {
                    // cut off, or the test is over
                }
            }, "sipping-client");
            sipping.setDaemon(true);
            sipping.start();
            try {
                // the server's side: the connection closed and the answer dropped (what the kernel had buffered
                // for the socket still trickles to the client for a while)
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (((dev.mailbox.http.internal.JettyListener) l).openConnections() > 0
                        && System.nanoTime() - deadline < 0) {
                    Thread.sleep(10); // nothing to wait on: the listener closes it on its own thread
                }
                assertThat(((dev.mailbox.http.internal.JettyListener) l).openConnections()).as("connections open")
                        .isZero();
                awaitBudget(budget, budget.capacity());
            } finally {
                slow.close();
                sipping.interrupt();
                sipping.join(5_000);
            }
        }
    }

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("a handler is told when the client of the request it works on goes away, and a client that only"
            + " pipelines its next request meanwhile is not taken for gone: that request is served after the first")
    void clientThatGoesAway(boolean secure) throws Exception {
        TestTls tls = secure ? TestTls.create(dir) : null;
        CountDownLatch handling = new CountDownLatch(2);
        CountDownLatch leaverGone = new CountDownLatch(1);
        CountDownLatch stayerGone = new CountDownLatch(1);
        java.util.Map<String, HttpResponder> waiting = new java.util.concurrent.ConcurrentHashMap<>();
        HttpHandler wait = (request, responder) -> {
            String who = request.rawQuery();
            responder.onClientGone(("leaver".equals(who) ? leaverGone : stayerGone)::countDown);
            waiting.put(who, responder);
            handling.countDown();
        };
        try (HttpListener l = HttpListener.builder("test").route("/wait", wait).fallback(ECHO)
                .tls(tls == null ? null : tls.server()).start();
             Socket stayer = HostileHttp.connect(l.address(), HostileHttp.loopback(640),
                     tls == null ? null : tls.client())) {
            HostileHttp.write(stayer, "POST /wait?stayer HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
            try (Socket leaver = HostileHttp.connect(l.address(), HostileHttp.loopback(641),
                    tls == null ? null : tls.client())) {
                HostileHttp.write(leaver, "POST /wait?leaver HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
                assertThat(handling.await(10, TimeUnit.SECONDS)).isTrue();
                // the stayer's next request arrives while its first is handled: the listener's look at the socket
                // reads it, and must hand it to the parser later
                HostileHttp.write(stayer, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
            }
            assertThat(leaverGone.await(10, TimeUnit.SECONDS)).as("told that the leaver went").isTrue();
            waiting.get("leaver").respond(HttpResponse.text(200, "for nobody"));
            assertThat(stayerGone.getCount()).as("the stayer is still there").isEqualTo(1);
            waiting.get("stayer").respond(HttpResponse.text(200, "first"));
            String answers = HostileHttp.readAnswer(stayer, Duration.ofSeconds(5));
            if (!answers.endsWith("got 2")) { // the first read may end with the first answer
                answers += HostileHttp.readAnswer(stayer, Duration.ofSeconds(5));
            }
            assertThat(answers).containsSubsequence("200 OK", "first", "200 OK", "got 2").endsWith("got 2");
        }
    }
}
