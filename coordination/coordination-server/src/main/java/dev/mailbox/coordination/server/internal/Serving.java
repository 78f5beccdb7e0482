package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Keeps a coordinator with a fault from answering anything but its status (everything else is
 * {@code UNAVAILABLE} with the reason, so clients go to another coordinator), and puts this node's applied
 * index and known commit index on every reply's headers, so that a reader of a stale read can tell how far
 * behind the answer may be.
 */
public final class Serving implements ServerInterceptor {

    /** The header with the last log index the answering node applied. */
    public static final Metadata.Key<String> APPLIED_INDEX =
            Metadata.Key.of("mailbox-applied-index", Metadata.ASCII_STRING_MARSHALLER);
    /** The header with the highest log index the answering node knows to be committed. */
    public static final Metadata.Key<String> COMMIT_INDEX =
            Metadata.Key.of("mailbox-commit-index", Metadata.ASCII_STRING_MARSHALLER);

    private final String nodeId;
    private final Health health;

    /**
     * @param nodeId this node's id, for the errors
     * @param health whether it serves, and its indexes
     */
    public Serving(String nodeId, Health health) {
        this.nodeId = nodeId;
        this.health = health;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                       ServerCallHandler<Q, A> next) {
        String fault = health.fault();
        if (fault != null && !call.getMethodDescriptor().equals(ControlPlaneGrpc.getClusterStatusMethod())) {
            call.close(Status.UNAVAILABLE.withDescription("coordinator " + nodeId + " is not serving: " + fault),
                    new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendHeaders(Metadata out) {
                out.put(APPLIED_INDEX, Long.toString(health.appliedIndex()));
                out.put(COMMIT_INDEX, Long.toString(health.commitIndex()));
                super.sendHeaders(out);
            }
        }, headers);
    }
}
