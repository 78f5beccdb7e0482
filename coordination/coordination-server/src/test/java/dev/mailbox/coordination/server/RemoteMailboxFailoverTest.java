package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.RemoteMailbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.SendReply;
import dev.mailbox.coordination.proto.data.SendRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RemoteMailboxFailoverTest {

    @Test
    @DisplayName("a RemoteMailbox given several nodes moves on when one dies; with one node the failure is retryable")
    void failover() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start()) {
            CoordinationClient client = cluster.client();
            try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).start();
                 MailboxNode b = MailboxNode.builder("b").coordinator(client).start();
                 MailboxNode c = MailboxNode.builder("c").coordinator(client).start()) {
                Mailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@owner", Codec.bytes()).build();
                owner.publish(hosted);
                for (MailboxNode n : List.of(b, c)) {
                    assertThat(n.routingTable().orElseThrow().await(t -> t.route("jobs@owner").isPresent(),
                            Duration.ofSeconds(10))).isTrue();
                }
                RemoteMailbox<String> viaBoth = RemoteMailbox.builder("jobs@owner", Codec.utf8())
                        .nodes(List.of(b.address(), c.address())).build();
                RemoteMailbox<String> viaB = RemoteMailbox.builder("jobs@owner", Codec.utf8()).node(b.address()).build();
                viaBoth.send("before");
                Message<String> first = viaBoth.receive(ReceiveOptions.defaults()).get(0);

                b.close();

                viaBoth.send("after");
                first.acknowledge(); // the handle travels through the other node to the same owner
                List<Message<String>> got = viaBoth.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
                assertThat(got).extracting(Message::body).containsExactly("after");
                got.get(0).acknowledge();
                assertThat(viaBoth.approximateCount()).isZero();
                assertThatThrownBy(() -> viaB.send("lost")).isInstanceOf(MailboxUnavailableException.class)
                        .matches(e -> ((MailboxUnavailableException) e).isRetryable());
                assertThat(hosted.approximateCount()).as("nothing stored by the failed call").isZero();
                assertThatThrownBy(() -> RemoteMailbox.builder("x", Codec.utf8()).nodes(List.of()))
                        .isInstanceOf(IllegalArgumentException.class);
                viaBoth.close();
                viaB.close();
                hosted.close();
            }
        }
    }
    @Test
    @DisplayName("a send whose reply is lost is retried on the next node and stored once; the owner answers a repeated request id with the first reply")
    void lostReplyIsNotStoredTwice() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start()) {
            CoordinationClient client = cluster.client();
            try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).start();
                 MailboxNode b = MailboxNode.builder("b").coordinator(client).start()) {
                Mailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@owner", Codec.bytes()).build();
                owner.publish(hosted);
                assertThat(b.routingTable().orElseThrow().await(t -> t.route("jobs@owner").isPresent(),
                        Duration.ofSeconds(10))).isTrue();
                ManagedChannel toB = NettyChannelBuilder.forTarget(b.address()).usePlaintext().build();
                MailboxServiceGrpc.MailboxServiceBlockingStub viaB = MailboxServiceGrpc.newBlockingStub(toB)
                        .withDeadlineAfter(10, TimeUnit.SECONDS);
                // a node that passes the send on and then drops the connection: the effect happened,
                // the caller never hears of it
                LinkedBlockingQueue<SendRequest> passedOn = new LinkedBlockingQueue<>();
                LinkedBlockingQueue<String> storedAs = new LinkedBlockingQueue<>();
                Server lossy = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                        .addService(new MailboxServiceGrpc.MailboxServiceImplBase() {
                            @Override
                            public void send(SendRequest r, StreamObserver<SendReply> out) {
                                passedOn.add(r);
                                storedAs.addAll(viaB.send(r).getMessageIdsList());
                                out.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
                            }
                        }).build().start();
                RemoteMailbox<String> remote = RemoteMailbox.builder("jobs@owner", Codec.utf8())
                        .nodes(List.of("127.0.0.1:" + lossy.getPort(), b.address())).build();
                try {
                    String id = remote.send("once");
                    assertThat(passedOn).hasSize(1);
                    assertThat(passedOn.peek().getRequestId()).isNotEmpty();
                    assertThat(id).isEqualTo(storedAs.poll());
                    assertThat(hosted.approximateCount()).as("stored once, though sent twice").isEqualTo(1);

                    // the same request id again, straight to a node: the first reply, nothing stored
                    SendRequest again = passedOn.peek();
                    assertThat(viaB.send(again).getMessageIdsList()).containsExactly(id);
                    // a new id is a new send
                    String other = viaB.send(again.toBuilder().setRequestId("another").build()).getMessageIds(0);
                    assertThat(other).isNotEqualTo(id);
                    assertThat(hosted.approximateCount()).isEqualTo(2);
                    assertThatThrownBy(() -> viaB.send(again.toBuilder().setRequestId("r".repeat(129)).build()))
                            .isInstanceOf(StatusRuntimeException.class)
                            .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("request id");
                    assertThat(hosted.approximateCount()).isEqualTo(2);

                    // repeats racing each other: one stores, the others wait for its reply
                    ExecutorService senders = Executors.newFixedThreadPool(8);
                    for (int round = 0; round < 10; round++) {
                        SendRequest burst = again.toBuilder().setRequestId("burst-" + round).build();
                        CountDownLatch go = new CountDownLatch(1);
                        List<Future<List<String>>> replies = new ArrayList<>();
                        for (int i = 0; i < 8; i++) {
                            replies.add(senders.submit(() -> {
                                go.await();
                                return viaB.send(burst).getMessageIdsList();
                            }));
                        }
                        go.countDown();
                        Set<List<String>> answers = new HashSet<>();
                        for (Future<List<String>> f : replies) {
                            answers.add(f.get(10, TimeUnit.SECONDS));
                        }
                        assertThat(answers).as("round %s", round).hasSize(1);
                    }
                    senders.shutdown();
                    assertThat(hosted.approximateCount()).isEqualTo(12);
                    hosted.purge();
                    assertThat(remote.send("after")).isNotEmpty();

                    List<Message<String>> got = remote.receive(ReceiveOptions.defaults().withMaxMessages(10));
                    assertThat(got).extracting(Message::body).containsExactly("after");
                } finally {
                    remote.close();
                    lossy.shutdownNow();
                    toB.shutdownNow();
                    hosted.close();
                }
            }
        }
    }
}
