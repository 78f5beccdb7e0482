package dev.mailbox.opentelemetry;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * gRPC interceptors that make each call a span ({@code rpc.system=grpc}, named {@code package.Service/Method})
 * and carry the trace context in the call's headers ({@code traceparent}, {@code tracestate}), for the builders of
 * the coordination modules, which take plain gRPC interceptors and so do not depend on OpenTelemetry:
 *
 * <pre>{@code
 * GrpcTracing grpc = GrpcTracing.create(openTelemetry);
 * MailboxNode.builder("node-a").interceptor(grpc.serverInterceptor()).peerInterceptor(grpc.clientInterceptor())...
 * CoordinatorNode.builder("c1").interceptor(grpc.serverInterceptor())...
 * CoordinationClient.builder().interceptor(grpc.clientInterceptor())...
 * RemoteMailbox.builder(id, codec).interceptor(grpc.clientInterceptor())...
 * }</pre>
 *
 * With both on a node, a call it forwards is a client span inside the server span of the call it received, so a
 * send through a node that does not own the mailbox shows both hops under the sender's {@code send} span. The
 * server span is current while the call's handler runs (on whichever thread gRPC runs it), and ends when the call
 * closes; a client span ends when its call closes. Server spans are errors for the status codes the conventions
 * name (UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS), client spans for any but OK.
 *
 * <p>Needs {@code grpc-api} on the class path (the coordination modules bring it). Thread-safe.
 */
public final class GrpcTracing {

    private static final Set<Status.Code> SERVER_ERRORS = EnumSet.of(Status.Code.UNKNOWN, Status.Code.DEADLINE_EXCEEDED,
            Status.Code.UNIMPLEMENTED, Status.Code.INTERNAL, Status.Code.UNAVAILABLE, Status.Code.DATA_LOSS);

