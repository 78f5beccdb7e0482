package dev.mailbox.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpLimits;
import dev.mailbox.http.HttpListener;
import dev.mailbox.http.HttpResponse;
import dev.mailbox.testkit.http.HostileHttp;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The console shares its listener with the process's metrics and health probes: whatever its calls wait on (a
 * coordinator out of reach, a backend counting slowly, a redrive's ten seconds), the probes beside it must still be
 * answered, or an orchestrator restarts a healthy process. And it answers requests as browsers send them.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
@DisplayName("The console on the listener it shares with metrics and probes")
class ConsoleListenerTest {

    /** A source whose cluster status waits until released, as one behind an unreachable coordinator does. */
    private static final class Stuck implements ConsoleSource {
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger inside = new AtomicInteger();

        @Override
        public String kind() {
            return "node";
        }

        @Override
        public String id() {
            return "node-a";
        }

        @Override
        public List<ClusterStatus> coordinators() {
            inside.incrementAndGet();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return List.of();
        }

        @Override
        public List<NamespaceInfo> namespaces() {
            return List.of();
        }

        @Override
        public List<NodeInfo> nodes() {
            return List.of();
        }

        @Override
        public List<Lease> leases() {
            return List.of();
        }

        @Override
        public RoutingSnapshot routes() {
            return new RoutingSnapshot(1, List.of());
        }
    }

    @Test
    @DisplayName("console calls stuck on their source leave the health probe on the same listener answered at once"
            + " (twelve stuck calls took all eight of the metrics listener's workers, and the probe waited behind"
            + " them)")
    void stuckCallsLeaveProbesAnswered() throws Exception {
        Stuck source = new Stuck();
        Console console = Console.builder().source(source).build();
        HttpHandler live = (request, responder) -> responder.respond(HttpResponse.text(200, "UP"));
        // the metrics listener's limits (cli's MetricsEndpoint): 8 workers, 64 waiting
        HttpListener.Builder b = HttpListener.builder("metrics").route("/health/live", live)
                .limits(HttpLimits.defaults().withWorkers(8, 64).withMaxBodyBytes(0));
        List<Socket> calls = new ArrayList<>();
        try (HttpListener l = Console.mount(b, console).start()) {
            try {
                for (int i = 0; i < 12; i++) {
                    Socket s = HostileHttp.connect(l.address(), InetAddress.getLoopbackAddress(), null);
                    calls.add(s);
                    HostileHttp.write(s, "GET /ui/api/cluster HTTP/1.1\r\nHost: x\r\n\r\n");
                }
                // on a console that runs its calls on the listener's workers, eight get in; on one that does not,
                // fewer ever do: wait for eight, or a while
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                while (source.inside.get() < 8 && System.nanoTime() - deadline < 0) {
                    Thread.sleep(10); // nothing to wait on: the calls enter the source on the listener's threads
                }
                assertThat(source.inside.get()).as("calls stuck in the source").isPositive();
                try (Socket probe = HostileHttp.connect(l.address(), InetAddress.getLoopbackAddress(), null)) {
                    long start = System.nanoTime();
                    HostileHttp.write(probe, "GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n");
                    String answer;
                    try {
                        answer = HostileHttp.readAnswer(probe, Duration.ofSeconds(2));
                    } catch (java.net.SocketTimeoutException none) {
                        answer = "";
                    }
                    assertThat(HostileHttp.status(answer)).as("the probe, beside stuck console calls").isEqualTo(200);
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
                }
            } finally {
                source.release.countDown();
                for (Socket s : calls) {
                    s.close();
                }
            }
        }
    }

    @Test
    @DisplayName("a GET as browsers and curl send it (no Content-Length) is served: it was taken for a chunked body"
            + " and refused with 413, page and API alike")
    void browsersGet() throws Exception {
        Console console = Console.builder().source(new Stuck()).build();
        try (HttpListener l = Console.mount(HttpListener.builder("metrics"), console).start()) {
            for (String path : List.of("/ui/", "/ui/api/whoami")) {
                try (Socket s = HostileHttp.connect(l.address(), InetAddress.getLoopbackAddress(), null)) {
                    HostileHttp.write(s, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
                    String answer = HostileHttp.readAnswer(s, Duration.ofSeconds(5));
                    assertThat(HostileHttp.status(answer)).as(path + ": " + answer).isEqualTo(200);
                }
            }
        }
    }
}
