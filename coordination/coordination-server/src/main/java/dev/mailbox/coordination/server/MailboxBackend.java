package dev.mailbox.coordination.server;

import dev.mailbox.api.Mailbox;

/**
 * Where a {@link MailboxNode}'s mailboxes live, for a node that opens them on demand rather than being
 * handed each one with {@link MailboxNode#host}: the node opens the backend mailbox for a mailbox id when
 * a call for it arrives and the node should serve it (its route names this node, or, on a shared backend,
 * it has no route yet), keeps one object per mailbox so that everything through this node shares it (and
 * its fence), and closes it when it has been idle.
 *
 * <p>Implementations must be thread-safe; {@link #open} may be called concurrently for different ids.
 */
public interface MailboxBackend {

    /**
     * Opens the mailbox for an id. It is not created in a way that loses data: opening an existing
     * queue attaches to it.
     *
     * @param mailboxId the mailbox id ({@code namespace@node} or a bare name)
     * @return a mailbox of bytes; the node closes it
     * @throws IllegalArgumentException if this backend cannot hold a mailbox of that id (for example an
     *                                  SQS queue name cannot hold '@')
     * @throws dev.mailbox.api.MailboxUnavailableException if the backend cannot be reached
     */
    Mailbox<byte[]> open(String mailboxId);

    /**
     * Whether every node reaches the same data (Redis, SQS). On a shared backend a node serves a mailbox
     * that has no owner yet (sends wait there for a runner), and when the owner dies a runner on another
     * node takes over the same messages. On a node-local backend (memory) a mailbox lives in one node:
     * without a route only the node its id names ({@code namespace@node}) serves it, and a takeover by a
     * runner elsewhere starts from an empty mailbox on that runner's node.
     *
     * @return whether the data is shared by all nodes
     */
    boolean shared();

    /**
     * Checks that the backend answers, for a readiness probe: one cheap call (a Redis read, an SQS list of one
     * queue) that changes nothing. The default does nothing: a node-local backend is always there.
     *
     * @throws dev.mailbox.api.MailboxUnavailableException if the backend cannot be reached, saying why
     */
    default void probe() {
    }
}
