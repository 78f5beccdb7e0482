/**
 * {@link dev.mailbox.redis.RedisMailbox}: the Mailbox contract on Redis and Redis Cluster, one Lua
 * script per state change.
 */
@NullMarked
package dev.mailbox.redis;

import org.jspecify.annotations.NullMarked;
