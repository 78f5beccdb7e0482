/**
 * Real Redis servers for tests: {@link dev.mailbox.testkit.redis.RedisServerProcess} (standalone) and
 * {@link dev.mailbox.testkit.redis.RedisClusterProcess} (a cluster of masters), started on free
 * loopback ports from {@code redis-server} on the PATH or, failing that, the binary bundled in
 * {@code com.github.codemonstur:embedded-redis} when it is on the classpath.
 */
@NullMarked
package dev.mailbox.testkit.redis;

import org.jspecify.annotations.NullMarked;
