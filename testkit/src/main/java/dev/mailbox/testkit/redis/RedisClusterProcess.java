package dev.mailbox.testkit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of N masters (no replicas) on loopback, for tests: N {@link RedisServerProcess}es
 * with cluster mode on, their 16,384 slots split evenly, joined with CLUSTER MEET, and ready once
 * every node reports {@code cluster_state:ok}. Closing it stops every node.
 */
public final class RedisClusterProcess implements AutoCloseable {

    private static final int SLOTS = 16384;

    private final List<RedisServerProcess> nodes;

    private RedisClusterProcess(List<RedisServerProcess> nodes) {
        this.nodes = nodes;
    }

    /**
     * @param masters how many masters, at least 3 (Redis's minimum for a cluster that can fail over is
     *                not needed here, but fewer than 3 is not a realistic cluster)
     * @return the running, ready cluster
     */
    public static RedisClusterProcess start(int masters) {
        if (masters < 3) {
            throw new IllegalArgumentException("a test cluster needs at least 3 masters, was " + masters);
        }
        List<RedisServerProcess> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                nodes.add(RedisServerProcess.start(Map.of(
                        "cluster-enabled", "yes",
                        "cluster-config-file", "nodes.conf",
                        "cluster-node-timeout", "5000")));
            }
            RedisClusterProcess cluster = new RedisClusterProcess(nodes);
            cluster.form();
            return cluster;
        } catch (RuntimeException e) {
            nodes.forEach(RedisServerProcess::close);
            throw e;
        }
    }

    /** @return the nodes, in slot order */
    public List<RedisServerProcess> nodes() {
        return List.copyOf(nodes);
    }

    /** @return the port of the first node, a seed for cluster clients */
    public int seedPort() {
        return nodes.get(0).port();
    }

    @Override
    public void close() {
        nodes.forEach(RedisServerProcess::close);
    }

    private void form() {
        int n = nodes.size();
        for (int i = 0; i < n; i++) {
            int from = i * SLOTS / n;
            int to = (i + 1) * SLOTS / n - 1;
            Object[] cmd = new Object[2 + (to - from + 1)];
            cmd[0] = "CLUSTER";
            cmd[1] = "ADDSLOTS";
            for (int s = from; s <= to; s++) {
                cmd[2 + s - from] = s;
            }
            nodes.get(i).call(cmd);
        }
        for (int i = 1; i < n; i++) {
            nodes.get(0).call("CLUSTER", "MEET", "127.0.0.1", nodes.get(i).port());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ready()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the test cluster did not become ready: "
                        + nodes.get(0).call("CLUSTER", "INFO"));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private boolean ready() {
        for (RedisServerProcess node : nodes) {
            String info = String.valueOf(node.call("CLUSTER", "INFO"));
            if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + nodes.size())
                    || !info.contains("cluster_slots_ok:" + SLOTS)) {
                return false;
            }
        }
        return true;
    }
}
