package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RoutingTable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.RouteEvent;
import dev.mailbox.coordination.proto.WatchRoutesRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A route watcher that stops reading costs its coordinator a bounded backlog, then resumes. */
@Timeout(120)
class RouteWatchBacklogTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final int BACKLOG = 20;
    /** Long fields make each route change about 1 KB, so a few dozen fill a small flow-control window. */
    /** Large routes fill a stalled stream's flow-control window sooner: ids as long as the limits allow. */
    private static final LeaseHolder BIG = new LeaseHolder("runner-" + "x".repeat(240), "node-" + "x".repeat(70),
            "addr-" + "x".repeat(240) + ":1");

    /** A raw watch whose reader takes the first event and then stops asking for more. */
    private static final class StalledWatch implements ClientResponseObserver<WatchRoutesRequest, RouteEvent> {
        final LinkedBlockingQueue<RouteEvent> events = new LinkedBlockingQueue<>();
        final CompletableFuture<Status> end = new CompletableFuture<>();
        volatile ClientCallStreamObserver<WatchRoutesRequest> call;

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRoutesRequest> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
        }

        @Override
        public void onNext(RouteEvent value) {
            events.add(value);
        }

        @Override
        public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            end.complete(Status.OK);
        }
    }

    @Test
    @DisplayName("a stalled watcher is cut off with RESOURCE_EXHAUSTED after the backlog bound; others keep up; it resumes from its revision")
    void stalledWatcherIsCutOffAndResumes() throws Exception {
        try (TestingCluster cluster = boundedCluster()) {
            CoordinatorNode node = cluster.node("n1");
            CoordinationClient client = cluster.client();
            RoutingTable healthy = client.routes().table();
            ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.endpoint("n1")).usePlaintext()
                    .flowControlWindow(16 * 1024).build();
            try {
                StalledWatch stalled = new StalledWatch();
                ControlPlaneGrpc.newStub(channel).watchRoutes(WatchRoutesRequest.getDefaultInstance(), stalled);
                TestingCluster.await(PATIENCE, () -> node.routeWatchers() == 2, "two watchers");

                int granted = grantWhileWatched(client, node, "w", 2, 2_000);
                assertThat(node.routeWatchers()).as("the stalled watcher was dropped after %s grants", granted).isEqualTo(1);
                // the bound, not memory or luck, ended it: a 16 KiB window plus gRPC's 32 KiB of buffering is
                // about 50 changes, and at most BACKLOG more were queued
                assertThat(granted).isBetween(BACKLOG + 1, 200);

                long revision = client.routes().list().revision();
                assertThat(healthy.await(t -> t.revision() >= revision, PATIENCE)).isTrue();
                assertThat(healthy.routes()).hasSize(granted);

                // the reader wakes up: it drains what was queued, in order, then learns why the stream ended
                stalled.call.request(Integer.MAX_VALUE);
                Status status = stalled.end.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(status.getDescription()).contains("more than " + BACKLOG + " changes behind");
                List<RouteEvent> seen = List.copyOf(stalled.events);
                assertThat(seen.get(0).getSnapshot()).isTrue();
                long last = seen.get(seen.size() - 1).getRevision();
                assertThat(seen).extracting(RouteEvent::getRevision).isSorted();
                assertThat(last).isLessThan(revision);

                // resuming from the last revision it saw gets only what it missed, no snapshot
                StalledWatch resumed = new StalledWatch();
                ControlPlaneGrpc.newStub(channel).watchRoutes(
                        WatchRoutesRequest.newBuilder().setFromRevision(last).build(), resumed);
                resumed.call.request(Integer.MAX_VALUE);
                int missed = granted - (seen.size() - 1);
                for (int i = 0; i < missed; i++) {
                    RouteEvent e = resumed.events.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                    assertThat(e).as("missed change %s of %s", i + 1, missed).isNotNull();
                    assertThat(e.getSnapshot()).isFalse();
                    assertThat(e.getRevision()).isGreaterThan(last);
                }
                resumed.call.cancel("done", null);
            } finally {
                channel.shutdownNow();
                healthy.close();
            }
        }
    }

    /** One coordinator whose watch backlog bound is {@link #BACKLOG}, leading. */
    private static TestingCluster boundedCluster() {
        TestingCluster cluster = TestingCluster.builder().size(1).configure(b -> b.maxWatchBacklog(BACKLOG)).start();
        cluster.awaitLeader(PATIENCE);
        return cluster;
    }

    @Test
    @DisplayName("the backlog bound must be positive")
    void backlogBoundIsChecked() {
        assertThatThrownBy(() -> CoordinatorNode.builder("n1").maxWatchBacklog(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWatchBacklog").hasMessageContaining("0");
    }

    @Test
    @DisplayName("a RoutingTable whose listener blocks is cut off, reconnects by itself and catches up without a snapshot")
    void routingTableResumesAfterCutOff() throws Exception {
        try (TestingCluster cluster = boundedCluster()) {
            CoordinatorNode node = cluster.node("n1");
            CoordinationClient client = cluster.client();
            try (RoutingTable table = client.routes().table()) {
                assertThat(table.await(RoutingTable::isSynced, PATIENCE)).isTrue();
                CountDownLatch release = new CountDownLatch(1);
                table.addListener((id, route, rev) -> {
                    try {
                        release.await(); // a listener that blocks holds up the stream's reader
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                int granted = grantWhileWatched(client, node, "t", 1, 5_000);
                assertThat(node.routeWatchers()).as("cut off after %s grants", granted).isZero();
                release.countDown();
                long revision = client.routes().list().revision();
                assertThat(table.await(t -> t.revision() >= revision, PATIENCE)).isTrue();
                assertThat(table.routes()).hasSize(granted);
                assertThat(table.snapshotsReceived()).isEqualTo(1);
            }
        }
    }

    /** Grants leases (each one a route change) until the node no longer has {@code watchers} watchers. */
    private static int grantWhileWatched(CoordinationClient client, CoordinatorNode node, String namespace,
                                         int watchers, int most) {
        int granted = 0;
        while (node.routeWatchers() == watchers && granted < most) {
            client.leases().acquire(namespace + "@m" + granted, BIG);
            granted++;
        }
        return granted;
    }
}
