/**
 * Coordination: TTL leases with fencing epochs that let one runner own a mailbox at a time.
 *
 * <p>A {@link dev.mailbox.coordination.Lease} names the runner that holds a mailbox and the epoch that
 * fences it: every renewal and release must carry the lease id and epoch it was granted with, and
 * anything acting for an older epoch is refused. Types in this package are non-null unless annotated
 * otherwise. This module is being built: the replicated coordinator and its control plane come next.
 */
@NullMarked
package dev.mailbox.coordination;

import org.jspecify.annotations.NullMarked;
