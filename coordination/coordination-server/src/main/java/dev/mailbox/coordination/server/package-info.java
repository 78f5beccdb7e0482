/**
 * The coordination server: {@link dev.mailbox.coordination.server.CoordinatorNode} runs one member of the
 * replicated coordinator (embedded Apache Ratis, 1, 3 or 5 nodes) with its grpc-java control plane;
 * {@link dev.mailbox.coordination.server.MailboxNode} serves the mailbox data plane for the mailboxes it
 * hosts and forwards other calls to their owner; {@link dev.mailbox.coordination.server.TestingCluster}
 * runs coordinators on loopback for tests. Clients and workers need only {@code coordination-client}.
 * Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.coordination.server;

import org.jspecify.annotations.NullMarked;
