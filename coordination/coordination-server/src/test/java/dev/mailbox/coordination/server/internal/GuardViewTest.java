package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.LeaseReply;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Guard decides whose lease a renewal or release names from the answering coordinator's own applied
 * state. A follower that has not yet applied a grant (it lags the leader by a few entries) must not let
 * another principal release or renew that lease: it sends the call back UNAVAILABLE, so that the client
 * retries where the lease is known (the leader), instead of forwarding it unchecked.
 */
class GuardViewTest {

    @TempDir
    Path dir;

    /** What the answering coordinator has applied for the mailbox (a lagging follower: an older lease, or none). */
    private final AtomicReference<Optional<Lease>> local = new AtomicReference<>(Optional.empty());
    private final List<String> reached = new CopyOnWriteArrayList<>();
    /** Whether the answering coordinator leads. */
    private final java.util.concurrent.atomic.AtomicBoolean leads = new java.util.concurrent.atomic.AtomicBoolean();
    private Server server;
    private ManagedChannel channel;
    private String r1Token;
    private String r2Token;

    @BeforeEach
    void start() throws Exception {
        r1Token = dev.mailbox.coordination.server.Access.newToken();
        r2Token = dev.mailbox.coordination.server.Access.newToken();
        Path tokens = Files.writeString(dir.resolve("tokens"), AccessPolicy.tokenLine("r1", r1Token) + "\n"
                + AccessPolicy.tokenLine("r2", r2Token) + "\n");
        Path rules = Files.writeString(dir.resolve("rules"), "r1 runner a\nr2 runner a\n");
        AccessPolicy policy = new AccessPolicy(tokens, rules);
        ControlPlaneGrpc.ControlPlaneImplBase service = new ControlPlaneGrpc.ControlPlaneImplBase() {
            @Override
            public void releaseLease(ReleaseLeaseRequest r, StreamObserver<LeaseReply> out) {
                reached.add("release " + r.getLeaseId()); // the real service would forward it to the leader
                out.onNext(LeaseReply.getDefaultInstance());
                out.onCompleted();
            }

            @Override
            public void renewLease(RenewLeaseRequest r, StreamObserver<LeaseReply> out) {
                reached.add("renew " + r.getLeaseId());
                out.onNext(LeaseReply.getDefaultInstance());
                out.onCompleted();
            }
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(service, new Guard(policy, m -> local.get(), leads::get),
                        new Caller(policy)))
                .build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
    }

    private ControlPlaneGrpc.ControlPlaneBlockingStub as(String token) {
        Metadata h = new Metadata();
        h.put(dev.mailbox.coordination.internal.Tls.AUTHORIZATION, "Bearer " + token);
        return ControlPlaneGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h));
    }

    private static Lease lease(long leaseId, String runner, long epoch, LeaseState state) {
        return new Lease(leaseId, "a@m1", runner, "node-a", "127.0.0.1:9", PartitionMap.partition("a@m1"), epoch, state,
                10_000, 1, 0);
    }

    @Test
    @DisplayName("once up to date, the Guard refuses r2 releasing r1's lease")
    void upToDateViewRefuses() {
        local.set(Optional.of(lease(40, "r1", 3, LeaseState.ACTIVE)));
        assertThatThrownBy(() -> as(r2Token).releaseLease(ReleaseLeaseRequest.newBuilder().setMailboxId("a@m1")
                .setLeaseId(40).setEpoch(3).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThat(reached).isEmpty();
    }

    @Test
    @DisplayName("a coordinator that has not applied r1's grant yet does not let r2 release (or renew) it")
    void laggingViewDoesNotLetAnotherPrincipalThrough() {
        // r1 holds a@m1 as lease 40, epoch 3 (r2 read it from the leader: a runner may read its namespace).
        // This coordinator still has r2's own earlier lease, which ended (lease 12, epoch 2)...
        local.set(Optional.of(lease(12, "r2", 2, LeaseState.RELEASED)));
        for (Runnable call : List.<Runnable>of(
                () -> as(r2Token).releaseLease(ReleaseLeaseRequest.newBuilder().setMailboxId("a@m1").setLeaseId(40)
                        .setEpoch(3).build()),
                () -> as(r2Token).renewLease(RenewLeaseRequest.newBuilder().setMailboxId("a@m1").setLeaseId(40)
                        .setEpoch(3).build()))) {
            assertThatThrownBy(call::run).as("sent back to be retried where the lease is known")
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        }
        // ...or none at all
        local.set(Optional.empty());
        assertThatThrownBy(() -> as(r2Token).releaseLease(ReleaseLeaseRequest.newBuilder().setMailboxId("a@m1")
                .setLeaseId(40).setEpoch(3).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(reached).as("writes naming r1's lease that passed the Guard (and would reach the leader)").isEmpty();
    }

    @Test
    @DisplayName("a lagging follower still passes on a renewal of the caller's own lease it knows by id, and the"
            + " leader passes on what it does not know to the state machine, which refuses a wrong id or epoch")
    void ownLeaseAndLeaderPassThrough() {
        // r1 re-acquired its lease 40 at epoch 4; this follower has applied epoch 3 of it
        local.set(Optional.of(lease(40, "r1", 3, LeaseState.ACTIVE)));
        as(r1Token).renewLease(RenewLeaseRequest.newBuilder().setMailboxId("a@m1").setLeaseId(40).setEpoch(4).build());
        assertThat(reached).containsExactly("renew 40");

        leads.set(true);
        local.set(Optional.empty());
        as(r2Token).releaseLease(ReleaseLeaseRequest.newBuilder().setMailboxId("a@m1").setLeaseId(41).setEpoch(5)
                .build());
        assertThat(reached).containsExactly("renew 40", "release 41");
    }
}
