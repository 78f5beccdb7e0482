package dev.mailbox.sqsendpoint;

import org.jspecify.annotations.Nullable;

/**
 * Decides whether a principal may make a call, after its signature has been verified: the hook for a
 * deployment's roles (for example, a principal may only touch queues of its namespaces). A refused call is
 * answered with SQS's {@code AccessDenied} (HTTP 403) and changes nothing. Called once per request, by many
 * threads at once; it should answer from memory.
 */
@FunctionalInterface
public interface SqsAuthorizer {

    /** Allows every call of every principal. */
    SqsAuthorizer ALLOW_ALL = (principal, action, queue) -> true;

    /**
     * @param principal the caller's principal ({@link AccessKey#principal()}), or {@value SqsEndpoint#ANONYMOUS}
     *                  when authentication is off
     * @param action    the SQS action, such as {@code SendMessage}
     * @param queue     the queue the call is for, or null for a call that names none; for {@code CreateQueue}
     *                  and {@code GetQueueUrl}, the name asked for. {@code ListQueues} is asked about once with
     *                  null (may the principal list at all), then once per queue found, with its name: the list
     *                  shows only the queues allowed (such answers refuse nothing, so they need no audit line)
     * @return whether the call may go ahead
     */
    boolean allows(String principal, String action, @Nullable String queue);
}
