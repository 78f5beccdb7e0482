package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.sqsendpoint.QueueDirectory;
import io.grpc.ManagedChannel;
import dev.mailbox.sqsendpoint.QueueRecord;
import dev.mailbox.sqsendpoint.QueueUpdate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's queue directory whose mailboxes act as the caller: each message call of an SQS client goes to the
 * node's data plane with the node's own credentials and names the key's principal as the one it is made for
 * ({@link RemoteMailbox.Builder#onBehalfOf}). The node checks the call as that principal's, and when another node
 * owns the mailbox it forwards the call as that principal's, so the owner checks it against its own rules too:
 * the endpoint cannot lend a caller the node's rights. (The node is believed only where its principal has the
 * {@code node} role over the queue's namespace; where it has not, the call is checked as the node's own, whose
 * role holds no send or receive, so it is refused.) Records, listing and deletion are the wrapped directory's.
 */
final class ActingQueueDirectory implements QueueDirectory, AutoCloseable {

    private record Key(String queue, String principal) {
    }

    private final QueueDirectory queues;
    private final ManagedChannel channel;
    private final Map<Key, Mailbox<byte[]>> acting = new ConcurrentHashMap<>();

    /**
     * @param queues  the node's directory (records, and the mailbox opened for each queue)
     * @param channel the endpoint's one channel to the node's data plane, with the node's own credentials; shared
     *                by every acting mailbox (they are cheap views) and closed by the endpoint, not here
     */
    ActingQueueDirectory(QueueDirectory queues, ManagedChannel channel) {
        this.queues = queues;
        this.channel = channel;
    }

    @Override
    public QueueRecord createIfAbsent(QueueRecord queue) {
        return queues.createIfAbsent(queue);
    }

    @Override
    public Optional<QueueRecord> get(String name) {
        return queues.get(name);
    }

    @Override
    public List<String> list(String prefix, String after, int limit) {
        return queues.list(prefix, after, limit);
    }

    @Override
    public Optional<QueueRecord> update(String name, QueueUpdate change) {
        return queues.update(name, change);
    }

    @Override
    public boolean delete(String name) {
        acting.entrySet().removeIf(e -> {
            if (e.getKey().queue().equals(name)) {
                e.getValue().close();
                return true;
            }
            return false;
        });
        return queues.delete(name);
    }

    /** The node's own view, for what the endpoint does on no caller's behalf (there is none today). */
    @Override
    public Mailbox<byte[]> mailbox(String name) {
        return queues.mailbox(name);
    }

    @Override
    public Mailbox<byte[]> mailbox(String name, String principal) {
        queues.mailbox(name); // the wrapped directory opens (or hosts) the queue's mailbox, or says it is gone
        return acting.computeIfAbsent(new Key(name, principal), k -> RemoteMailbox.builder(name, Codec.bytes())
                .channel(channel).onBehalfOf(principal).build());
    }

    @Override
    public void close() {
        acting.values().forEach(Mailbox::close);
        acting.clear();
    }
}
