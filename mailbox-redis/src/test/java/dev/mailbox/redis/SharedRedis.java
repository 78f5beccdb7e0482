package dev.mailbox.redis;

import dev.mailbox.testkit.redis.RedisClusterProcess;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;

/**
 * One standalone server and one 3-master cluster for the whole test run, started on first use and
 * stopped (by PID) when JUnit closes its root store at the end of the run.
 */
final class SharedRedis implements BeforeAllCallback {

    private static ExtensionContext.Store store;

    @Override
    public void beforeAll(ExtensionContext context) {
        synchronized (SharedRedis.class) {
            store = context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL);
        }
    }

    static synchronized Standalone standalone() {
        return store.getOrComputeIfAbsent(Standalone.class, k -> new Standalone(), Standalone.class);
    }

    static synchronized Cluster cluster() {
        return store.getOrComputeIfAbsent(Cluster.class, k -> new Cluster(), Cluster.class);
    }

    static final class Standalone implements ExtensionContext.Store.CloseableResource {
        final RedisServerProcess server = RedisServerProcess.start();
        final JedisPooled client = new JedisPooled(server.host(), server.port());

        @Override
        public void close() {
            client.close();
            server.close();
        }
    }

    static final class Cluster implements ExtensionContext.Store.CloseableResource {
        final RedisClusterProcess servers = RedisClusterProcess.start(3);
        final JedisCluster client = new JedisCluster(new HostAndPort("127.0.0.1", servers.seedPort()));

        @Override
        public void close() {
            client.close();
            servers.close();
        }
    }
}
