package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.proto.data.HandleReply;
import dev.mailbox.coordination.proto.data.HandleRequest;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A RemoteMailbox straight to a node that hosts the mailbox (no coordinator): edges of the client's contract. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RemoteMailboxEdgeTest {

    @Test
    @DisplayName("a batch of one with a deduplication id is deduplicated as a batch, as on the hosted mailbox: "
            + "a later single send with the same id is still stored")
    void batchOfOneDeduplicatesAsABatch() {
        try (MailboxNode node = MailboxNode.builder("node-d").start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-d", Codec.bytes()).build();
             InMemoryMailbox<String> local = InMemoryMailbox.builder("local", Codec.utf8()).build()) {
            node.host(hosted);
            SendOptions once = SendOptions.defaults().withDeduplicationId("k");
            // what the contract gives on a local mailbox: message i of a batch goes under "k/i", a send under "k"
            local.sendBatch(List.of("x"), once);
            local.send("y", once);
            assertThat(local.approximateCount()).isEqualTo(2);

            try (RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-d", Codec.utf8())
                    .node(node.address()).build()) {
                String x = remote.sendBatch(List.of("x"), once).get(0);
                String y = remote.send("y", once);
                assertThat(y).as("the single send is a different send from the batch").isNotEqualTo(x);
                assertThat(hosted.approximateCount()).as("both stored, as on a local mailbox").isEqualTo(2);
            }
        }
    }

    @Test
    @DisplayName("a fenced view's acknowledgeBatch refuses fewer than 1 or more than 10 messages, like every batch")
    void fencedAcknowledgeBatchChecksItsSize() {
        try (MailboxNode node = MailboxNode.builder("node-f").start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-f", Codec.bytes()).build();
             RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-f", Codec.utf8())
                     .node(node.address()).build()) {
            node.host(hosted);
            Mailbox<String> view = remote.fenced(1);
            assertThatThrownBy(() -> view.acknowledgeBatch(List.of())).isInstanceOf(IllegalArgumentException.class);
            for (int i = 0; i < 11; i++) {
                remote.send("m" + i);
            }
            List<Message<String>> got = new java.util.ArrayList<>();
            while (got.size() < 11) {
                got.addAll(view.receive(ReceiveOptions.defaults().withMaxMessages(10)));
            }
            assertThatThrownBy(() -> view.acknowledgeBatch(got)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("batch size");
            assertThat(hosted.approximateCount()).as("nothing acknowledged by a refused batch").isEqualTo(11);
        }
    }

    @Test
    @DisplayName("an acknowledgement that took effect on the owner but whose reply was lost is not reported stale "
            + "when the retry on the next node finds it gone")
    void acknowledgeRetriedAfterItTookEffectIsNotReportedStale() throws Exception {
        try (MailboxNode node = MailboxNode.builder("node-a").start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-a", Codec.bytes()).build()) {
            node.host(hosted);
            ManagedChannel toNode = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            MailboxServiceGrpc.MailboxServiceBlockingStub direct = MailboxServiceGrpc.newBlockingStub(toNode)
                    .withDeadlineAfter(30, TimeUnit.SECONDS);
            AtomicInteger passedOn = new AtomicInteger();
            // a node that passes calls on to the owner; it drops the connection after passing an
            // acknowledgement on: the acknowledgement happened, the caller never hears of it
            Server lossy = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(new MailboxServiceGrpc.MailboxServiceImplBase() {
                        @Override
                        public void receive(ReceiveRequest r, StreamObserver<ReceiveReply> out) {
                            out.onNext(direct.receive(r));
                            out.onCompleted();
                        }

                        @Override
                        public void handle(HandleRequest r, StreamObserver<HandleReply> out) {
                            direct.handle(r);
                            passedOn.incrementAndGet();
                            out.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
                        }
                    }).build().start();
            try (RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-a", Codec.utf8())
                    .nodes(List.of("127.0.0.1:" + lossy.getPort(), node.address())).build()) {
                hosted.send("job".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                Message<String> m = remote.receive(ReceiveOptions.defaults()).get(0);

                Throwable thrown = catchThrowable(m::acknowledge);

                assertThat(passedOn).hasValue(1);
                assertThat(hosted.approximateCount()).as("the acknowledgement was made").isZero();
                assertThat(thrown).as("a handle that acknowledged the message is not reported stale")
                        .isNotInstanceOf(ReceiptHandleExpiredException.class);
            } finally {
                lossy.shutdownNow();
                toNode.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a receive abandoned by its caller (closed while waiting) stops waiting on the node: a message sent "
            + "afterwards is not delivered to no one, so its first real delivery is its first")
    void abandonedReceiveDoesNotConsumeADelivery() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (MailboxNode node = MailboxNode.builder("node-c").meterRegistry(registry).start();
             InMemoryMailbox<byte[]> deadLetters = InMemoryMailbox.builder("dead@node-c", Codec.bytes()).build();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-c", Codec.bytes())
                     .redrivePolicy(dev.mailbox.api.RedrivePolicy.of(1, deadLetters)).build()) {
            node.host(hosted);
            RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-c", Codec.utf8()).node(node.address())
                    .build();
            java.util.concurrent.CompletableFuture<List<Message<String>>> waiting =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> remote.receive(
                            ReceiveOptions.defaults().withWaitTime(java.time.Duration.ofSeconds(3))));
            long parked = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (waitingOn(registry) < 1) { // the receive waits on the node
                assertThat(System.nanoTime() - parked).as("the receive reached the node").isNegative();
                Thread.sleep(10);
            }
            remote.close();
            assertThat(waiting.get(5, TimeUnit.SECONDS)).as("closed while waiting: empty").isEmpty();
            // the cancellation reaches the node a moment after close() returns: give it up to 1 s to stop waiting
            // (a node that keeps waiting is still waiting after that: its wait is 3 s)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (waitingOn(registry) > 0 && System.nanoTime() - until < 0) {
                Thread.sleep(10);
            }

            hosted.send("job".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            // a receive still waiting on the node would take the message first and give it back (its first
            // delivery): this one would then meet it on its second and move it to the dead letters
            List<Message<byte[]>> got = hosted.receive(ReceiveOptions.defaults()
                    .withWaitTime(java.time.Duration.ofSeconds(5)));
            assertThat(deadLetters.approximateCount()).as("not dead-lettered without ever being handed to anyone")
                    .isZero();
            assertThat(got).hasSize(1);
            assertThat(got.get(0).deliveryCount()).as("its first delivery to a consumer").isEqualTo(1);
        }
    }

    /** The receives waiting on a node now, by its gauge (they hold no thread to find). */
    private static double waitingOn(SimpleMeterRegistry registry) {
        return registry.get("mailbox.node.receives.waiting").gauge().value();
    }

    @Test
    @DisplayName("a mailbox a node opened on a node-local (memory) backend keeps its messages past idleClose: "
            + "closing it would drop them, since opening it again starts an empty one")
    void idleCloseDoesNotDropANodeLocalMailbox() throws Exception {
        MailboxBackend memory = TestBackends.nodeLocalMemory();
        try (MailboxNode node = MailboxNode.builder("node-m").backend(memory)
                .idleClose(java.time.Duration.ofMillis(200)).start();
             RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-m", Codec.utf8()).node(node.address())
                     .build()) {
            remote.send("kept");
            assertThat(node.opened()).containsExactly("jobs@node-m");
            Thread.sleep(1_500); // idle for longer than idleClose

            assertThat(remote.approximateCount()).as("the message is still there").isEqualTo(1);
            assertThat(remote.receive(ReceiveOptions.defaults())).extracting(Message::body).containsExactly("kept");
        }
    }

    @Test
    @DisplayName("a call that says it came through a negative number of nodes is refused: forwarding counts up from"
            + " 0, and a negative count would let it be forwarded again and again")
    void negativeHopsRefused() {
        try (MailboxNode node = MailboxNode.builder("node-h").start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-h", Codec.bytes()).build()) {
            node.host(hosted);
            ManagedChannel toNode = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                MailboxServiceGrpc.MailboxServiceBlockingStub stub = MailboxServiceGrpc.newBlockingStub(toNode)
                        .withDeadlineAfter(30, TimeUnit.SECONDS);
                assertThatThrownBy(() -> stub.receive(ReceiveRequest.newBuilder().setMailbox("jobs@node-h")
                        .setMaxMessages(1).setVisibilityTimeoutMillis(30_000).setHops(-5).build()))
                        .isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                            assertThat(e.getStatus().getDescription()).contains("hops");
                        });
            } finally {
                toNode.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a bad receive is refused as bad even when the node is too busy to serve a waiting receive")
    void badReceiveOnABusyNodeIsInvalidNotBusy() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (MailboxNode node = MailboxNode.builder("node-b").maxWaitingReceives(1).meterRegistry(registry).start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@node-b", Codec.bytes()).build();
             RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@node-b", Codec.utf8()).node(node.address())
                     .build()) {
            node.host(hosted);
            java.util.concurrent.CompletableFuture<List<Message<String>>> waiting =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> remote.receive(
                            ReceiveOptions.defaults().withWaitTime(java.time.Duration.ofSeconds(20))));
            long parked = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (waitingOn(registry) < 1) { // the node's one waiting receive is taken
                assertThat(System.nanoTime() - parked).as("the receive reached the node").isNegative();
                Thread.sleep(10);
            }
            ManagedChannel toNode = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                MailboxServiceGrpc.MailboxServiceBlockingStub stub = MailboxServiceGrpc.newBlockingStub(toNode)
                        .withDeadlineAfter(30, TimeUnit.SECONDS);
                assertThatThrownBy(() -> stub.receive(ReceiveRequest.newBuilder().setMailbox("jobs@node-b")
                        .setMaxMessages(0).setVisibilityTimeoutMillis(30_000).setWaitMillis(1_000).build()))
                        .isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e ->
                                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
            } finally {
                toNode.shutdownNow();
            }
            hosted.send("wake".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            assertThat(waiting.get(30, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("wake");
        }
    }
}
