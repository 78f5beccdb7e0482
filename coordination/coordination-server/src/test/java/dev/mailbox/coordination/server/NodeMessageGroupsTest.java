package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.coordination.proto.data.SendRequest;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.ManualClock;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Message groups on the data plane (issue 31), beyond what the kit checks through a node
 * ({@link RemoteMailboxContractTest}): how a node knows a mailbox it opens is FIFO, what it does with a client that
 * sends no group id (data-plane revision 1), how a send's request id and content-based deduplication meet, and
 * fencing of a FIFO mailbox across a change of lease.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeMessageGroupsTest {

    private static final ReceiveOptions LONG = ReceiveOptions.defaults().withMaxMessages(10)
            .withVisibilityTimeout(Duration.ofMinutes(10));

    private static SendOptions group(String id) {
        return SendOptions.defaults().withGroupId(id);
    }

    @Test
    @DisplayName("a node opens a mailbox whose name ends with .fifo as a FIFO mailbox and any other as a fair standard"
            + " one; a RemoteMailbox says which, and carries group ids and sequence numbers both ways")
    void kindFromTheName() {
        assertThat(CoordinationLimits.isFifoMailbox("jobs.fifo@node-n")).isTrue();
        assertThat(CoordinationLimits.isFifoMailbox("jobs.fifo")).isTrue();
        assertThat(CoordinationLimits.isFifoMailbox("jobs@node.fifo")).as("the node's name is not the mailbox's").isFalse();
        assertThat(CoordinationLimits.isFifoMailbox("jobs@node-n")).isFalse();
        try (MailboxNode node = MailboxNode.builder("node-n").backend(TestBackends.nodeLocalMemory()).start();
             RemoteMailbox<String> fifo = RemoteMailbox.builder("jobs.fifo@node-n", Codec.utf8())
                     .node(node.address()).build();
             RemoteMailbox<String> standard = RemoteMailbox.builder("jobs@node-n", Codec.utf8())
                     .node(node.address()).build()) {
            MailboxCapabilities f = fifo.capabilities();
            assertThat(f.fifo()).isTrue();
            assertThat(f.fairness()).isFalse();
            assertThat(f.contentBasedDeduplication()).isFalse();
            assertThat(f.lateAcknowledge()).isTrue();
            assertThat(f.holdsRuns()).as("the hosted memory mailbox holds runs").isTrue();
            assertThat(f.sharedDeliveryState()).isTrue();
            MailboxCapabilities s = standard.capabilities();
            assertThat(s.fifo()).isFalse();
            assertThat(s.fairness()).isTrue();
            assertThat(s.holdsRuns()).isFalse();

            assertThatThrownBy(() -> fifo.send("no group")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("jobs.fifo@node-n").hasMessageContaining("group id");
            assertThat(fifo.approximateCount()).as("the refused send stored nothing").isZero();

            fifo.send("a1", group("a"));
            fifo.send("a2", group("a"));
            fifo.send("b1", group("b"));
            List<Message<String>> got = fifo.receive(LONG);
            assertThat(got).extracting(Message::body).containsExactly("a1", "a2", "b1");
            assertThat(got).extracting(Message::groupId).containsExactly("a", "a", "b");
            assertThat(got).allSatisfy(m -> assertThat(m.sequenceNumber()).matches("[0-9]{20}"));
            assertThat(got.get(1).sequenceNumber()).isGreaterThan(got.get(0).sequenceNumber());

            standard.send("t1", group("tenant-1"));
            Message<String> t1 = standard.receive(LONG).get(0);
            assertThat(t1.groupId()).as("a fair mailbox's tenant").isEqualTo("tenant-1");
            assertThat(t1.sequenceNumber()).as("none on a standard mailbox, as SQS").isNull();
        }
    }

    @Test
    @DisplayName("a backend that opens a .fifo id as a standard mailbox, or another id as a FIFO one, is refused,"
            + " naming the rule, and the node keeps nothing open")
    void kindMismatchRefused() {
        MailboxBackend alwaysStandard = new MailboxBackend() {
            @Override
            public Mailbox<byte[]> open(String mailboxId) {
                return InMemoryMailbox.builder(mailboxId, Codec.bytes()).build();
            }

            @Override
            public boolean shared() {
                return false;
            }

            @Override
            public String toString() {
                return "standard-only";
            }
        };
        MailboxBackend alwaysFifo = new MailboxBackend() {
            @Override
            public Mailbox<byte[]> open(String mailboxId) {
                return InMemoryMailbox.builder(mailboxId, Codec.bytes()).fifo(FifoOptions.defaults()).build();
            }

            @Override
            public boolean shared() {
                return false;
            }
        };
        try (MailboxNode standardOnly = MailboxNode.builder("node-s").backend(alwaysStandard).start();
             MailboxNode fifoOnly = MailboxNode.builder("node-f").backend(alwaysFifo).start();
             RemoteMailbox<String> namedFifo = RemoteMailbox.builder("jobs.fifo@node-s", Codec.utf8())
                     .node(standardOnly.address()).build();
             RemoteMailbox<String> namedStandard = RemoteMailbox.builder("jobs@node-f", Codec.utf8())
                     .node(fifoOnly.address()).build()) {
            assertThatThrownBy(() -> namedFifo.send("x", group("a"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("jobs.fifo@node-s").hasMessageContaining("FIFO mailbox by its name")
                    .hasMessageContaining("standard-only");
            assertThatThrownBy(namedFifo::capabilities).isInstanceOf(IllegalArgumentException.class);
            assertThat(standardOnly.opened()).isEmpty();
            assertThatThrownBy(() -> namedStandard.send("x", group("a"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("standard mailbox by its name");
            assertThat(fifoOnly.opened()).isEmpty();
        }
    }

    @Test
    @DisplayName("a client that sends no group id (data-plane revision 1) is refused by a FIFO mailbox with nothing"
            + " stored, and served by a standard one as before")
    void revisionOneClient() {
        try (MailboxNode node = MailboxNode.builder("node-r").backend(TestBackends.nodeLocalMemory()).start()) {
            ManagedChannel channel = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                MailboxServiceGrpc.MailboxServiceBlockingStub stub = MailboxServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(30, TimeUnit.SECONDS);
                SendRequest old = SendRequest.newBuilder().setMailbox("jobs.fifo@node-r").addBodies(bytes("x"))
                        .setRequestId("client-1:1").build();
                assertThatThrownBy(() -> stub.send(old)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("group id");
                });
                assertThat(node.opened()).contains("jobs.fifo@node-r");

                stub.send(old.toBuilder().setMailbox("jobs@node-r").build());
                ReceiveReply reply = stub.receive(ReceiveRequest.newBuilder().setMailbox("jobs@node-r")
                        .setMaxMessages(10).setVisibilityTimeoutMillis(60_000).build());
                assertThat(reply.getMessagesList()).singleElement().satisfies(d -> {
                    assertThat(d.getBody().toStringUtf8()).isEqualTo("x");
                    assertThat(d.getGroupId()).isEmpty();
                    assertThat(d.getSequenceNumber()).isEmpty();
                });
                try (RemoteMailbox<String> fifo = RemoteMailbox.builder("jobs.fifo@node-r", Codec.utf8())
                        .node(node.address()).build()) {
                    assertThat(fifo.approximateCount()).isZero();
                }
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a request id the client made up stores a FIFO send once however often it is retried; where the"
            + " mailbox deduplicates by content, the content decides instead, and a caller's own id still wins")
    void requestIdsAndContent() {
        try (MailboxNode node = MailboxNode.builder("node-c").start();
             InMemoryMailbox<byte[]> plain = InMemoryMailbox.builder("plain.fifo@node-c", Codec.bytes())
                     .fifo(FifoOptions.defaults()).build();
             InMemoryMailbox<byte[]> content = InMemoryMailbox.builder("content.fifo@node-c", Codec.bytes())
                     .fifo(FifoOptions.defaults().withContentBasedDeduplication(true)).build()) {
            node.host(plain).host(content);
            ManagedChannel channel = NettyChannelBuilder.forTarget(node.address()).usePlaintext().build();
            try {
                MailboxServiceGrpc.MailboxServiceBlockingStub stub = MailboxServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(30, TimeUnit.SECONDS);
                SendRequest send = SendRequest.newBuilder().setMailbox("plain.fifo@node-c").addBodies(bytes("same"))
                        .setGroupId("a").setRequestId("client:1").setRequestIdGenerated(true).build();
                String first = stub.send(send).getMessageIds(0);
                assertThat(stub.send(send).getMessageIds(0)).as("a retry of the same send").isEqualTo(first);
                assertThat(stub.send(send.toBuilder().setRequestId("client:2").build()).getMessageIds(0))
                        .as("another send of the same body: no content-based deduplication here").isNotEqualTo(first);
                assertThat(plain.approximateCount()).isEqualTo(2);

                try (RemoteMailbox<String> remote = RemoteMailbox.builder("content.fifo@node-c", Codec.utf8())
                        .node(node.address()).build()) {
                    assertThat(remote.capabilities().contentBasedDeduplication()).isTrue();
                }
                SendRequest byContent = send.toBuilder().setMailbox("content.fifo@node-c").build();
                String kept = stub.send(byContent).getMessageIds(0);
                assertThat(stub.send(byContent.toBuilder().setRequestId("client:2").build()).getMessageIds(0))
                        .as("the same body under another made-up id: one message, by content").isEqualTo(kept);
                assertThat(stub.send(byContent.toBuilder().setRequestId("caller-id").setRequestIdGenerated(false)
                        .build()).getMessageIds(0)).as("a caller's own id wins over the content").isNotEqualTo(kept);
                SendRequest batch = byContent.toBuilder().clearBodies().addBodies(bytes("p")).addBodies(bytes("p"))
                        .setBatch(true).setRequestId("client:3").build();
                List<String> ids = stub.send(batch).getMessageIdsList();
                assertThat(ids.get(1)).as("a batch repeating a body, by content").isEqualTo(ids.get(0));
                assertThat(content.approximateCount()).isEqualTo(3);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    @DisplayName("a FIFO mailbox under a new lease: the old holder's receives and acknowledgements stay refused, and"
            + " its group goes on from the message the old holder had in flight, through a node that forwards")
    void fencedAcrossALeaseChange() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start();
             InMemoryMailbox<byte[]> hosted = InMemoryMailbox.builder("jobs.fifo@node-a", Codec.bytes())
                     .fifo(FifoOptions.defaults()).timeSource(clock).build()) {
            CoordinationClient client = cluster.client();
            try (MailboxNode a = MailboxNode.builder("node-a").coordinator(client).start();
                 MailboxNode b = MailboxNode.builder("node-b").coordinator(client).start();
                 RemoteMailbox<String> remote = RemoteMailbox.builder("jobs.fifo@node-a", Codec.utf8())
                         .node(b.address()).build()) {
                a.host(hosted);
                Lease first = client.leases().acquire("jobs.fifo@node-a", new LeaseHolder("runner-1", "node-a",
                        a.address()), Duration.ofMinutes(1));
                awaitRoute(b, first);
                remote.sendBatch(List.of("a1", "a2"), group("a"));
                Mailbox<String> old = remote.fenced(first.epoch());
                Message<String> a1 = old.receive(LONG.withMaxMessages(1)).get(0);
                assertThat(a1.body()).isEqualTo("a1");

                client.leases().release(first);
                Lease second = client.leases().acquire("jobs.fifo@node-a", new LeaseHolder("runner-2", "node-a",
                        a.address()), Duration.ofMinutes(1));
                assertThat(second.epoch()).isGreaterThan(first.epoch());
                awaitRoute(b, second);
                Mailbox<String> now = remote.fenced(second.epoch());
                assertThat(now.receive(LONG)).as("group a waits for the old holder's a1").isEmpty();

                assertThatThrownBy(() -> old.receive(LONG)).isInstanceOf(FencedException.class);
                assertThatThrownBy(a1::acknowledge).isInstanceOf(FencedException.class);
                assertThatThrownBy(a1::nack).isInstanceOf(FencedException.class);
                assertThat(hosted.approximateCount()).as("nothing the old holder tried took effect").isEqualTo(2);

                clock.advance(Duration.ofMinutes(10)); // a1's visibility ends: back at its group's head
                List<Message<String>> again = now.receive(LONG);
                assertThat(again).extracting(Message::body).containsExactly("a1", "a2");
                assertThat(again.get(0).deliveryCount()).isEqualTo(2);
                assertThat(again.get(0).sequenceNumber()).isEqualTo(a1.sequenceNumber());
                assertThatThrownBy(() -> old.receive(LONG)).as("still refused").isInstanceOf(FencedException.class);
                now.acknowledgeBatch(again);
                assertThat(hosted.approximateCount()).isZero();
            }
        }
    }

    private static void awaitRoute(MailboxNode node, Lease lease) throws InterruptedException {
        assertThat(node.routingTable().orElseThrow().await(t -> t.route(lease.mailboxId())
                .map(r -> r.leaseId() == lease.leaseId()).orElse(false), Duration.ofSeconds(10)))
                .as("node %s learns the route of lease %d", node.id(), lease.leaseId()).isTrue();
    }

    private static ByteString bytes(String s) {
        return ByteString.copyFrom(s.getBytes(StandardCharsets.UTF_8));
    }
}
