package dev.mailbox.sqsendpoint;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.sqsendpoint.internal.InMemoryQueueDirectory;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Where an {@link SqsEndpoint} finds its queues: the seam between the SQS protocol and whatever hosts the
 * mailboxes. The directory keeps one {@link QueueRecord} per queue (name, the attributes set on it, tags) and
 * hands out the queue's mailbox. A mailbox node ({@code mailboxctl node start --sqs-listen}) implements it over its
 * coordinators' replicated state, so every node agrees on queues and their attributes and a restarted node forgets
 * none, and returns, for a queue owned by another node, a mailbox that forwards there: the endpoint only ever asks
 * for {@link #mailbox(String)} and never knows where the messages live. With a shared directory, a node is asked
 * for the mailbox of queues other nodes created. {@link #inMemory(Function)} is a complete directory for one process (tests, embedding).
 *
 * <p>The endpoint does all SQS validation before it calls the directory, and stores attributes only as text by
 * SQS name, so a directory need not understand them. Every method may be called by many threads at once.
 * Methods may throw {@link dev.mailbox.api.MailboxUnavailableException} when the directory's store cannot be
 * reached; the endpoint answers such calls with SQS's {@code ServiceUnavailable} (HTTP 503), which SQS clients
 * retry.
 */
public interface QueueDirectory {

    /**
     * Creates a queue unless one of that name exists, atomically: of two concurrent calls for a name, one creates
     * and both get the same record back.
     *
     * @param queue the queue to create (name, attributes, tags and times)
     * @return the record now stored: {@code queue} if it was created, otherwise the existing queue's (the
     *         endpoint then compares attributes, as SQS does)
     * @throws UnsupportedOperationException for a queue this directory cannot host (a FIFO queue where it has no
     *                                       FIFO mailboxes), with nothing stored; the endpoint answers SQS's
     *                                       {@code UnsupportedOperation} with its message
     */
    QueueRecord createIfAbsent(QueueRecord queue);

    /**
     * @param name a queue name
     * @return the queue's record, or empty if there is no such queue
     */
    Optional<QueueRecord> get(String name);

    /**
     * @param prefix a name prefix, possibly empty
     * @param after  list only names greater than this one (for paging), or empty to start at the beginning
     * @param limit  the most names to return, 1 or more
     * @return queue names starting with {@code prefix}, in ascending {@link String#compareTo} order
     */
    List<String> list(String prefix, String after, int limit);

    /**
     * Changes a queue's attributes or tags, atomically with respect to other updates of the same queue.
     *
     * @param name   the queue's name
     * @param change what to change (see {@link QueueRecord#with(QueueUpdate)})
     * @return the queue's record after the change, or empty if there is no such queue
     */
    Optional<QueueRecord> update(String name, QueueUpdate change);

    /**
     * Deletes a queue: its record and its messages. Calls already under way on its mailbox may finish.
     *
     * @param name the queue's name
     * @return whether there was such a queue
     */
    boolean delete(String name);

    /**
     * The mailbox holding a queue's messages, as bytes: SQS bodies are stored as their UTF-8 bytes, message
     * attributes as the mailbox's typed attributes ({@link dev.mailbox.api.AttributeValue}) and what SQS keeps of a
     * message besides (SenderId, AWSTraceHeader, a FIFO queue's deduplication id and sequence number, a dead
     * letter's source queue) as its system attributes. A FIFO queue's mailbox ({@link QueueRecord#fifo()}) must be
     * a FIFO mailbox ({@link dev.mailbox.api.MailboxCapabilities#fifo()}): the endpoint checks this when the queue
     * is created and refuses the queue otherwise. The endpoint neither keeps nor closes it, so
     * the directory may hand out one shared object, open it on demand and close it when idle, or return a
     * mailbox that forwards to the node owning the queue. It should accept messages up to
     * {@link dev.mailbox.api.Limits#MAX_MESSAGE_BYTES} (the endpoint enforces each queue's MaximumMessageSize
     * itself).
     *
     * @param name the name of a queue that exists (the endpoint has just read its record)
     * @return its mailbox
     * @throws dev.mailbox.api.MailboxUnavailableException if it cannot be reached
     */
    Mailbox<byte[]> mailbox(String name);

    /**
     * The mailbox to use for one call made by {@code principal}: a directory whose mailboxes check rights
     * themselves (a mailbox node's data plane, which checks every call against its access rules) returns one
     * that acts as that principal, so the call is refused there with the principal's rights rather than allowed
     * with the directory's own. The endpoint calls this, never {@link #mailbox(String)}, for every message
     * action, giving the {@link AccessKey#principal() key's principal} (or {@value SqsEndpoint#ANONYMOUS}); a
     * refusal it throws as {@link dev.mailbox.api.MailboxAccessDeniedException} is answered with SQS's
     * {@code AccessDenied} (HTTP 403). The default ignores the principal: rights are then the
     * {@link SqsAuthorizer}'s alone.
     *
     * @param name      the name of a queue that exists
     * @param principal who makes the call
     * @return its mailbox, acting for {@code principal} where the directory can
     * @throws dev.mailbox.api.MailboxUnavailableException if it cannot be reached
     */
    default Mailbox<byte[]> mailbox(String name, String principal) {
        return mailbox(name);
    }

    /**
     * A directory for one process, of standard queues only: records in memory, and each queue's mailbox opened
     * once, when the queue is created, by {@code opener} (for example {@code name -> InMemoryMailbox.builder(name,
     * Codec.bytes()).build()}). A FIFO queue is refused (its mailbox would not be FIFO); use
     * {@link #inMemory(QueueOpener)} for those. Deleting a queue purges and closes its mailbox.
     *
     * @param opener makes the mailbox of a new queue from its name
     * @return the directory
     */
    static QueueDirectory inMemory(Function<String, Mailbox<byte[]>> opener) {
        return new InMemoryQueueDirectory((name, fifo) -> opener.apply(name));
    }

    /**
     * A directory for one process: records in memory, and each queue's mailbox opened once, when the queue is
     * created, by {@code opener}, FIFO for a FIFO queue (for example {@code (name, fifo) -> {
     * var b = InMemoryMailbox.builder(name, Codec.bytes()); if (fifo != null) b.fifo(fifo); return b.build(); }}).
     * Deleting a queue purges and closes its mailbox.
     *
     * @param opener makes the mailbox of a new queue
     * @return the directory
     */
    static QueueDirectory inMemory(QueueOpener opener) {
        return new InMemoryQueueDirectory(opener);
    }

    /** Makes a queue's mailbox. */
    @FunctionalInterface
    interface QueueOpener {

        /**
         * @param name the queue's name
         * @param fifo for a FIFO queue, the options of its FIFO mailbox ({@link FifoOptions#defaults()}: the
         *             endpoint applies the queue's deduplication settings itself, so they may change later); null
         *             for a standard queue
         * @return the mailbox, FIFO exactly when {@code fifo} is given
         */
        Mailbox<byte[]> open(String name, @Nullable FifoOptions fifo);
    }
}
