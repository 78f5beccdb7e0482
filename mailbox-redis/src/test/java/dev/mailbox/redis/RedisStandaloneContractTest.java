package dev.mailbox.redis;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

@ExtendWith(SharedRedis.class)
@DisplayName("RedisMailbox on a standalone server meets the Mailbox contract")
class RedisStandaloneContractTest extends MailboxContract {

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        RedisMailbox.Builder<T> b = RedisMailbox.builder(spec.name(), spec.codec())
                .client(SharedRedis.standalone().client)
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
