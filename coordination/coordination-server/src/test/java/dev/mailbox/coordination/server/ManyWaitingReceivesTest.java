package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.proto.data.ReceiveReply;
import dev.mailbox.coordination.proto.data.ReceiveRequest;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node that holds many more waiting receives than it has threads, through a forwarding node: sized for CI
 * (600, past the old limit of 256); the scale harness (NodeWaitersHarness in benchmarks) runs 10,000.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ManyWaitingReceivesTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    @DisplayName("600 receives waiting at once through a forwarding node (more than the old limit of 256): none "
            + "refused, the owner holds them on a bounded set of threads, a send is answered meanwhile, and every "
            + "message sent reaches a waiter (no wake-up missed)")
    void manyWaitersNoMissedWakeUp() throws Exception {
        int mailboxes = 10;
        int perMailbox = 60;
        int waiters = mailboxes * perMailbox;
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
            try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).meterRegistry(registry).start();
                 MailboxNode forwarder = MailboxNode.builder("fwd").coordinator(client).start()) {
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < mailboxes; i++) {
                    String id = "w" + i + "@owner";
                    owner.publish(InMemoryMailbox.builder(id, Codec.bytes()).build());
                    ids.add(id);
                }
                TestingCluster.await(PATIENCE, () -> ids.stream().allMatch(id ->
                        forwarder.routingTable().orElseThrow().route(id).isPresent()), "the forwarder has the routes");

                ManagedChannel channel = NettyChannelBuilder.forTarget(forwarder.address()).usePlaintext().build();
                AtomicInteger refused = new AtomicInteger();
                AtomicInteger failed = new AtomicInteger();
                Set<String> received = ConcurrentHashMap.newKeySet();
                CountDownLatch answered = new CountDownLatch(waiters);
                try {
                    MailboxServiceGrpc.MailboxServiceStub stub = MailboxServiceGrpc.newStub(channel);
                    long threadsBefore = threadsNamed("mailbox-node-owner-");
                    for (int i = 0; i < waiters; i++) {
                        ReceiveRequest wait = ReceiveRequest.newBuilder().setMailbox(ids.get(i % mailboxes))
                                .setMaxMessages(1).setVisibilityTimeoutMillis(60_000).setWaitMillis(20_000).build();
                        stub.withDeadlineAfter(60, TimeUnit.SECONDS).receive(wait, new StreamObserver<>() {
                            @Override
                            public void onNext(ReceiveReply reply) {
                                reply.getMessagesList().forEach(d -> received.add(d.getBody()
                                        .toString(StandardCharsets.UTF_8)));
                            }

                            @Override
                            public void onError(Throwable t) {
                                if (Status.fromThrowable(t).getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                                    refused.incrementAndGet();
                                } else {
                                    failed.incrementAndGet();
                                }
                                answered.countDown();
                            }

                            @Override
                            public void onCompleted() {
                                answered.countDown();
                            }
                        });
                    }
                    // every receive reached the owner and waits there (its gauge counts them)
                    TestingCluster.await(PATIENCE, () -> waitingOn(registry) == waiters || refused.get() > 0,
                            "the receives wait on the owner");
                    assertThat(refused.get()).as("receives refused").isZero();
                    assertThat(waitingOn(registry)).isEqualTo(waiters);
                    long ownerThreads = threadsNamed("mailbox-node-owner-");
                    assertThat(ownerThreads).as("the owner's threads while %s receives wait there", waiters)
                            .isLessThanOrEqualTo(threadsBefore + 8L * Runtime.getRuntime().availableProcessors());

                    // a send through the forwarder is answered while they wait
                    try (RemoteMailbox<String> sender = RemoteMailbox.builder(ids.get(0), Codec.utf8())
                            .node(forwarder.address()).callTimeout(Duration.ofSeconds(5)).build()) {
                        long start = System.nanoTime();
                        for (int i = 0; i < waiters; i++) {
                            // one message for each waiter, sent through the forwarder to its mailbox
                            if (i % mailboxes == 0) {
                                sender.send("m" + i);
                            } else {
                                try (RemoteMailbox<String> other = RemoteMailbox.builder(ids.get(i % mailboxes),
                                        Codec.utf8()).channel(channel).build()) {
                                    other.send("m" + i);
                                }
                            }
                        }
                        long sendMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                        assertThat(sendMillis / waiters).as("mean send time (ms) while %s receives wait", waiters)
                                .isLessThan(200);
                    }
                    assertThat(answered.await(30, TimeUnit.SECONDS)).as("every waiter answered").isTrue();
                    assertThat(failed.get()).as("receives failed").isZero();
                    assertThat(received).as("every message reached a waiter").hasSize(waiters);
                } finally {
                    channel.shutdownNow();
                }
            }
        }
    }

    /** The receives waiting on the owner now, by its gauge; -1 without one. */
    private static long waitingOn(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.Gauge g = registry.find("mailbox.node.receives.waiting").gauge();
        return g == null ? -1 : (long) g.value();
    }
}
