package dev.mailbox.coordination.server.partition;

import dev.mailbox.coordination.server.CoordinatorNode;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A coordinator in a child JVM started inside a network namespace: its Raft and control-plane addresses
 * are the namespace's, not loopback. Prints {@code READY <id>} once it serves; runs until killed.
 * Arguments: id, cluster, data dir, control-plane address, then {@code id=host:port} per Raft peer.
 */
public final class NamespacedCoordinator {

    private NamespacedCoordinator() {
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            peers.put(kv[0], address(kv[1]));
        }
        CoordinatorNode node = CoordinatorNode.builder(args[0]).cluster(args[1]).dataDir(Path.of(args[2]))
                .controlPlane(address(args[3])).snapshotEvery(200).peers(peers).start();
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "coordinator-shutdown"));
        System.out.println("READY " + args[0]);
        System.out.flush();
        Thread.currentThread().join();
    }

    private static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
