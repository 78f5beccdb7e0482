package dev.mailbox.coordination.server.internal;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The meters of one coordinator or mailbox node in the registry the application gave it. Every meter
 * carries the node's tag, so several nodes can share a registry, and {@link #close()} removes them all, so
 * a closed node leaves nothing behind that holds on to it.
 */
public final class Meters implements AutoCloseable {

    private final MeterRegistry registry;
    private final Tags tags;
    private final List<Meter> registered = new CopyOnWriteArrayList<>();

    /**
     * @param registry where the meters go
     * @param tag      the tag every meter of this node carries, such as {@code coordinator=n1}
     */
    public Meters(MeterRegistry registry, Tag tag) {
        this.registry = registry;
        this.tags = Tags.of(tag);
    }

    /**
     * Registers a gauge.
     *
     * @param name        its name
     * @param description what it shows
     * @param obj         what it reads
     * @param value       how
     * @param extra       more tags (key, value, key, value...)
     * @param <T>         the read object's type
     */
    public <T> void gauge(String name, String description, T obj, ToDoubleFunction<T> value, String... extra) {
        registered.add(Gauge.builder(name, obj, value).description(description).tags(tags).tags(extra)
                .register(registry));
    }

    /**
     * @param name  a counter's name
     * @param extra more tags (key, value, ...)
     * @return the counter, with this node's tag
     */
    public Counter counter(String name, String... extra) {
        Counter c = Counter.builder(name).tags(tags).tags(extra).register(registry);
        registered.add(c);
        return c;
    }

    /**
     * @param name the timer's name, for example {@code mailbox.controlplane.requests}
     * @return an interceptor that times each call under that name, tagged by method and status code
     */
    public ServerInterceptor callTimer(String name) {
        // one timer per method and status, looked up once: this runs on every call
        ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                               ServerCallHandler<Q, A> next) {
                long start = System.nanoTime();
                String method = call.getMethodDescriptor().getBareMethodName();
                return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        String code = status.getCode().name();
                        timers.computeIfAbsent(method + "/" + code, k -> {
                            Timer t = Timer.builder(name).tags(tags).tag("method", String.valueOf(method))
                                    .tag("status", code).register(registry);
                            registered.add(t);
                            return t;
                        }).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                        super.close(status, trailers);
                    }
                }, headers);
            }
        };
    }

    /** Removes this node's meters from the registry. */
    @Override
    public void close() {
        for (Meter m : registered) {
            registry.remove(m);
        }
        registered.clear();
    }
}
