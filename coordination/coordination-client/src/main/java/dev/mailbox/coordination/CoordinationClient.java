package dev.mailbox.coordination;

import dev.mailbox.coordination.internal.GrpcCoordinationClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A client of a coordinator cluster's control plane, split by concern: {@link #leases()},
 * {@link #namespaces()}, {@link #nodes()}, {@link #routes()}, {@link #queues()} and {@link #cluster()}.
 *
 * <p>Give it the control-plane address of one or more coordinators. Any coordinator accepts any call, but
 * the leader answers without a forwarding hop, so the client finds out who leads (when it starts, and
 * whenever a call finds its coordinator unavailable) and talks to the leader; failing that it moves on
 * to the next address, retrying with exponential backoff up to {@link Builder#maxAttempts} times. Every
 * call it retries is idempotent on the coordinator, so a retry after a lost reply is safe.
 *
 * <p>Arguments are checked against {@link CoordinationLimits} before anything is sent
 * ({@link IllegalArgumentException}); refusals by the coordinator throw {@link CoordinationException}, of
 * which only {@link CoordinationException.Reason#UNAVAILABLE} is retried. Thread-safe; close it when done.
 *
 * <pre>{@code
 * try (CoordinationClient client = CoordinationClient.builder().endpoint("10.0.0.1:7000").build()) {
 *     Lease lease = client.leases().acquire("orders@node-a", new LeaseHolder("runner-1", "node-a", "10.0.0.5:7100"));
 *     ...
 * }
 * }</pre>
 */
public interface CoordinationClient extends AutoCloseable {

    /** @return a builder */
    static Builder builder() {
        return new Builder();
    }

    /** @return leases: acquire, renew, release, revoke, reclaim, get, list, keepers */
    Leases leases();

    /** @return namespaces and lease policies */
    Namespaces namespaces();

    /** @return mailbox nodes and the partition map */
    Nodes nodes();

    /** @return the routing table: list, watch, and a kept copy */
    Routes routes();

    /** @return queue records: what SQS endpoints keep about each queue, replicated (see {@link Queues}) */
    Queues queues();

    /** @return the coordinators' status */
    Cluster cluster();

    /** @return the endpoints this client was given */
    List<String> endpoints();

    /** Closes the connections; calls under way fail, watches end. */
    @Override
    void close();

    /** Builds a {@link CoordinationClient}. */
    final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private Duration callTimeout = Duration.ofSeconds(5);
        private int maxAttempts = 10;
        private Duration backoff = Duration.ofMillis(50);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private ClientSecurity security = ClientSecurity.none();
        private final List<io.grpc.ClientInterceptor> interceptors = new ArrayList<>();

        private Builder() {
        }

        /**
         * @param hostPort a coordinator's control-plane address, {@code host:port}
         * @return this builder
         */
        public Builder endpoint(String hostPort) {
            Objects.requireNonNull(hostPort, "hostPort");
            CoordinationLimits.require(CoordinationLimits.addressProblem(hostPort));
            endpoints.add(hostPort);
            return this;
        }

        /**
         * @param hostPorts coordinators' control-plane addresses
         * @return this builder
         */
        public Builder endpoints(List<String> hostPorts) {
            hostPorts.forEach(this::endpoint);
            return this;
        }

        /**
         * @param timeout how long one attempt of a call may take (default 5 s)
         * @return this builder
         */
        public Builder callTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("callTimeout must be positive, was " + timeout);
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * @param attempts how many times a call is tried while coordinators are unavailable (default 10)
         * @return this builder
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be 1 or more, was " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * @param initial the first pause between attempts (default 50 ms); it doubles each time
         * @param max     the longest pause (default 1 s)
         * @return this builder
         */
        public Builder backoff(Duration initial, Duration max) {
            if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff must be positive with max >= initial, was " + initial
                        + " and " + max);
            }
            this.backoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /**
         * @param security TLS and/or a token for the coordinators (default: plaintext, no token)
         * @return this builder
         */
        public Builder security(ClientSecurity security) {
            this.security = java.util.Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * Adds an interceptor to every call to the coordinators, such as {@code mailbox-opentelemetry}'s, which
         * makes each call a span and carries the caller's trace to the coordinator. The one added last runs
         * first.
         *
         * @param interceptor a gRPC client interceptor
         * @return this builder
         */
        public Builder interceptor(io.grpc.ClientInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * @return the client
         * @throws IllegalStateException if no endpoint was given
         */
        public CoordinationClient build() {
            if (endpoints.isEmpty()) {
                throw new IllegalStateException("at least one endpoint(...) is required");
            }
            return new GrpcCoordinationClient(endpoints, callTimeout, maxAttempts, backoff, maxBackoff, security,
                    List.copyOf(interceptors));
        }
    }
}
