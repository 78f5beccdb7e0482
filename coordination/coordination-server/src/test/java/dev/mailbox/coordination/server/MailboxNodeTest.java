package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.coordination.wire.DataPlane;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MailboxNodeTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static TestingCluster cluster;
    private static CoordinationClient client;

    @BeforeAll
    static void start() {
        cluster = TestingCluster.start(1);
        cluster.awaitLeader(PATIENCE);
        client = cluster.client();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    @DisplayName("a published mailbox whose lease is revoked and reclaimed is taken back by its node")
    void publishKeepsTrying() {
        try (MailboxNode node = MailboxNode.builder("node-p").coordinator(client).registrationTtl(Duration.ofSeconds(3))
                .start()) {
            Lease first = node.publish(InMemoryMailbox.builder("published@node-p", Codec.bytes()).build());
            Lease revoking = client.leases().revoke("published@node-p");
            client.leases().reclaim("published@node-p");
            TestingCluster.await(PATIENCE, () -> client.leases().get("published@node-p").map(l ->
                    l.state() == LeaseState.ACTIVE && l.epoch() > revoking.epoch()).orElse(false),
                    "the node holds the lease again");
            Lease back = client.leases().get("published@node-p").orElseThrow();
            assertThat(back.runnerId()).isEqualTo(first.runnerId());
            assertThat(back.address()).isEqualTo(node.address());
            assertThat(back.leaseId()).isNotEqualTo(first.leaseId());
        }
    }

    @Test
    @DisplayName("waiting receives are bounded: one past the bound is refused at once with RESOURCE_EXHAUSTED, and "
            + "a thousand of them do not cost a thousand threads")
    void waitingReceivesAreBounded() throws Exception {
        int bound = 8;
        try (MailboxNode node = MailboxNode.builder("node-w").maxWaitingReceives(bound).start()) {
            node.host(InMemoryMailbox.builder("waits@node-w", Codec.bytes()).build());
            ManagedChannel channel = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                MailboxServiceGrpc.MailboxServiceStub stub = MailboxServiceGrpc.newStub(channel);
                ReceiveRequest wait = ReceiveRequest.newBuilder().setMailbox("waits@node-w").setMaxMessages(1)
                        .setVisibilityTimeoutMillis(30_000).setWaitMillis(5_000).build();
                int calls = 1_000;
                AtomicInteger refused = new AtomicInteger();
                AtomicInteger answered = new AtomicInteger();
                CountDownLatch done = new CountDownLatch(calls);
                int threadsBefore = Thread.activeCount();
                for (int i = 0; i < calls; i++) {
                    stub.withDeadlineAfter(30, TimeUnit.SECONDS).receive(wait, new StreamObserver<>() {
                        @Override
                        public void onNext(ReceiveReply value) {
                            answered.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable t) {
                            Status s = Status.fromThrowable(t);
                            if (s.getCode() == Status.Code.RESOURCE_EXHAUSTED
                                    && DataPlane.BUSY.equals(s.asRuntimeException(io.grpc.Status.trailersFromThrowable(t))
                                    .getTrailers().get(DataPlane.KIND))) {
                                refused.incrementAndGet();
                            }
                            done.countDown();
                        }

                        @Override
                        public void onCompleted() {
                            done.countDown();
                        }
                    });
                }
                TestingCluster.await(PATIENCE, () -> refused.get() >= calls - bound, "the calls past the bound refused");
                int threadsWhileWaiting = Thread.activeCount();
                long nodeThreads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("mailbox-node-node-w")).count();
                // its call and receive threads and its timer; a waiting receive holds none
                assertThat(nodeThreads).as("the node's threads while %s receives wait", bound)
                        .isLessThanOrEqualTo(1 + 8L * Runtime.getRuntime().availableProcessors());
                // the whole JVM too, loosely: other tests' threads may still be starting or ending, but a thread
                // for each of the thousand calls would show
                assertThat(threadsWhileWaiting - threadsBefore).as("threads added while %s receives wait", bound)
                        .isLessThan(calls / 4);
                assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
                assertThat(refused.get()).isEqualTo(calls - bound);
                assertThat(answered.get()).as("the waiting ones end with an empty answer").isEqualTo(bound);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a node drops its channel to a peer whose address changed: the mailbox's owner restarts elsewhere, "
            + "calls follow the route there, and the channel to the old address is closed once idle")
    void channelToAMovedPeerIsClosed() throws Exception {
        try (MailboxNode forwarder = MailboxNode.builder("node-fw").coordinator(client)
                .peerIdleClose(Duration.ofMillis(300)).start()) {
            RemoteMailbox<String> remote = RemoteMailbox.builder("moving@node-o", Codec.utf8())
                    .node(forwarder.address()).build();
            String oldAddress;
            try (MailboxNode owner = MailboxNode.builder("node-o").coordinator(client).start()) {
                owner.publish(InMemoryMailbox.builder("moving@node-o", Codec.bytes()).build());
                oldAddress = owner.address();
                remote.send("first"); // waits for the forwarder's route, then goes to the owner
                assertThat(forwarder.peerAddresses()).containsExactly(oldAddress);
            }
            try (MailboxNode moved = MailboxNode.builder("node-o").coordinator(client).start()) {
                assertThat(moved.address()).isNotEqualTo(oldAddress);
                moved.publish(InMemoryMailbox.builder("moving@node-o", Codec.bytes()).build());
                TestingCluster.await(PATIENCE, () -> forwarder.routingTable().orElseThrow().route("moving@node-o")
                        .map(r -> r.address().equals(moved.address())).orElse(false), "the route names the new address");
                remote.send("second");
                TestingCluster.await(PATIENCE, () -> !forwarder.peerAddresses().contains(oldAddress),
                        "the channel to the old address closed");
                assertThat(forwarder.peerAddresses()).as("the new address is the only peer").containsExactly(moved.address());
            } finally {
                remote.close();
            }
        }
    }
}
