package dev.mailbox.coordination;

import java.util.Objects;

/**
 * One grant of a mailbox to a runner, as the coordinator records it.
 *
 * @param leaseId         unique id of this grant (derived from the replicated log, never reused)
 * @param mailboxId       the mailbox: {@code namespace@node}, or a bare name that is its own namespace
 * @param runnerId        the runner that holds it
 * @param nodeId          the node the runner runs on
 * @param address         where the runner can be reached (for routing)
 * @param partition       {@code crc32(mailboxId) % 256}
 * @param epoch           the fencing token: grows with every grant and every revoke of this mailbox
 * @param state           where the lease is in its life
 * @param ttlMillis       how long the lease lasts without a renewal
 * @param grantedAtMillis when it was granted (coordinator time, epoch millis)
 * @param endedAtMillis   when it became terminal, or 0 while live
 */
public record Lease(long leaseId, String mailboxId, String runnerId, String nodeId, String address, int partition,
                    long epoch, LeaseState state, long ttlMillis, long grantedAtMillis, long endedAtMillis) {

    /**
     * Checks the fields.
     */
    public Lease {
        Objects.requireNonNull(mailboxId, "mailboxId");
        Objects.requireNonNull(runnerId, "runnerId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(state, "state");
    }

    /**
     * @return the namespace part of the mailbox id
     */
    public String namespace() {
        return CoordinationLimits.namespaceOf(mailboxId);
    }
}
