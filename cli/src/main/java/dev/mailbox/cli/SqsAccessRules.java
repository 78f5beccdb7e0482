package dev.mailbox.cli;

import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.sqsendpoint.SqsAuthorizer;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The access rules of a node (its {@code --access} file), applied to the SQS actions of its endpoint as the
 * principal an access key maps to. A queue's namespace is its name (SQS names hold no '@'). What each action
 * needs in the queue's namespace:
 * <ul>
 *   <li>SendMessage, SendMessageBatch: {@code SEND};</li>
 *   <li>ReceiveMessage, DeleteMessage(Batch), ChangeMessageVisibility(Batch), and on a dead-letter queue
 *       StartMessageMoveTask and CancelMessageMoveTask (a move receives its messages; the destination's send is
 *       checked apart): {@code RECEIVE};</li>
 *   <li>PurgeQueue: {@code PURGE};</li>
 *   <li>GetQueueUrl, GetQueueAttributes, ListQueueTags, ListDeadLetterSourceQueues, ListMessageMoveTasks:
 *       {@code COUNT} (they read the queue's count, attributes, tags and tasks);</li>
 *   <li>CreateQueue, DeleteQueue, SetQueueAttributes, TagQueue, UntagQueue, AddPermission, RemovePermission:
 *       {@code ADMIN}: they change what a
 *       queue is for everyone who uses it (its redrive, retention, delays, its very existence and messages), which
 *       is configuration, the admin role's part, as creating a namespace is;</li>
 *   <li>ListQueues: any principal, but it lists only the queues it may {@code COUNT}.</li>
 * </ul>
 * So the {@code client} role (SEND, RECEIVE, COUNT, PURGE) is an SQS producer and consumer of its namespaces, a
 * {@code runner} the same without purge, a {@code reader} may look queues up, and only {@code admin} creates,
 * deletes and configures them. Any other action is refused. A refusal writes an audit line (action
 * {@code sqs:NAME}); the endpoint answers it with SQS's {@code AccessDenied} before anything changes.
 */
final class SqsAccessRules implements SqsAuthorizer {

    private static final Map<String, Access.Right> NEEDS = Map.ofEntries(
            Map.entry("SendMessage", Access.Right.SEND),
            Map.entry("SendMessageBatch", Access.Right.SEND),
            Map.entry("ReceiveMessage", Access.Right.RECEIVE),
            Map.entry("DeleteMessage", Access.Right.RECEIVE),
            Map.entry("DeleteMessageBatch", Access.Right.RECEIVE),
            Map.entry("ChangeMessageVisibility", Access.Right.RECEIVE),
            Map.entry("ChangeMessageVisibilityBatch", Access.Right.RECEIVE),
            Map.entry("PurgeQueue", Access.Right.PURGE),
            Map.entry("GetQueueUrl", Access.Right.COUNT),
            Map.entry("GetQueueAttributes", Access.Right.COUNT),
            Map.entry("ListQueueTags", Access.Right.COUNT),
            Map.entry("ListDeadLetterSourceQueues", Access.Right.COUNT),
            Map.entry("ListMessageMoveTasks", Access.Right.COUNT),
            Map.entry("StartMessageMoveTask", Access.Right.RECEIVE),
            Map.entry("CancelMessageMoveTask", Access.Right.RECEIVE),
            Map.entry("AddPermission", Access.Right.ADMIN),
            Map.entry("RemovePermission", Access.Right.ADMIN),
            Map.entry("CreateQueue", Access.Right.ADMIN),
            Map.entry("DeleteQueue", Access.Right.ADMIN),
            Map.entry("SetQueueAttributes", Access.Right.ADMIN),
            Map.entry("TagQueue", Access.Right.ADMIN),
            Map.entry("UntagQueue", Access.Right.ADMIN));

    private final Access access;

    SqsAccessRules(Access access) {
        this.access = access;
    }

    /** @return what an action needs in its queue's namespace, or null for an action no rule allows */
    static Access.@Nullable Right needs(String action) {
        return NEEDS.get(action);
    }

    @Override
    public boolean allows(String principal, String action, @Nullable String queue) {
        if (action.equals("ListQueues")) {
            // called with no queue for the call itself, then once per queue to pick what the list shows (no audit:
            // a list that leaves out queues refuses nothing)
            return queue == null || access.allows(principal, Access.Right.COUNT, CoordinationLimits.namespaceOf(queue));
        }
        Access.Right needed = needs(action);
        if (needed == null) {
            Access.auditRefusal(principal, "sqs:" + action, queue == null ? "-" : queue, "no rule allows it");
            return false;
        }
        if (queue == null) {
            return true; // a call naming no queue is refused by the action itself, before it touches anything
        }
        String namespace = CoordinationLimits.namespaceOf(queue);
        if (access.allows(principal, needed, namespace)) {
            return true;
        }
        Access.auditRefusal(principal, "sqs:" + action, queue, "not granted "
                + needed.name().toLowerCase(java.util.Locale.ROOT) + " in namespace '" + namespace + "'");
        return false;
    }
}
