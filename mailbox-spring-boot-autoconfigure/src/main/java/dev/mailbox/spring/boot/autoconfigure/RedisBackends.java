package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.redis.RedisMailbox;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.boot.autoconfigure.data.redis.RedisProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * Redis mailboxes on one Jedis client, found in this order: the application's own {@code UnifiedJedis} bean
 * (not closed here); {@code mailbox.redis.uri}; Spring Boot's {@code RedisConnectionDetails} bean (made from
 * {@code spring.data.redis.*} when Spring Data Redis is present, or by a service connection); the
 * {@code spring.data.redis.*} properties read here (localhost:6379 when none is set). Sentinel setups need a
 * {@code UnifiedJedis} bean or a URI.
 */
final class RedisBackends implements Backends {

    private static final String DETAILS = "org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails";

    private final UnifiedJedis client;
    private final boolean owned;
    private final String where;
    private final String keyPrefix;

    RedisBackends(MailboxProperties.Redis properties, ListableBeanFactory beans, Environment env) {
        this.keyPrefix = properties.getKeyPrefix();
        UnifiedJedis bean = beans.getBeanProvider(UnifiedJedis.class).getIfUnique();
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(properties.getMaxConnections());
        pool.setMaxIdle(properties.getMaxConnections());
        pool.setJmxEnabled(false);
        if (bean != null) {
            client = bean;
            owned = false;
            where = "the application's " + bean.getClass().getSimpleName();
        } else if (properties.getUri() != null) {
            URI uri = URI.create(properties.getUri());
            if (!JedisURIHelper.isValid(uri)) {
                throw new IllegalStateException("mailbox.redis.uri must be redis://host:port[/db] or rediss://..., was "
                        + properties.getUri());
            }
            JedisClientConfig config = DefaultJedisClientConfig.builder().user(JedisURIHelper.getUser(uri))
                    .password(JedisURIHelper.getPassword(uri)).database(JedisURIHelper.getDBIndex(uri))
                    .ssl(JedisURIHelper.isRedisSSLScheme(uri)).build();
            client = new JedisPooled(JedisURIHelper.getHostAndPort(uri), config, pool);
            owned = true;
            where = JedisURIHelper.getHostAndPort(uri).toString();
        } else {
            Settings s = detailsBean(beans);
            if (s == null) {
                s = fromProperties(Binder.get(env).bind("spring.data.redis", RedisProperties.class)
                        .orElseGet(RedisProperties::new));
            }
            if (s.cluster != null) {
                client = new JedisCluster(s.cluster, s.config, pool);
                where = "cluster " + s.cluster;
            } else {
                client = new JedisPooled(s.node, s.config, pool);
                where = s.node.toString();
            }
            owned = true;
        }
    }

    /** How to reach Redis, as Spring Boot describes it. */
    private record Settings(@Nullable HostAndPort node, @Nullable Set<HostAndPort> cluster, JedisClientConfig config) {
    }

    private static @Nullable Settings detailsBean(ListableBeanFactory beans) {
        if (!ClassUtils.isPresent(DETAILS, RedisBackends.class.getClassLoader())) {
            return null;
        }
        RedisConnectionDetails details = beans.getBeanProvider(RedisConnectionDetails.class).getIfUnique();
        if (details == null) {
            return null;
        }
        if (details.getSentinel() != null) {
            throw sentinel();
        }
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .user(details.getUsername()).password(details.getPassword());
        if (details.getCluster() != null) {
            Set<HostAndPort> nodes = new LinkedHashSet<>();
            details.getCluster().getNodes().forEach(n -> nodes.add(new HostAndPort(n.host(), n.port())));
            return new Settings(null, nodes, config.ssl(details.getCluster().getSslBundle() != null).build());
        }
        RedisConnectionDetails.Standalone s = details.getStandalone();
        // an SSL bundle's own trust material is not carried over: Jedis then uses the JVM's
        config.database(s.getDatabase()).ssl(s.getSslBundle() != null);
        return new Settings(new HostAndPort(s.getHost(), s.getPort()), null, config.build());
    }

    private static Settings fromProperties(RedisProperties p) {
        if (p.getSentinel() != null) {
            throw sentinel();
        }
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder();
        if (p.getTimeout() != null) {
            config.socketTimeoutMillis((int) p.getTimeout().toMillis());
        }
        if (p.getConnectTimeout() != null) {
            config.connectionTimeoutMillis((int) p.getConnectTimeout().toMillis());
        }
        if (StringUtils.hasText(p.getClientName())) {
            config.clientName(p.getClientName());
        }
        if (StringUtils.hasText(p.getUrl())) {
            URI uri = URI.create(p.getUrl());
            config.user(JedisURIHelper.getUser(uri)).password(JedisURIHelper.getPassword(uri))
                    .database(JedisURIHelper.getDBIndex(uri)).ssl(JedisURIHelper.isRedisSSLScheme(uri));
            return new Settings(JedisURIHelper.getHostAndPort(uri), null, config.build());
        }
        config.user(p.getUsername()).password(p.getPassword()).ssl(p.getSsl().isEnabled());
        if (p.getCluster() != null && p.getCluster().getNodes() != null && !p.getCluster().getNodes().isEmpty()) {
            Set<HostAndPort> nodes = new LinkedHashSet<>();
            p.getCluster().getNodes().forEach(n -> nodes.add(HostAndPort.from(n)));
            return new Settings(null, nodes, config.build());
        }
        config.database(p.getDatabase());
        return new Settings(new HostAndPort(p.getHost(), p.getPort()), null, config.build());
    }

    private static IllegalStateException sentinel() {
        return new IllegalStateException("Redis Sentinel settings (spring.data.redis.sentinel) are not read by the"
                + " mailboxes: define a UnifiedJedis bean (a JedisSentineled) or set mailbox.redis.uri");
    }

    @Override
    public <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
        RedisMailbox.Builder<T> b = RedisMailbox.builder(d.name(), codec).client(client).keyPrefix(keyPrefix);
        MailboxProperties.RedisSpec redis = d.spec().getRedis();
        if (redis.getHashTag() != null) {
            b.hashTag(redis.getHashTag());
        }
        if (redis.getKeyTtl() != null) {
            b.keyTtl(redis.getKeyTtl());
        }
        if (d.spec().getCapacity() > 0) {
            b.capacity(d.spec().getCapacity());
        }
        if (d.spec().getMaxMessageBytes() != null) {
            b.maxMessageBytes(d.spec().getMaxMessageBytes());
        }
        if (redrive != null) {
            b.redrivePolicy(redrive);
        }
        FifoOptions fifo = d.fifo(); // built from the properties on each call
        if (fifo != null) {
            b.fifo(fifo);
        }
        return b.build();
    }

    @Override
    public <T> Mailbox<T> dynamic(String name, Codec<T> codec) {
        // a client's response mailbox lives a day past its last use, so abandoned ones clean themselves up
        return RedisMailbox.builder(name, codec).client(client).keyPrefix(keyPrefix).keyTtl(Duration.ofDays(1)).build();
    }

    @Override
    public String describe() {
        return "redis " + where;
    }

    @Override
    public void close() {
        if (owned) {
            client.close();
        }
    }
}
