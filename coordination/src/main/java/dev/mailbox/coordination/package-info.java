/**
 * Coordination: TTL leases with fencing epochs that let one runner own a mailbox at a time.
 *
 * <p>A {@link dev.mailbox.coordination.Lease} names the runner that holds a mailbox and the epoch that
 * fences it: every renewal and release must carry the lease id and epoch it was granted with, and
 * anything acting for an older epoch is refused. Types in this package are non-null unless annotated
 * otherwise.
 *
 * <p>{@link dev.mailbox.coordination.CoordinatorNode} runs one member of a replicated coordinator
 * (embedded Apache Ratis, 1, 3 or 5 nodes) with its grpc-java control plane;
 * {@link dev.mailbox.coordination.CoordinationClient} calls it from any process, and
 * {@link dev.mailbox.coordination.LeaseKeeper} holds one mailbox's lease for a runner. Errors are
 * {@link dev.mailbox.coordination.CoordinationException}.
 *
 * <p>The coordinator also holds mailbox nodes ({@link dev.mailbox.coordination.NodeInfo}), namespaces
 * ({@link dev.mailbox.coordination.NamespaceInfo}) and the routing table
 * ({@link dev.mailbox.coordination.Route}, streamed into a {@link dev.mailbox.coordination.RoutingTable});
 * partitions are spread over live nodes by {@link dev.mailbox.coordination.PartitionMap}. A
 * {@link dev.mailbox.coordination.MailboxNode} serves the mailboxes it hosts and forwards other calls to
 * their owner, so a {@link dev.mailbox.coordination.RemoteMailbox} works through any node; a
 * {@link dev.mailbox.coordination.LeasedRunner} runs a MainLoop only while it holds its mailbox's lease.
 */
@NullMarked
package dev.mailbox.coordination;

import org.jspecify.annotations.NullMarked;
