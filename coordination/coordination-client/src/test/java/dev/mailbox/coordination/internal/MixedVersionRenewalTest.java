package dev.mailbox.coordination.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeasesReply;
import dev.mailbox.coordination.proto.RenewLeasesRequest;
import dev.mailbox.coordination.proto.RenewResult;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A batched renewal answered by a coordinator of a newer version, which may send a lease state or a result code
 * this client does not know. The coordinator here is a stand-in that answers as such a version would: no real
 * coordinator of this version can send what a later one will (issue 30, finding 8).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class MixedVersionRenewalTest {

    /** A newer coordinator: a lease state after REVOKED, and a result code this version has no reason for. */
    private static final class NewerCoordinator extends ControlPlaneGrpc.ControlPlaneImplBase {
        @Override
        public void renewLeases(RenewLeasesRequest request, StreamObserver<RenewLeasesReply> out) {
            RenewLeasesReply.Builder reply = RenewLeasesReply.newBuilder();
            for (RenewLeaseRequest r : request.getRenewalsList()) {
                dev.mailbox.coordination.proto.Lease.Builder lease = dev.mailbox.coordination.proto.Lease.newBuilder()
                        .setMailboxId(r.getMailboxId()).setLeaseId(r.getLeaseId()).setEpoch(r.getEpoch())
                        .setRunnerId("r").setNodeId("n").setAddress("127.0.0.1:9").setTtlMillis(10_000);
                RenewResult.Builder result = RenewResult.newBuilder().setCode("OK");
                switch (r.getMailboxId()) {
                    case "newer-state@m" -> lease.setStateValue(9);
                    case "newer-code@m" -> result.setCode("THROTTLED").setMessage("slow down");
                    case "refused@m" -> result.setCode("FAILED_PRECONDITION").setMessage("stale epoch");
                    default -> lease.setStateValue(1);
                }
                if (result.getCode().equals("OK")) {
                    result.setLease(lease);
                }
                reply.addResults(result);
            }
            out.onNext(reply.build());
            out.onCompleted();
        }
    }

    @Test
    @DisplayName("an unknown lease state or result code answers its own renewal and breaks neither the others of its "
            + "batch nor the renewals after it")
    void unknownStateAndCode() throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new NewerCoordinator()).build().start();
        try (CoordinationClient client = CoordinationClient.builder()
                .endpoint("127.0.0.1:" + server.getPort()).callTimeout(Duration.ofSeconds(5)).build()) {
            List<String> mailboxes = List.of("fine-1@m", "newer-state@m", "newer-code@m", "refused@m", "fine-2@m");
            for (int round = 0; round < 3; round++) { // the renewals after a batch with such answers go through too
                List<CompletableFuture<Lease>> renewals = mailboxes.stream()
                        .map(m -> client.leases().renewAsync(lease(m))).toList();
                assertThat(renewals.get(0).get(10, TimeUnit.SECONDS).state()).isEqualTo(LeaseState.ACTIVE);
                assertThat(renewals.get(1).get(10, TimeUnit.SECONDS))
                        .as("renewed: the lease as its holder has it").isEqualTo(lease("newer-state@m"));
                assertThatThrownBy(() -> renewals.get(2).get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                                .isEqualTo(CoordinationException.Reason.INTERNAL))
                        .hasMessageContaining("THROTTLED").hasMessageContaining("slow down");
                assertThatThrownBy(() -> renewals.get(3).get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                                .isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION));
                assertThat(renewals.get(4).get(10, TimeUnit.SECONDS).state()).isEqualTo(LeaseState.ACTIVE);
            }
        } finally {
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private static Lease lease(String mailbox) {
        return new Lease(7, mailbox, "r", "n", "127.0.0.1:9", 0, 3, LeaseState.ACTIVE, 10_000, 0, 0);
    }
}
