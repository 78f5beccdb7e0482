package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Cluster;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Leases;
import dev.mailbox.coordination.Namespaces;
import dev.mailbox.coordination.Nodes;
import dev.mailbox.coordination.Routes;
import java.time.Duration;
import java.util.List;

/** The {@link CoordinationClient} that {@link CoordinationClient.Builder} builds: grpc-java channels. */
public final class GrpcCoordinationClient implements CoordinationClient {

    private final ControlPlaneCalls calls;
    private final Leases leases;
    private final Namespaces namespaces;
    private final Nodes nodes;
    private final Routes routes;
    private final Cluster cluster;
    private final dev.mailbox.coordination.Queues queues;

    /**
     * @param endpoints   coordinator control-plane addresses
     * @param callTimeout deadline of one attempt
     * @param maxAttempts attempts per call while coordinators are unavailable
     * @param backoff     first pause between attempts
     * @param maxBackoff  longest pause
     * @param security     TLS and token
     * @param interceptors run around every call, in the order {@code ClientInterceptors.intercept} takes them
     */
    public GrpcCoordinationClient(List<String> endpoints, Duration callTimeout, int maxAttempts, Duration backoff,
                                  Duration maxBackoff, dev.mailbox.coordination.ClientSecurity security,
                                  List<io.grpc.ClientInterceptor> interceptors) {
        this.calls = new ControlPlaneCalls(endpoints, callTimeout, maxAttempts, backoff, maxBackoff, security,
                interceptors);
        this.leases = new GrpcLeases(calls);
        this.namespaces = new GrpcNamespaces(calls);
        this.nodes = new GrpcNodes(calls);
        this.routes = new GrpcRoutes(calls);
        this.cluster = new GrpcCluster(calls);
        this.queues = new GrpcQueues(calls, null);
    }

    @Override
    public Leases leases() {
        return leases;
    }

    @Override
    public Namespaces namespaces() {
        return namespaces;
    }

    @Override
    public Nodes nodes() {
        return nodes;
    }

    @Override
    public Routes routes() {
        return routes;
    }

    @Override
    public Cluster cluster() {
        return cluster;
    }

    @Override
    public dev.mailbox.coordination.Queues queues() {
        return queues;
    }

    @Override
    public List<String> endpoints() {
        return calls.endpoints();
    }

    @Override
    public void close() {
        calls.close();
    }

    @Override
    public String toString() {
        return "CoordinationClient" + calls.endpoints();
    }
}
