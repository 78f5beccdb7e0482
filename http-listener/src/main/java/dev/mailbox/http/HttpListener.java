package dev.mailbox.http;

import dev.mailbox.http.internal.JettyListener;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * An HTTP/1.1 listener, plaintext or TLS, that serves {@link HttpHandler}s by path within {@link HttpLimits}: the
 * one HTTP server of Mailbox's processes (the SQS endpoint, the metrics listener and what shares its port).
 *
 * <pre>{@code
 * HttpListener metrics = HttpListener.builder("metrics")
 *         .listen(new InetSocketAddress("127.0.0.1", 9090))
 *         .route("/metrics", scrapeHandler)
 *         .start();
 * }</pre>
 *
 * <p>A request goes: headers in, {@link HttpHandler#admit} (may answer at once, the body unread), the declared
 * length checked against {@link HttpLimits#maxBodyBytes()} and taken from the {@link BodyBudget}, a worker slot
 * taken, the body read within {@link HttpLimits#bodyTimeout()}, {@link HttpHandler#handle} on a worker thread,
 * the answer written; then the budget and the slot are given back. It runs on Jetty (see the module's pom for
 * the version): non-blocking I/O, so a client that is slow to send or to read holds a connection, never a
 * thread.
 */
public interface HttpListener extends AutoCloseable {

    /** @return the address it listens on (the actual port when 0 was asked for) */
    InetSocketAddress address();

    /** @return {@code http://host:port} or {@code https://host:port}, 127.0.0.1 for a wildcard address */
    URI url();

    /** @return whether it serves TLS */
    boolean secure();

    /**
     * Stops accepting connections; requests a handler is already serving get up to a second to be answered, then
     * every connection is closed. Idempotent.
     */
    @Override
    void close();

    /**
     * @param name what the listener is for ({@code sqs}, {@code metrics}): its threads and log lines say so
     * @return a builder
     */
    static Builder builder(String name) {
        return new Builder(name);
    }

    /** Builds and starts an {@link HttpListener}. Not thread-safe. */
    final class Builder {
        private final String name;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 0);
        private @Nullable SSLContext tls;
        private HttpLimits limits = HttpLimits.defaults();
        private BodyBudget budget = BodyBudget.shared();
        private final Map<String, HttpHandler> routes = new LinkedHashMap<>();
        private @Nullable HttpHandler fallback;

        private Builder(String name) {
            Objects.requireNonNull(name, "name");
            if (!name.matches("[a-z0-9-]{1,32}")) {
                throw new IllegalArgumentException("a listener's name is 1 to 32 of a-z, 0-9 and '-', was '" + name
                        + "'");
            }
            this.name = name;
        }

        /**
         * @param address where to listen; default 127.0.0.1 on a free port
         * @return this builder
         */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param context serve HTTPS with this context (its key manager holds the certificate)
         * @return this builder
         */
        public Builder tls(@Nullable SSLContext context) {
            this.tls = context;
            return this;
        }

        /**
         * @param limits what clients may cost; default {@link HttpLimits#defaults()}
         * @return this builder
         */
        public Builder limits(HttpLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * @param budget the bytes of bodies held at once; default {@link BodyBudget#shared()}
         * @return this builder
         */
        public Builder bodyBudget(BodyBudget budget) {
            this.budget = Objects.requireNonNull(budget, "budget");
            return this;
        }

        /**
         * @param path    a path served by the handler: exact ({@code /metrics}), or every path under it when it ends
         *                with {@code /} ({@code /ui/})
         * @param handler serves it
         * @return this builder
         */
        public Builder route(String path, HttpHandler handler) {
            Objects.requireNonNull(path, "path");
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("a route's path starts with '/', was '" + path + "'");
            }
            if (routes.putIfAbsent(path, Objects.requireNonNull(handler, "handler")) != null) {
                throw new IllegalArgumentException("path " + path + " has a handler already");
            }
            return this;
        }

        /**
         * @param handler serves every path no route matches; default: 404
         * @return this builder
         */
        public Builder fallback(HttpHandler handler) {
            this.fallback = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * @return the listener, listening
         * @throws java.io.UncheckedIOException if the address cannot be bound (the message says why)
         */
        public HttpListener start() {
            return new JettyListener(name, listen, tls, limits, budget, Map.copyOf(routes), fallback);
        }
    }
}
