package dev.mailbox.coordination.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.RouteWatcher;
import dev.mailbox.coordination.Routes;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client given a single coordinator has nowhere to fail over to: when that coordinator is unreachable, gRPC's
 * channel waits out a reconnect backoff that grows to two minutes, failing every call at once meanwhile, so the
 * client would notice the coordinator's return up to two minutes late. Each failure must make the channel dial
 * again, at the pace of the caller's own retries (issue 30, finding 8).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class SingleCoordinatorReconnectTest {

    private static final int WATCHES = 12;

    @Test
    @DisplayName("each watch that fails on an unreachable single coordinator has the channel dial again at once")
    void everyFailureDialsAgain() throws Exception {
        // stands for a coordinator that is not there yet: it takes each connection and drops it at once
        try (ServerSocket gone = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicInteger dials = new AtomicInteger();
            Thread acceptor = new Thread(() -> {
                while (!gone.isClosed()) {
                    try (Socket s = gone.accept()) {
                        dials.incrementAndGet();
                    } catch (java.io.IOException closed) {
                        return;
                    }
                }
            }, "acceptor");
            acceptor.setDaemon(true);
            acceptor.start();
            try (CoordinationClient client = CoordinationClient.builder().endpoint("127.0.0.1:" + gone.getLocalPort())
                    .callTimeout(Duration.ofSeconds(2)).build()) {
                long start = System.nanoTime();
                for (int i = 0; i < WATCHES; i++) {
                    CountDownLatch ended = new CountDownLatch(1);
                    try (Routes.Watch w = client.routes().watch(0, new RouteWatcher() {
                        @Override
                        public void snapshot(long revision, List<Route> routes) {
                        }

                        @Override
                        public void change(long revision, List<Route> changed, List<String> removed) {
                        }

                        @Override
                        public void ended(@Nullable CoordinationException failure) {
                            ended.countDown();
                        }
                    })) {
                        assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
                    }
                    // as a RoutingTable reconnects after its first failures: a pause, not a storm
                    Thread.sleep(100);
                }
                long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                // gRPC's own backoff (1 s, then 1.6 s, 2.6 s, ...) would have dialled some three times in this span
                assertThat(dials.get()).as("dials in %d ms of %d failed watches", elapsedMillis, WATCHES)
                        .isGreaterThanOrEqualTo(WATCHES - 2);
            }
        }
    }
}
