/**
 * The coordination client: what a worker or a client process links to use the coordinator cluster.
 *
 * <p>{@link dev.mailbox.coordination.CoordinationClient} talks to the coordinators' control plane, split
 * by concern: {@link dev.mailbox.coordination.Leases} (TTL leases with fencing epochs that let one runner
 * own a mailbox at a time), {@link dev.mailbox.coordination.Namespaces},
 * {@link dev.mailbox.coordination.Nodes} (mailbox nodes and the {@link dev.mailbox.coordination.PartitionMap}),
 * {@link dev.mailbox.coordination.Routes} and {@link dev.mailbox.coordination.Cluster}. Every input is
 * held to {@link dev.mailbox.coordination.CoordinationLimits}; refusals are
 * {@link dev.mailbox.coordination.CoordinationException}.
 *
 * <p>Recipes built on those interfaces alone: {@link dev.mailbox.coordination.LeaseKeeper} keeps one
 * mailbox's lease, {@link dev.mailbox.coordination.RoutingTable} keeps a current copy of the routing
 * table, {@link dev.mailbox.coordination.RemoteMailbox} uses a mailbox through any mailbox node, and
 * {@link dev.mailbox.coordination.LeasedRunner} runs a MainLoop only while it holds its mailbox's lease
 * (it needs {@code dev.mailbox:mainloop} on the classpath).
 *
 * <p>Nothing here starts a server: coordinators and mailbox nodes live in {@code coordination-server}.
 * Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.coordination;

import org.jspecify.annotations.NullMarked;
