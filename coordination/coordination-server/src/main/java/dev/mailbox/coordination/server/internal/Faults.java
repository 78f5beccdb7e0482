package dev.mailbox.coordination.server.internal;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns an exception a service method throws by mistake into {@code INTERNAL} with its message (gRPC would
 * answer {@code UNKNOWN} without one), so a caller sees what failed and knows retrying will not help, and
 * logs it: it is a bug or a fault of this server. An {@link Error} (out of memory) is reported to the
 * node's {@link Health} as fatal as well: the node stops serving rather than go on in an unknown state.
 */
public final class Faults implements ServerInterceptor {

    private static final Logger LOG = LoggerFactory.getLogger(Faults.class);

    private final Health health;

    /** @param health told of an {@link Error} */
    public Faults(Health health) {
        this.health = health;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                       ServerCallHandler<Q, A> next) {
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(call, headers);
        } catch (RuntimeException | Error e) {
            fail(call, e);
            return new ServerCall.Listener<>() {
            };
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onMessage(Q message) {
                try {
                    super.onMessage(message);
                } catch (RuntimeException | Error e) {
                    fail(call, e);
                }
            }

            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } catch (RuntimeException | Error e) {
                    fail(call, e);
                }
            }
        };
    }

    private void fail(ServerCall<?, ?> call, Throwable e) {
        String method = call.getMethodDescriptor().getFullMethodName();
        LOG.error("{} failed", method, e);
        if (e instanceof Error) {
            health.fatal(e);
        }
        try {
            call.close(Status.INTERNAL.withDescription(method + " failed: " + e), new Metadata());
        } catch (IllegalStateException alreadyClosed) {
            // the method answered before it threw
        }
    }
}
