package dev.mailbox.redis;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.UUID;

/**
 * The same contract on a 3-master cluster. The mailboxes of one test share a hash tag, so a
 * dead-letter mailbox is in its source's slot; different tests land on different slots and nodes.
 */
@ExtendWith(SharedRedis.class)
@DisplayName("RedisMailbox on a 3-master Redis Cluster meets the Mailbox contract")
class RedisClusterContractTest extends MailboxContract {

    private final String hashTag = "tck-" + UUID.randomUUID();

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        RedisMailbox.Builder<T> b = RedisMailbox.builder(spec.name(), spec.codec())
                .client(SharedRedis.cluster().client)
                .hashTag(hashTag)
                .capacity(spec.capacity())
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        return b.build();
    }

    @Override
    protected Duration tick() {
        return RedisContractSupport.TICK;
    }

    @Override
    protected void awaitBlockedInReceive(Thread thread) {
        RedisContractSupport.awaitBlockedInReceive(thread);
    }
}
