package dev.mailbox.samples.redis;

import java.util.Set;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;

/** The two Jedis clients a RedisMailbox takes, with their pools sized for the threads that call. */
public final class RedisClients {

    private RedisClients() {
    }

    /**
     * @param connections how many threads send, receive and acknowledge at once; a waiting receive holds none, and
     *                    each long-polling mailbox keeps one more connection of its own, outside the pool
     */
    public static JedisPooled standalone(String host, int port, int connections) {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(connections);
        pool.setMaxIdle(connections);
        return new JedisPooled(pool, host, port);
    }

    /** @param seeds some of the cluster's nodes; the client finds the rest */
    public static JedisCluster cluster(Set<HostAndPort> seeds, int connectionsPerNode) {
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(connectionsPerNode);
        pool.setMaxIdle(connectionsPerNode);
        return new JedisCluster(seeds, pool);
    }
}
