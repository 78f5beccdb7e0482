package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.QueueDirectory.QueueOpener;
import dev.mailbox.sqsendpoint.QueueRecord;
import dev.mailbox.sqsendpoint.QueueUpdate;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * {@link QueueDirectory#inMemory}: records and mailboxes in one sorted concurrent map. Each queue's mailbox is
 * opened when the queue is created, inside the map's atomic insert, so a name never has two.
 */
public final class InMemoryQueueDirectory implements QueueDirectory {

    private record Queue(QueueRecord record, Mailbox<byte[]> mailbox) {
    }

    private final QueueOpener opener;
    private final ConcurrentSkipListMap<String, Queue> queues = new ConcurrentSkipListMap<>();

    /** @param opener makes a new queue's mailbox */
    public InMemoryQueueDirectory(QueueOpener opener) {
        this.opener = Objects.requireNonNull(opener, "opener");
    }

    @Override
    public QueueRecord createIfAbsent(QueueRecord queue) {
        return queues.computeIfAbsent(queue.name(), n -> new Queue(queue, Objects.requireNonNull(opener.open(n,
                queue.fifo() ? FifoOptions.defaults() : null), "the opener returned no mailbox"))).record();
    }

    @Override
    public Optional<QueueRecord> get(String name) {
        return Optional.ofNullable(queues.get(name)).map(Queue::record);
    }

    @Override
    public List<String> list(String prefix, String after, int limit) {
        // names with a prefix are contiguous in sorted order: start at the later of the prefix and the last name seen
        boolean fromPrefix = after.compareTo(prefix) < 0;
        return queues.tailMap(fromPrefix ? prefix : after, fromPrefix).keySet().stream()
                .takeWhile(n -> n.startsWith(prefix))
                .limit(limit).toList();
    }

    @Override
    public Optional<QueueRecord> update(String name, QueueUpdate change) {
        return Optional.ofNullable(queues.computeIfPresent(name, (n, q) -> new Queue(q.record().with(change),
                q.mailbox()))).map(Queue::record);
    }

    @Override
    public boolean delete(String name) {
        Queue q = queues.remove(name);
        if (q == null) {
            return false;
        }
        try {
            q.mailbox().purge();
        } catch (MailboxException alreadyClosed) {
            // closing below is what matters
        }
        q.mailbox().close();
        return true;
    }

    @Override
    public Mailbox<byte[]> mailbox(String name) {
        Queue q = queues.get(name);
        if (q == null) {
            throw new MailboxException("queue '" + name + "' does not exist (deleted meanwhile)");
        }
        return q.mailbox();
    }
}
