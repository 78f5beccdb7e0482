package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.server.CoordinatorNode;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A coordinator node in a child JVM, for {@code TestingCluster} in process mode. Prints
 * {@code READY <id>} once it serves, closes the node on SIGTERM, and otherwise runs until killed.
 * Operators start coordinators with {@code mailboxctl coordinator start}, not with this.
 */
public final class CoordinatorProcess {

    /** The system property that turns on {@link CoordinatorNode.Builder#warmUp} in the child (default off). */
    public static final String WARM_UP_PROPERTY = "mailbox.coordinator.warmUp";

    /**
     * The system property that makes the child's Raft server bind at another address ({@code host:port}) than
     * its own peer address ({@link CoordinatorNode.Builder#raftListen}); default: its peer address.
     */
    public static final String RAFT_LISTEN_PROPERTY = "mailbox.coordinator.raftListen";

    /** What the process prints once it serves. */
    public static final String READY = "READY";

    private CoordinatorProcess() {
    }

    /**
     * @param id             node id
     * @param cluster        cluster name
     * @param dataDir        data dir
     * @param controlPort    control-plane port on 127.0.0.1
     * @param election       shortest election timeout
     * @param snapshotEvery  snapshot interval in entries
     * @param state          how to start with an empty data dir
     * @param peers          node id to Raft address
     * @return the arguments {@link #main} reads
     */
    public static List<String> arguments(String id, String cluster, Path dataDir, int controlPort, Duration election,
                                         long snapshotEvery, CoordinatorNode.ClusterState state,
                                         Map<String, InetSocketAddress> peers) {
        return arguments(id, cluster, dataDir, new InetSocketAddress("127.0.0.1", controlPort), election, snapshotEvery,
                state, peers);
    }

    /**
     * The same, with the control plane on any address (for a process in a network namespace of its own).
     *
     * @param controlPlane where the control plane listens
     * @return the arguments {@link #main} reads
     */
    public static List<String> arguments(String id, String cluster, Path dataDir, InetSocketAddress controlPlane,
                                         Duration election, long snapshotEvery, CoordinatorNode.ClusterState state,
                                         Map<String, InetSocketAddress> peers) {
        List<String> args = new ArrayList<>(List.of(id, cluster, dataDir.toString(),
                controlPlane.getHostString() + ":" + controlPlane.getPort(),
                Long.toString(election.toMillis()), Long.toString(snapshotEvery), state.name()));
        peers.forEach((k, v) -> args.add(k + "=" + v.getHostString() + ":" + v.getPort()));
        return args;
    }

    /**
     * @param args what {@link #arguments} made
     * @throws InterruptedException never in practice: it waits to be stopped
     */
    public static void main(String[] args) throws InterruptedException {
        Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        for (int i = 7; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            peers.put(kv[0], address(kv[1]));
        }
        CoordinatorNode.Builder builder = CoordinatorNode.builder(args[0]).cluster(args[1]).dataDir(Path.of(args[2]))
                .controlPlane(address(args[3]))
                .electionTimeout(Duration.ofMillis(Long.parseLong(args[4]))).snapshotEvery(Long.parseLong(args[5]))
                .clusterState(CoordinatorNode.ClusterState.valueOf(args[6])).peers(peers)
                .warmUp(Boolean.getBoolean(WARM_UP_PROPERTY));
        String listen = System.getProperty(RAFT_LISTEN_PROPERTY);
        if (listen != null) {
            builder.raftListen(address(listen));
        }
        CoordinatorNode node = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "coordinator-shutdown"));
        System.out.println(READY + " " + args[0]);
        System.out.flush();
        Thread.currentThread().join();
    }

    private static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
