package dev.mailbox.coordination;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Queue records replicated by the coordinators: what an SQS endpoint keeps about each queue (attributes by SQS
 * name, tags, times), so that every mailbox node's endpoint sees the same queues with the same settings, and a
 * restarted node forgets nothing. Get it from {@link CoordinationClient#queues()}.
 *
 * <p>Each write is one command in the coordinators' log, applied to the record as it is then: a create of a
 * name that exists returns the existing record, and {@link #update} never loses a concurrent update of the same
 * queue. Sizes are held to {@link CoordinationLimits} ({@code queue...Problem}): bad arguments throw
 * {@link IllegalArgumentException} before anything is sent. Reads are as fresh as the coordinator's default for
 * the read ({@code get-queue}, {@code list-queues}: {@link ReadConsistency#LEADER_LEASE} unless its operator chose
 * otherwise). Calls are retried on another coordinator while the cluster is unavailable, like every facet's; each
 * write is safe to retry (a retried create finds its own record, a retried update sets the same values, a retried
 * delete finds nothing to delete).
 *
 * <p>Access (with security on): a queue named N is, for the access rules, a mailbox named N, in namespace N.
 * Reading it needs any grant on N; creating, changing or deleting it needs {@code admin} on N, or the
 * {@code node} role (a node's SQS endpoint acts for the callers its access keys authenticate). A node that names
 * the caller it acts for ({@link #onBehalfOf}) is believed, and the caller is checked instead, as on the data
 * plane. Thread-safe.
 */
public interface Queues {

    /**
     * Creates a queue unless one of that name exists, atomically across the cluster: of concurrent creates of
     * one name, one creates and all get the same record back.
     *
     * @param queue the record to create; times 0 take the coordinator's time
     * @return the record now stored: {@code queue}'s (with its times filled in) if this call created it,
     *         otherwise the existing queue's
     * @throws IllegalArgumentException if the record breaks a limit
     * @throws CoordinationException    FAILED_PRECONDITION if the cluster holds {@link CoordinationLimits#MAX_QUEUES}
     */
    QueueInfo createIfAbsent(QueueInfo queue);

    /**
     * @param name a queue name
     * @return its record, or empty if there is no such queue
     */
    default Optional<QueueInfo> get(String name) {
        return get(name, null);
    }

    /**
     * @param name        a queue name
     * @param consistency how fresh the answer must be, or null for the coordinator's default
     * @return its record, or empty if there is no such queue
     */
    Optional<QueueInfo> get(String name, @Nullable ReadConsistency consistency);

    /**
     * @param prefix a name prefix, possibly empty
     * @param after  only names greater than this one (for paging), or empty
     * @param limit  the most names to return, 1 to {@link CoordinationLimits#MAX_QUEUE_LIST}
     * @return queue names starting with {@code prefix}, ascending ({@link String#compareTo}); with security on,
     *         only queues the caller may read
     */
    List<String> list(String prefix, String after, int limit);

    /**
     * Changes a queue as it is when the change is applied.
     *
     * @param name   the queue
     * @param change what to set and remove
     * @return the record right after this change, or empty if there is no such queue
     * @throws CoordinationException FAILED_PRECONDITION if the record would break a limit after the change (more
     *                               than {@link CoordinationLimits#MAX_QUEUE_TAGS} tags, say); nothing changes
     */
    Optional<QueueInfo> update(String name, QueueChange change);

    /**
     * Deletes a queue's record (its messages are the caller's to remove).
     *
     * @param name the queue
     * @return the record it had, or empty if there was no such queue; a delete retried after its first attempt
     *         took effect but its answer was lost (a leader change) finds no queue and returns empty
     */
    Optional<QueueInfo> delete(String name);

    /**
     * @param principal the caller a node acts for (an SQS endpoint's authenticated caller)
     * @return this facet making its calls on that principal's behalf: believed by the coordinators only from a
     *         client whose own principal has the {@code node} role, and ignored with security off
     */
    Queues onBehalfOf(String principal);
}
