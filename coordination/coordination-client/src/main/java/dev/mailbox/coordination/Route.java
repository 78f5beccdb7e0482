package dev.mailbox.coordination;

import java.util.Objects;

/**
 * Where a mailbox is served: one entry of the routing table, derived from the mailbox's active lease.
 *
 * @param mailboxId the mailbox
 * @param nodeId    the node its lease holder runs on
 * @param runnerId  the lease holder
 * @param address   where calls for the mailbox go ({@code host:port} of a MailboxService)
 * @param partition {@code crc32(mailboxId) % 256}
 * @param leaseId   the lease
 * @param epoch     the lease's fencing epoch
 */
public record Route(String mailboxId, String nodeId, String runnerId, String address, int partition, long leaseId,
                    long epoch) {

    /**
     * Checks the fields.
     */
    public Route {
        Objects.requireNonNull(mailboxId, "mailboxId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(runnerId, "runnerId");
        Objects.requireNonNull(address, "address");
    }

    /**
     * @param lease an active lease
     * @return its route
     */
    public static Route of(Lease lease) {
        return new Route(lease.mailboxId(), lease.nodeId(), lease.runnerId(), lease.address(), lease.partition(),
                lease.leaseId(), lease.epoch());
    }
}
