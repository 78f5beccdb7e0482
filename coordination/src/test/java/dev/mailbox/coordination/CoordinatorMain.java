package dev.mailbox.coordination;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A coordinator node in a child JVM, for tests that stop or kill a real process. Arguments: node id,
 * cluster name, data dir, control-plane port, then {@code id=host:port} for every peer. Prints
 * {@code READY} once serving, then runs until killed.
 */
public final class CoordinatorMain {

    private CoordinatorMain() {
    }

    /**
     * @param args see the class comment
     * @throws InterruptedException never in practice: it waits to be killed
     */
    public static void main(String[] args) throws InterruptedException {
        Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            String[] hp = kv[1].split(":", 2);
            peers.put(kv[0], new InetSocketAddress(hp[0], Integer.parseInt(hp[1])));
        }
        CoordinatorNode node = CoordinatorNode.builder(args[0]).cluster(args[1]).dataDir(Path.of(args[2]))
                .controlPlane(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[3]))).peers(peers)
                .electionTimeout(Duration.ofMillis(300)).start();
        Runtime.getRuntime().addShutdownHook(new Thread(node::close));
        System.out.println("READY");
        System.out.flush();
        Thread.currentThread().join();
    }
}
