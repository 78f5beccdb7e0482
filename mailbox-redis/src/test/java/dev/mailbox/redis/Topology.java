package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The two topologies the cross-process tests run on. A "process" is a mailbox object on a client of
 * its own: it shares nothing with another but the server.
 */
enum Topology {
    STANDALONE, CLUSTER;

    /** @return the run's shared client, for reading keys */
    UnifiedJedis shared() {
        return this == STANDALONE ? SharedRedis.standalone().client : SharedRedis.cluster().client;
    }

    /** @return a new client of the same server(s), as another process would have */
    UnifiedJedis newClient() {
        if (this == STANDALONE) {
            SharedRedis.Standalone s = SharedRedis.standalone();
            return new JedisPooled(s.server.host(), s.server.port());
        }
        return new JedisCluster(new HostAndPort("127.0.0.1", SharedRedis.cluster().servers.seedPort()));
    }

    static String unique(String hint) {
        return hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static RedisMailbox<String> mailbox(String name, UnifiedJedis client) {
        return RedisMailbox.builder(name, Codec.utf8()).client(client).build();
    }

    /** @return the key prefix of a mailbox named {@code name} with the default prefix and tag */
    static String base(String name) {
        return "mailbox:{" + name + "}:";
    }

    /**
     * Everything a mailbox holds (default prefix and tag), read key by key, so a test can tell that a
     * refused call changed nothing.
     */
    Map<String, Object> state(String name) {
        UnifiedJedis c = shared();
        String base = base(name);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("ready", c.lrange(base + "ready", 0, -1));
        List<String> timed = new ArrayList<>();
        c.zrangeWithScores(base + "timed", 0, -1).forEach(t -> timed.add(t.getElement() + "@" + (long) t.getScore()));
        s.put("timed", timed);
        s.put("body", c.hgetAll(base + "body"));
        s.put("meta", c.hgetAll(base + "meta"));
        s.put("attr", c.hgetAll(base + "attr"));
        s.put("seq", c.get(base + "seq"));
        s.put("fence", c.get(base + "fence"));
        return s;
    }
}
