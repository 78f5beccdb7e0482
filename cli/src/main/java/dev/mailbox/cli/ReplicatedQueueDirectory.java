package dev.mailbox.cli;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.QueueChange;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.Queues;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.QueueRecord;
import dev.mailbox.sqsendpoint.QueueUpdate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link QueueDirectory} whose records live in the coordinators' replicated state ({@link Queues}): every node's
 * SQS endpoint sees the same queues with the same attributes and tags, a restarted node forgets nothing, and a
 * change is applied by the coordinators to the record as it is then, so concurrent changes from two nodes never
 * lose each other. Mailboxes stay the node's business: {@link #mailbox} opens a queue's mailbox on first use with
 * the opener (which may host it on a node-local backend, or reach it through the data plane) and keeps it; that
 * happens on whichever node a call arrives at, also for queues other nodes created.
 *
 * <p>The coordinators being out of reach is a {@link MailboxUnavailableException} (the endpoint answers
 * ServiceUnavailable, which SQS clients retry); any other refusal is a {@link MailboxException} naming it.
 */
final class ReplicatedQueueDirectory implements QueueDirectory, AutoCloseable {

    private final Queues queues;
    private final Function<String, Mailbox<byte[]>> opener;
    private final ConcurrentHashMap<String, Mailbox<byte[]>> mailboxes = new ConcurrentHashMap<>();

    /**
     * @param queues the coordinators' queue records
     * @param opener makes a queue's mailbox from its name; called at most once per name while the mailbox is kept
     */
    ReplicatedQueueDirectory(Queues queues, Function<String, Mailbox<byte[]>> opener) {
        this.queues = queues;
        this.opener = opener;
    }

    @Override
    public QueueRecord createIfAbsent(QueueRecord queue) {
        if (queue.fifo()) {
            // the data plane carries message groups (revision 2), but the coordinators' queue records hold no
            // '.fifo' names and no FIFO settings yet, so the queue could not be recorded as FIFO
            throw new UnsupportedOperationException("FIFO queues are not served through a mailbox node yet: the"
                    + " coordinators' queue directory holds no FIFO queues; create a standard queue.");
        }
        QueueInfo stored = call(() -> queues.createIfAbsent(new QueueInfo(queue.name(), queue.attributes(),
                queue.tags(), queue.createdAt().toEpochMilli(), queue.lastModifiedAt().toEpochMilli())));
        QueueRecord record = record(stored);
        return record.equals(queue) ? queue : record; // the caller's own object when it was this one that stuck
    }

    @Override
    public Optional<QueueRecord> get(String name) {
        if (CoordinationLimits.queueNameProblem(name) != null) {
            return Optional.empty(); // a name no queue here can have (a FIFO queue's): no such queue
        }
        return call(() -> queues.get(name)).map(ReplicatedQueueDirectory::record);
    }

    @Override
    public List<String> list(String prefix, String after, int limit) {
        // the endpoint asks for one more than a page (up to 1,001) to see whether another page follows
        List<String> out = new ArrayList<>();
        String from = after;
        while (out.size() < limit) {
            int chunk = Math.min(limit - out.size(), CoordinationLimits.MAX_QUEUE_LIST);
            String start = from;
            List<String> names = call(() -> queues.list(prefix, start, chunk));
            out.addAll(names);
            if (names.size() < chunk) {
                break;
            }
            from = names.get(names.size() - 1);
        }
        return out;
    }

    @Override
    public Optional<QueueRecord> update(String name, QueueUpdate change) {
        if (CoordinationLimits.queueNameProblem(name) != null) {
            return Optional.empty();
        }
        Map<String, String> set = new TreeMap<>();
        Set<String> removed = new TreeSet<>();
        change.attributes().forEach((k, v) -> {
            if (v.isEmpty()) {
                removed.add(k); // the endpoint's way of saying "back to the default"
            } else {
                set.put(k, v);
            }
        });
        // a key that no queue can have (too long, empty) is not there to remove
        List<String> untag = change.removedTags().stream()
                .filter(k -> !k.isEmpty() && k.length() <= CoordinationLimits.MAX_QUEUE_TAG_KEY_LENGTH).toList();
        long at = change.at().toEpochMilli();
        Optional<QueueInfo> after = call(() -> queues.update(name, new QueueChange(set, removed, change.tags(),
                Set.copyOf(untag.subList(0, Math.min(untag.size(), CoordinationLimits.MAX_QUEUE_TAGS))), at)));
        // more removals than one change carries: the rest in further changes (removing is idempotent)
        for (int from = CoordinationLimits.MAX_QUEUE_TAGS; from < untag.size() && after.isPresent();
             from += CoordinationLimits.MAX_QUEUE_TAGS) {
            Set<String> part = Set.copyOf(untag.subList(from, Math.min(untag.size(), from + CoordinationLimits.MAX_QUEUE_TAGS)));
            after = call(() -> queues.update(name, new QueueChange(Map.of(), Set.of(), Map.of(), part, 0)));
        }
        return after.map(ReplicatedQueueDirectory::record);
    }

    @Override
    public boolean delete(String name) {
        if (CoordinationLimits.queueNameProblem(name) != null) {
            return false;
        }
        boolean existed = call(() -> queues.delete(name)).isPresent();
        if (existed) {
            // the endpoint purged the messages as the deleting caller before it asked (a purge here, after the record
            // is gone, could empty a queue another node has meanwhile created again); this view is only dropped
            Mailbox<byte[]> target = mailboxes.remove(name);
            if (target != null) {
                target.close();
            }
        }
        return existed;
    }

    @Override
    public Mailbox<byte[]> mailbox(String name) {
        return mailboxes.computeIfAbsent(name, opener);
    }

    /** Closes the mailboxes it opened. */
    @Override
    public void close() {
        mailboxes.values().forEach(Mailbox::close);
        mailboxes.clear();
    }

    private static QueueRecord record(QueueInfo q) {
        return new QueueRecord(q.name(), q.attributes(), q.tags(), Instant.ofEpochMilli(q.createdAtMillis()),
                Instant.ofEpochMilli(q.lastModifiedAtMillis()));
    }

    private static <T> T call(Supplier<T> call) {
        try {
            return call.get();
        } catch (CoordinationException e) {
            if (e.isRetryable()) {
                throw new MailboxUnavailableException("queue records: the coordinators are unavailable: "
                        + e.getMessage(), true, e);
            }
            throw new MailboxException("queue records: the coordinators refused: " + e.getMessage(), e);
        }
    }
}
