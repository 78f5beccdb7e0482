package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.ListNamespacesReply;
import dev.mailbox.coordination.proto.ListNamespacesRequest;
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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The control plane's interceptors on a real gRPC server: errors never UNKNOWN, faults refuse, freshness headers. */
class InterceptorsTest {

    private final List<Throwable> fatal = new CopyOnWriteArrayList<>();
    private final AtomicReference<@Nullable String> fault = new AtomicReference<>();
    private final AtomicReference<Throwable> toThrow = new AtomicReference<>();
    private Server server;
    private ManagedChannel channel;

    private final Health health = new Health() {
        @Override
        public void logFailed(Throwable cause) {
        }

        @Override
        public void fatal(Throwable cause) {
            fatal.add(cause);
        }

        @Override
        public @Nullable String fault() {
            return fault.get();
        }

        @Override
        public long appliedIndex() {
            return 41;
        }

        @Override
        public long commitIndex() {
            return 42;
        }
    };

    @BeforeEach
    void start() throws Exception {
        ControlPlaneGrpc.ControlPlaneImplBase service = new ControlPlaneGrpc.ControlPlaneImplBase() {
            @Override
            public void listNamespaces(ListNamespacesRequest r, StreamObserver<ListNamespacesReply> out) {
                Throwable t = toThrow.get();
                if (t instanceof Error e) {
                    throw e;
                }
                if (t instanceof RuntimeException e) {
                    throw e;
                }
                out.onNext(ListNamespacesReply.getDefaultInstance());
                out.onCompleted();
            }

            @Override
            public void clusterStatus(ClusterStatusRequest r, StreamObserver<ClusterStatusReply> out) {
                out.onNext(ClusterStatusReply.newBuilder().setNodeId("n1").build());
                out.onCompleted();
            }
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(service, new Faults(health), new Serving("n1", health)))
                .build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
    }

    @Test
    @DisplayName("an Error in a handler answers INTERNAL with what failed, and the node is told it is fatal")
    void errorIsFatal() {
        toThrow.set(new OutOfMemoryError("Java heap space"));
        assertThatThrownBy(() -> ControlPlaneGrpc.newBlockingStub(channel).listNamespaces(ListNamespacesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
                    assertThat(e.getStatus().getDescription()).contains("ListNamespaces failed")
                            .contains("OutOfMemoryError: Java heap space");
                });
        assertThat(fatal).singleElement().isInstanceOf(OutOfMemoryError.class);
    }

    @Test
    @DisplayName("a bug (a RuntimeException) answers INTERNAL, not UNKNOWN, and is not fatal")
    void bugIsInternal() {
        toThrow.set(new IllegalStateException("oops"));
        assertThatThrownBy(() -> ControlPlaneGrpc.newBlockingStub(channel).listNamespaces(ListNamespacesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode())
                        .isEqualTo(Status.Code.INTERNAL)).hasMessageContaining("oops");
        assertThat(fatal).isEmpty();
    }

    @Test
    @DisplayName("with a fault the node answers only its status; everything else is UNAVAILABLE with the reason")
    void faultRefuses() {
        fault.set("its Raft log cannot be written");
        assertThatThrownBy(() -> ControlPlaneGrpc.newBlockingStub(channel).listNamespaces(ListNamespacesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("coordinator n1 is not serving: its Raft log cannot be written");
                });
        assertThat(ControlPlaneGrpc.newBlockingStub(channel).clusterStatus(ClusterStatusRequest.getDefaultInstance())
                .getNodeId()).isEqualTo("n1");
    }

    @Test
    @DisplayName("every reply carries the node's applied index and known commit index")
    void freshnessHeaders() {
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        ControlPlaneGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers,
                trailers)).listNamespaces(ListNamespacesRequest.getDefaultInstance());
        assertThat(headers.get().get(Serving.APPLIED_INDEX)).isEqualTo("41");
        assertThat(headers.get().get(Serving.COMMIT_INDEX)).isEqualTo("42");
    }
}
