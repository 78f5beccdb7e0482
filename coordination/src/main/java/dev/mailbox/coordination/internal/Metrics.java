package dev.mailbox.coordination.internal;

import com.sun.net.httpserver.HttpServer;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * A Prometheus registry, an HTTP endpoint that serves it at {@code /metrics}, and a gRPC interceptor
 * that times every call by method and status.
 */
public final class Metrics implements AutoCloseable {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private @Nullable HttpServer http;

    /** @return the registry */
    public MeterRegistry registry() {
        return registry;
    }

    /** @return the scrape text */
    public String scrape() {
        return registry.scrape();
    }

    /**
     * Serves {@code /metrics} on the address.
     *
     * @param address where; port 0 picks a free one
     * @return the bound address
     */
    public InetSocketAddress serve(InetSocketAddress address) {
        try {
            HttpServer server = HttpServer.create(address, 16);
            server.createContext("/metrics", exchange -> {
                byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.setExecutor(Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "metrics-http");
                t.setDaemon(true);
                return t;
            }));
            server.start();
            http = server;
            return server.getAddress();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + address, e);
        }
    }

    /**
     * @param name the timer's name, for example {@code mailbox.controlplane.requests}
     * @return an interceptor that times each call under that name, tagged by method and status code
     */
    public ServerInterceptor interceptor(String name) {
        // one timer per method and status, looked up once: this runs on every call
        java.util.concurrent.ConcurrentHashMap<String, Timer> timers = new java.util.concurrent.ConcurrentHashMap<>();
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
                        timers.computeIfAbsent(method + "/" + code, k -> Timer.builder(name)
                                .tag("method", String.valueOf(method)).tag("status", code).register(registry))
                                .record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
                        super.close(status, trailers);
                    }
                }, headers);
            }
        };
    }

    @Override
    public void close() {
        HttpServer server = http;
        if (server != null) {
            server.stop(0);
        }
        registry.close();
    }
}
