/**
 * Real Redis servers for tests: {@link dev.mailbox.testkit.redis.RedisServerProcess} (standalone) and
 * {@link dev.mailbox.testkit.redis.RedisClusterProcess} (a cluster of masters), started on free
 * loopback ports from {@code redis-server} on the PATH or, failing that, the binary bundled in
 * {@code com.github.codemonstur:embedded-redis}, a dependency of the testkit itself so that every module
 * whose tests need Redis gets a server the same way.
 */
@NullMarked
package dev.mailbox.testkit.redis;

import org.jspecify.annotations.NullMarked;
