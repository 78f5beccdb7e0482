package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.CreateNamespaceRequest;
import dev.mailbox.coordination.proto.RegisterNodeRequest;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import dev.mailbox.coordination.server.internal.Outcome;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.jspecify.annotations.Nullable;

/**
 * One rule, one place: for every input, the client (before it sends anything), the control plane (before
 * the log) and the state machine (when the command is applied) all accept it, or all refuse it with the
 * same message. Inputs are drawn from characters and lengths on both sides of each rule.
 */
class LimitsAgreementTest {

    private static TestingCluster cluster;
    private static CoordinationClient client;
    private static ManagedChannel channel;
    private static final AtomicLong SEQ = new AtomicLong();

    @BeforeContainer
    static void start() {
        cluster = TestingCluster.start(1);
        cluster.awaitLeader(Duration.ofSeconds(30));
        client = cluster.client();
        channel = NettyChannelBuilder.forTarget(cluster.endpoint("n1")).usePlaintext().build();
    }

    @AfterContainer
    static void stop() {
        channel.shutdownNow();
        cluster.close();
    }

    @Provide
    Arbitrary<String> token() {
        Arbitrary<String> plain = Arbitraries.strings().withChars("abcXYZ019._-@ :/é").ofMinLength(0).ofMaxLength(12);
        Arbitrary<String> lengthy = Arbitraries.integers().between(70, 300).map(n -> "a".repeat(n));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(8, plain), net.jqwik.api.Tuple.of(1, lengthy));
    }

    @Provide
    Arbitrary<Long> ttl() {
        return Arbitraries.of(0L, 1L, 999L, 1_000L, 5_000L, 600_000L, 600_001L, -5L);
    }

    @Property(tries = 150)
    void acquire(@ForAll("token") String namespace, @ForAll("token") String node, @ForAll("token") String runner,
                 @ForAll("token") String host, @ForAll("ttl") long ttl) {
        // a fresh mailbox each try (unless the namespace part is malformed anyway), and never the reserved one
        String mailbox = namespace.replace("_nodes", "nodes") + SEQ.incrementAndGet() + (node.isEmpty() ? "" : "@" + node);
        String address = host + ":7000";
        String viaClient = refusal(() -> client.leases().acquire(mailbox, new LeaseHolder(runner, "n1", address),
                Duration.ofMillis(ttl)));
        String viaControlPlane = status(() -> stub().acquireLease(AcquireLeaseRequest.newBuilder().setMailboxId(mailbox)
                .setRunnerId(runner).setNodeId("n1").setAddress(address).setTtlMillis(ttl).build()));
        String viaStateMachine = applied(new Command.Acquire(mailbox, runner, "n1", address, ttl, 1));
        agree(viaClient, viaControlPlane, viaStateMachine);
    }

    @Property(tries = 100)
    void createNamespace(@ForAll("token") String name, @ForAll("ttl") long ttl, @ForAll("token") String labelKey,
                         @ForAll("token") String labelValue) {
        String unique = name.isEmpty() ? name : name + SEQ.incrementAndGet();
        Map<String, String> labels = labelKey.isEmpty() && labelValue.isEmpty() ? Map.of() : Map.of(labelKey, labelValue);
        long heartbeat = ttl / 3;
        String viaClient = refusal(() -> client.namespaces().create(unique, ttl == 0 ? null
                : LeasePolicy.ofMillis(ttl, heartbeat, 0), labels));
        String viaControlPlane = status(() -> stub().createNamespace(CreateNamespaceRequest.newBuilder().setName(unique)
                .setTtlMillis(ttl).setHeartbeatMillis(ttl == 0 ? 0 : heartbeat).putAllLabels(labels).build()));
        String viaStateMachine = applied(new Command.CreateNamespace(unique, ttl, ttl == 0 ? 0 : heartbeat, 0,
                new TreeMap<>(labels), 1));
        agree(viaClient, viaControlPlane, viaStateMachine);
    }

    @Property(tries = 100)
    void registerNode(@ForAll("token") String id, @ForAll("token") String host, @ForAll("token") String capability,
                      @ForAll("ttl") long ttl) {
        String unique = id.isEmpty() ? id : id + SEQ.incrementAndGet();
        String address = host + ":7100";
        List<String> capabilities = capability.isEmpty() ? List.of() : List.of(capability);
        NodeInfo node = new NodeInfo(unique, address, "", "", capabilities, Map.of(), false, 0);
        String viaClient = refusal(() -> client.nodes().register(node, Duration.ofMillis(ttl)));
        String viaControlPlane = status(() -> stub().registerNode(RegisterNodeRequest.newBuilder()
                .setNode(dev.mailbox.coordination.proto.NodeInfo.newBuilder().setNodeId(unique).setAddress(address)
                        .addAllCapabilities(capabilities)).setTtlMillis(ttl).setRequestId("r").build()));
        String viaStateMachine = applied(new Command.RegisterNode(unique, address, "", "", capabilities, new TreeMap<>(),
                ttl, "r", 1));
        agree(viaClient, viaControlPlane, viaStateMachine);
    }

    @Property(tries = 100)
    void createQueue(@ForAll("token") String name, @ForAll("token") String attribute, @ForAll("token") String value,
                     @ForAll("token") String tagKey, @ForAll("token") String tagValue) {
        String unique = name.isEmpty() ? name : name + SEQ.incrementAndGet();
        Map<String, String> attributes = attribute.isEmpty() && value.isEmpty() ? Map.of() : Map.of(attribute, value);
        Map<String, String> tags = tagKey.isEmpty() && tagValue.isEmpty() ? Map.of() : Map.of(tagKey, tagValue);
        String viaClient = refusal(() -> client.queues().createIfAbsent(new dev.mailbox.coordination.QueueInfo(unique,
                attributes, tags, 0, 0)));
        String viaControlPlane = status(() -> stub().createQueue(dev.mailbox.coordination.proto.CreateQueueRequest
                .newBuilder().setQueue(dev.mailbox.coordination.proto.QueueRecord.newBuilder().setName(unique)
                        .putAllAttributes(attributes).putAllTags(tags)).build()));
        String viaStateMachine = applied(new Command.CreateQueue(new dev.mailbox.coordination.QueueInfo(unique,
                attributes, tags, 0, 0), 1));
        agree(viaClient, viaControlPlane, viaStateMachine);
    }

    @Property(tries = 100)
    void updateQueue(@ForAll("token") String name, @ForAll("token") String attribute, @ForAll("token") String tagKey,
                     @ForAll("token") String removed) {
        Map<String, String> set = attribute.isEmpty() ? Map.of() : Map.of(attribute, "v");
        Map<String, String> tags = tagKey.isEmpty() ? Map.of() : Map.of(tagKey, "v");
        java.util.Set<String> untag = removed.isEmpty() ? java.util.Set.of() : java.util.Set.of(removed);
        String viaClient = refusal(() -> client.queues().update(name, new dev.mailbox.coordination.QueueChange(set,
                java.util.Set.of(), tags, untag, 0)));
        String viaControlPlane = status(() -> stub().updateQueue(dev.mailbox.coordination.proto.UpdateQueueRequest
                .newBuilder().setName(name).putAllSetAttributes(set).putAllSetTags(tags).addAllRemovedTags(untag)
                .build()));
        String viaStateMachine = applied(new Command.UpdateQueue(name, new TreeMap<>(set), new java.util.TreeSet<>(),
                new TreeMap<>(tags), new java.util.TreeSet<>(untag), 0, 1));
        agree(viaClient, viaControlPlane, viaStateMachine);
    }

    private static ControlPlaneGrpc.ControlPlaneBlockingStub stub() {
        return ControlPlaneGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static void agree(@Nullable String viaClient, @Nullable String viaControlPlane,
                              @Nullable String viaStateMachine) {
        assertThat(viaControlPlane).as("the control plane agrees with the client").isEqualTo(viaClient);
        assertThat(viaStateMachine).as("the state machine agrees with the client").isEqualTo(viaClient);
    }

    /** @return the client's refusal (an IllegalArgumentException before any call), or null if it accepted */
    private static @Nullable String refusal(Supplier<?> call) {
        try {
            call.get();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        } catch (CoordinationException e) {
            assertThat(e.reason()).as("a well-formed call is never INVALID_ARGUMENT: %s", e.getMessage())
                    .isNotEqualTo(CoordinationException.Reason.INVALID_ARGUMENT);
            return null; // well-formed, refused for another reason (such as a taken mailbox)
        }
    }

    /** @return the control plane's INVALID_ARGUMENT description, or null if it accepted */
    private static @Nullable String status(Supplier<?> call) {
        try {
            call.get();
            return null;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT ? e.getStatus().getDescription() : null;
        }
    }

    /** @return the state machine's INVALID_ARGUMENT message for the command on a fresh table, or null */
    private static @Nullable String applied(Command command) {
        Outcome o = new LeaseTable().apply(1, 1, command);
        return o.code() == Outcome.Code.INVALID_ARGUMENT ? o.message() : null;
    }
}