    private static final TextMapSetter<Metadata> SETTER = (headers, key, value) -> {
        if (headers != null) {
            headers.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);
        }
    };
    private static final TextMapGetter<Metadata> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata headers) {
            return headers.keys();
        }

        @Override
        public @Nullable String get(@Nullable Metadata headers, String key) {
            if (headers == null || key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                return null;
            }
            return headers.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
        }
    };

    private static final Resolved NOOP = new Resolved(OpenTelemetry.noop());
    private final MailboxTracing.Telemetry telemetry;
    private volatile @Nullable Resolved resolved;

    private GrpcTracing(MailboxTracing.Telemetry telemetry) {
        this.telemetry = telemetry;
    }

    /**
     * @param openTelemetry where spans go; its propagators carry the context in the headers (W3C trace context
     *                      when it has none)
     * @return the interceptors' factory
     */
    public static GrpcTracing create(OpenTelemetry openTelemetry) {
        return new GrpcTracing(new MailboxTracing.Telemetry(Objects.requireNonNull(openTelemetry, "openTelemetry")));
    }

    /**
     * Interceptors on {@link GlobalOpenTelemetry}'s instance, from the first call after it is set (by the Java
     * agent, before the application starts, or by the application); until then calls are not traced, and the
     * global is not fixed. With the Java agent, which traces grpc-java itself, these are not needed.
     *
     * @return the interceptors' factory
     */
    public static GrpcTracing global() {
        return new GrpcTracing(new MailboxTracing.Telemetry(null));
    }

    private Resolved state() {
        Resolved r = resolved;
        if (r != null) {
            return r;
        }
        OpenTelemetry o = telemetry.openTelemetry();
        if (o == null) {
            return NOOP;
        }
        r = new Resolved(o);
        resolved = r;
        return r;
    }

    /** One OpenTelemetry's tracer and propagator. */
    private static final class Resolved {
        final Tracer tracer;
        final TextMapPropagator propagator;

        Resolved(OpenTelemetry openTelemetry) {
            this.tracer = openTelemetry.getTracer(MailboxTracing.INSTRUMENTATION);
            TextMapPropagator configured = openTelemetry.getPropagators().getTextMapPropagator();
            // a bare OpenTelemetry.noop() or an SDK built without propagators would carry nothing across the call
            this.propagator = configured.fields().isEmpty() ? W3CTraceContextPropagator.getInstance() : configured;
        }
    }

    /** @return an interceptor for a server's builder: each call a SERVER span, continuing the caller's trace */
    public ServerInterceptor serverInterceptor() {
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                              ServerCallHandler<Q, A> next) {
                return server(call, headers, next);
            }
        };
    }

    /** @return an interceptor for a channel or stub: each call a CLIENT span, the trace carried in its headers */
    public ClientInterceptor clientInterceptor() {
        return new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options,
                                                       Channel next) {
                return client(method, options, next);
            }
        };
    }

    private static SpanBuilder span(Resolved state, MethodDescriptor<?, ?> method, SpanKind kind, Context parent) {
        String full = method.getFullMethodName();
        SpanBuilder b = state.tracer.spanBuilder(full).setSpanKind(kind).setParent(parent)
                .setAttribute(SemConv.RPC_SYSTEM, "grpc");
        String service = method.getServiceName();
        if (service != null) {
            b.setAttribute(SemConv.RPC_SERVICE, service);
        }
        String bare = method.getBareMethodName();
        if (bare != null) {
            b.setAttribute(SemConv.RPC_METHOD, bare);
        }
        return b;
    }

    private <Q, A> ServerCall.Listener<Q> server(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        Resolved state = state();
        Context parent = state.propagator.extract(Context.current(), headers, GETTER);
        Span span = span(state, call.getMethodDescriptor(), SpanKind.SERVER, parent).startSpan();
        Context context = parent.with(span);
        Ending ending = new Ending(span);
        ServerCall<Q, A> traced = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                span.setAttribute(SemConv.RPC_GRPC_STATUS_CODE, (long) status.getCode().value());
                if (SERVER_ERRORS.contains(status.getCode())) {
                    span.setStatus(StatusCode.ERROR, status.getCode() + ": " + status.getDescription());
                }
                try {
                    super.close(status, trailers);
                } finally {
                    ending.end();
                }
            }
        };
        ServerCall.Listener<Q> listener;
        try (Scope ignored = context.makeCurrent()) {
            listener = next.startCall(traced, headers);
        } catch (RuntimeException | Error e) {
            TracingMailbox.failed(span, e);
            ending.end();
            throw e;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onMessage(Q message) {
                try (Scope ignored = context.makeCurrent()) {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                try (Scope ignored = context.makeCurrent()) {
                    super.onHalfClose();
                }
            }

            @Override
            public void onCancel() {
                try (Scope ignored = context.makeCurrent()) {
                    super.onCancel();
                } finally {
                    span.setAttribute(SemConv.ERROR_TYPE, "cancelled");
                    ending.end(); // a cancelled call is never closed
                }
            }

            @Override
            public void onComplete() {
                try (Scope ignored = context.makeCurrent()) {
                    super.onComplete();
                }
            }

            @Override
            public void onReady() {
                try (Scope ignored = context.makeCurrent()) {
                    super.onReady();
                }
            }
        };
    }

    private <Q, A> ClientCall<Q, A> client(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
        Resolved state = state();
        Context parent = Context.current();
        SpanBuilder builder = span(state, method, SpanKind.CLIENT, parent);
        String authority = next.authority();
        int colon = authority == null ? -1 : authority.lastIndexOf(':');
        if (authority != null && colon > 0) {
            builder.setAttribute(SemConv.SERVER_ADDRESS, authority.substring(0, colon));
            try {
                builder.setAttribute(SemConv.SERVER_PORT, Long.parseLong(authority.substring(colon + 1)));
            } catch (NumberFormatException notAPort) {
                // an authority without a numeric port: the address alone
            }
        }
        Span span = builder.startSpan();
        Context context = parent.with(span);
        Ending ending = new Ending(span);
        ClientCall<Q, A> call;
        try (Scope ignored = context.makeCurrent()) {
            call = next.newCall(method, options);
        } catch (RuntimeException | Error e) {
            TracingMailbox.failed(span, e);
            ending.end();
            throw e;
        }
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void start(Listener<A> responseListener, Metadata headers) {
                state.propagator.inject(context, headers, SETTER);
                try (Scope ignored = context.makeCurrent()) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(responseListener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            span.setAttribute(SemConv.RPC_GRPC_STATUS_CODE, (long) status.getCode().value());
                            if (!status.isOk()) {
                                span.setStatus(StatusCode.ERROR, status.getCode() + ": " + status.getDescription());
                            }
                            ending.end();
                            super.onClose(status, trailers);
                        }
                    }, headers);
                } catch (RuntimeException | Error e) {
                    TracingMailbox.failed(span, e);
                    ending.end();
                    throw e;
                }
            }
        };
    }

    /** Ends a span once, whichever of close and cancel comes first. */
    private static final class Ending {
        private final Span span;
        private final AtomicBoolean ended = new AtomicBoolean();

        Ending(Span span) {
            this.span = span;
        }

        void end() {
            if (ended.compareAndSet(false, true)) {
                span.end();
            }
        }
    }
}
