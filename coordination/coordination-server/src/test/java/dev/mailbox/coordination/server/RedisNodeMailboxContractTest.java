package dev.mailbox.coordination.server;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import redis.clients.jedis.JedisPooled;

/**
 * The contract through a node ({@link NodeMailboxContract}) on Redis mailboxes on a real standalone server, FIFO
 * ones for the kit's FIFO group: a remote mailbox declares what its hosted Redis mailbox declares (FIFO with held
 * runs, fairness, late acknowledgement), so those groups run through the node too, none skipped. Redis keeps real
 * time, so the kit's real-time defaults apply, with the half-second tick of the Redis backend's own contract test.
 */
@DisplayName("RemoteMailbox through a node, hosting Redis mailboxes, meets the Mailbox contract")
class RedisNodeMailboxContractTest extends NodeMailboxContract {

    private static JedisPooled client;

    @BeforeAll
    static void startRedis() {
        RedisServerProcess redis = closeAfterwards(RedisServerProcess.start());
        client = closeAfterwards(new JedisPooled(redis.host(), redis.port()));
    }

    @Override
    protected Mailbox<byte[]> hostedMailbox(MailboxSpec<?> spec, @Nullable Mailbox<byte[]> deadLetters) {
        RedisMailbox.Builder<byte[]> b = RedisMailbox.builder(spec.name(), Codec.bytes()).client(client)
                .capacity(spec.capacity()).maxMessageBytes(spec.maxMessageBytes());
        if (spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        RedrivePolicy redrive = spec.redrivePolicy();
        if (redrive != null) {
            b.redrivePolicy(RedrivePolicy.of(redrive.maxReceiveCount(), deadLetters));
        }
        return b.build();
    }

    @Override
    protected Duration tick() {
        return Duration.ofMillis(500);
    }
}
