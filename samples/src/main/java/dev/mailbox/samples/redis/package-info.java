/** The second tutorial's service (docs/tutorials/first-redis-service.md). */
@NullMarked
package dev.mailbox.samples.redis;

import org.jspecify.annotations.NullMarked;
