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
     * A timer that also publishes a histogram (Prometheus {@code _bucket} series), so that a quantile over
     * any window and any set of nodes can be computed by the monitoring system ({@code histogram_quantile}),
     * which client-side percentiles cannot give.
     *
     * @param name        its name
     * @param description what it times
     * @param min         the shortest time worth a bucket of its own
     * @param max         the longest
     * @return the timer, with this node's tag
     */
    public Timer histogram(String name, String description, java.time.Duration min, java.time.Duration max) {
        Timer t = Timer.builder(name).description(description).tags(tags).publishPercentileHistogram()
                .minimumExpectedValue(min).maximumExpectedValue(max).register(registry);
        registered.add(t);
        return t;
    }

    /**
     * @param name        a counter's name
     * @param description what it counts
     * @return the counter, with this node's tag
     */
    public Counter describedCounter(String name, String description) {
        Counter c = Counter.builder(name).description(description).tags(tags).register(registry);
        registered.add(c);
        return c;
    }

    /**
     * @param name the timer's name, for example {@code mailbox.controlplane.requests}
     * @return an interceptor that times each call under that name, tagged by method and status code, with
     *         a histogram (so a p99 per method can be computed by the monitoring system)
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
                                    .tag("status", code).publishPercentileHistogram()
                                    .minimumExpectedValue(java.time.Duration.ofMillis(1))
                                    .maximumExpectedValue(java.time.Duration.ofSeconds(10)).register(registry);
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
