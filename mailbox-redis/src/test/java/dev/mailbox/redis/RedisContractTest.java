package dev.mailbox.redis;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.Threads;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.Optional;

/** The contract on Redis; the subclasses choose the topology. */
@ExtendWith(SharedRedis.class)
abstract class RedisContractTest extends MailboxContract {

    /** Half a second: Redis keeps milliseconds, and this leaves margin on a busy 2-core machine. */
    static final Duration TICK = Duration.ofMillis(500);

    /** @return the client the mailboxes use */
    abstract UnifiedJedis client();

    /** @param b a builder to adjust for the topology */
    <T> void configure(RedisMailbox.Builder<T> b) {
    }

    @Override
    protected final <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        return build(spec);
    }

    /** A second object on the same keys: it shares with the first only the client and what Redis holds. */
    @Override
    protected final <T> Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        return Optional.of(build(spec));
    }

    private <T> Mailbox<T> build(MailboxSpec<T> spec) {
        RedisMailbox.Builder<T> b = RedisMailbox.builder(spec.name(), spec.codec())
                .client(client())
                .capacity(spec.capacity())
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        if (spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        configure(b);
        return b.build();
    }

    @Override
    protected Duration tick() {
        return TICK;
    }

    @Override
    protected void awaitBlockedInReceive(Thread thread) {
        awaitBlocked(thread);
    }

    /** A receive is blocked once its thread sleeps inside WakeHub.await, waiting for a notice. */
    static void awaitBlocked(Thread thread) {
        Threads.awaitParkedIn(thread, frame -> frame.getClassName().equals(WakeHub.class.getName())
                && frame.getMethodName().equals("await"), Duration.ofSeconds(10));
    }
}
