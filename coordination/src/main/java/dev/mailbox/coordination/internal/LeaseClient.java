package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Talks to the lease state machine through a Ratis client: writes go through the log (Ratis finds and
 * follows the leader), renewals and reads are answered by the leader without a log write. Renewals are
 * linearizable reads, which the leader serves from its own state only while its Raft leader lease
 * holds. The gRPC control plane reaches the cluster through {@link RaftGateway}, which uses this when
 * its node does not lead.
 */
public final class LeaseClient implements AutoCloseable {

    private final RaftClient client;

    /**
     * @param group the coordinator cluster
     */
    public LeaseClient(RaftGroup group) {
        RaftProperties p = new RaftProperties();
        // a dead or frozen leader must not hold a request for long: give up on it and look for the next
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS));
        this.client = RaftClient.newBuilder().setProperties(p).setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(100,
                        TimeDuration.valueOf(50, TimeUnit.MILLISECONDS)))
                .build();
    }

    RaftClient client() {
        return client;
    }

    /**
     * Proposes a command and waits for it to be applied.
     *
     * @param command the command (its time is replaced by the leader's)
     * @return what applying it came to
     * @throws UncheckedIOException if the cluster cannot be reached
     */
    public Outcome write(Command command) {
        try {
            return outcome(client.io().send(message(command.encode())));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param command the command
     * @return what applying it came to
     */
    public CompletableFuture<Outcome> writeAsync(Command command) {
        return client.async().send(message(command.encode())).thenApply(LeaseClient::outcome);
    }

    /**
     * A heartbeat, answered by the leader.
     *
     * @param mailboxId the mailbox
     * @param leaseId   the lease id granted
     * @param epoch     the epoch granted
     * @return OK with the lease, or why not
     */
    public Outcome renew(String mailboxId, long leaseId, long epoch) {
        return read(new Wire.Read.Renew(mailboxId, leaseId, epoch), true);
    }

    /**
     * @param mailboxId the mailbox
     * @return OK with its latest lease, or NOT_FOUND
     */
    public Outcome get(String mailboxId) {
        return read(new Wire.Read.Get(mailboxId), false);
    }

    /**
     * @param mailboxId    the mailbox
     * @param linearizable whether the leader must confirm its leadership first (else it answers from
     *                     its own state)
     * @return OK with its latest lease, or NOT_FOUND
     */
    public Outcome get(String mailboxId, boolean linearizable) {
        return read(new Wire.Read.Get(mailboxId), linearizable);
    }

    /**
     * @param namespace a namespace, or "" for all
     * @return the latest lease of every mailbox in it
     */
    public List<Lease> list(String namespace) {
        return list(namespace, false);
    }

    /**
     * @param namespace    a namespace, or "" for all
     * @param linearizable whether the leader must confirm its leadership first
     * @return the latest lease of every mailbox in it
     */
    public List<Lease> list(String namespace, boolean linearizable) {
        try {
            Message m = message(Wire.encode(new Wire.Read.ListLeases(namespace)));
            RaftClientReply reply = linearizable ? client.io().sendReadOnly(m) : client.io().sendReadOnlyNonLinearizable(m);
            return Wire.decodeLeases(content(reply));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Outcome read(Wire.Read read, boolean linearizable) {
        try {
            Message m = message(Wire.encode(read));
            return outcome(linearizable ? client.io().sendReadOnly(m) : client.io().sendReadOnlyNonLinearizable(m));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Message message(byte[] bytes) {
        return Message.valueOf(ByteString.copyFrom(bytes));
    }

    private static Outcome outcome(RaftClientReply reply) {
        return Wire.decodeOutcome(content(reply));
    }

    static byte[] content(RaftClientReply reply) {
        if (!reply.isSuccess()) {
            Exception e = reply.getException();
            throw new UncheckedIOException(new IOException("coordinator request failed: " + e, e));
        }
        return reply.getMessage().getContent().toByteArray();
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
