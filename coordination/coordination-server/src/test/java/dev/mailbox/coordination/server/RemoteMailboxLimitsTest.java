package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.mailbox.api.Codec;
import dev.mailbox.api.MailboxException;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.SendReply;
import dev.mailbox.coordination.proto.data.SendRequest;
import dev.mailbox.coordination.wire.DataPlane;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What a RemoteMailbox costs its caller: its time limit bounds each call, and a failed build leaves nothing open. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RemoteMailboxLimitsTest {

    /** A node that has no route for any mailbox for {@code noRouteMillis}, and after that never answers. */
    private static Server noRouteThenSilent(long noRouteMillis, AtomicInteger calls) throws Exception {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(noRouteMillis);
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new MailboxServiceGrpc.MailboxServiceImplBase() {
                    @Override
                    public void send(SendRequest r, StreamObserver<SendReply> out) {
                        calls.incrementAndGet();
                        if (System.nanoTime() - until < 0) {
                            out.onError(DataPlane.noRoute("no runner holds the lease of '" + r.getMailbox() + "'"));
                        }
                        // after that: no answer at all, as from a node that hangs
                    }
                }).build().start();
    }

    @Test
    @DisplayName("waiting for a route stops at the call's time limit: with a 1 s callTimeout and the default 10 s "
            + "routeWait, a send to a mailbox without a route fails (retryable) after about 1 s, not 10")
    void routeWaitEndsWithTheCallTimeLimit() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Server node = noRouteThenSilent(TimeUnit.DAYS.toMillis(1), calls);
        try (RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@x", Codec.utf8())
                .node("127.0.0.1:" + node.getPort()).callTimeout(Duration.ofSeconds(1)).build()) {
            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> remote.send("job"));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(thrown).isInstanceOfSatisfying(MailboxException.class, e -> assertThat(e.isRetryable()).isTrue());
            assertThat(calls.get()).as("it did wait for a route, retrying").isGreaterThan(1);
            assertThat(tookMillis).as("the call's time limit (1 s) bounds the wait for a route").isLessThan(2_500);
        } finally {
            node.shutdownNow();
        }
    }

    @Test
    @DisplayName("an attempt made after waiting for a route gets what is left of the call's time limit, not a new "
            + "one: a node that stops answering after 1.5 s of no-route fails a 2 s call at about 2 s, not 3.5 s")
    void retryAfterNoRouteGetsWhatIsLeft() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Server node = noRouteThenSilent(1_500, calls);
        try (RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@x", Codec.utf8())
                .node("127.0.0.1:" + node.getPort()).callTimeout(Duration.ofSeconds(2))
                .routeWait(Duration.ofSeconds(10)).build()) {
            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> remote.send("job"));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(thrown).isInstanceOf(MailboxException.class);
            assertThat(tookMillis).as("one 2 s limit for the whole call").isBetween(1_500L, 2_900L);
        } finally {
            node.shutdownNow();
        }
    }

    /** Collects gRPC's report of a channel that was garbage collected without being shut down. */
    private static final class OrphanReports extends Handler implements AutoCloseable {
        private static final Logger LOGGER = Logger.getLogger("io.grpc.internal.ManagedChannelOrphanWrapper");
        final List<String> targets = new CopyOnWriteArrayList<>();

        OrphanReports() {
            LOGGER.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            Object[] params = record.getParameters();
            if (params != null) {
                for (Object p : params) {
                    targets.add(String.valueOf(p));
                }
            }
        }

        /** Collects garbage and makes a channel (which is when gRPC reports the orphans it found) a few times. */
        boolean reported(String target) throws InterruptedException {
            for (int i = 0; i < 20 && targets.stream().noneMatch(t -> t.contains(target)); i++) {
                System.gc();
                Thread.sleep(50);
                NettyChannelBuilder.forTarget("127.0.0.1:9").usePlaintext().build().shutdownNow();
            }
            return targets.stream().anyMatch(t -> t.contains(target));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            LOGGER.removeHandler(this);
        }
    }

    @Test
    @DisplayName("a RemoteMailbox whose build fails on its second node address shuts the channel it opened to the "
            + "first")
    void failedBuildLeavesNoChannelOpen() throws Exception {
        try (OrphanReports orphans = new OrphanReports()) {
            // the detector works: a channel dropped without shutdown is reported
            makeOrphan("127.0.0.1:7");
            assertThat(orphans.reported("127.0.0.1:7")).as("gRPC reports an orphaned channel").isTrue();

            assertThatThrownBy(() -> RemoteMailbox.builder("jobs@x", Codec.utf8())
                    .nodes(List.of("127.0.0.1:8", "no such [address")).build())
                    .isInstanceOf(IllegalArgumentException.class);

            assertThat(orphans.reported("127.0.0.1:8")).as("the first node's channel was left open").isFalse();
        }
    }

    private static void makeOrphan(String target) {
        ManagedChannel dropped = NettyChannelBuilder.forTarget(target).usePlaintext().build();
        assertThat(dropped.isShutdown()).isFalse();
    }
}
