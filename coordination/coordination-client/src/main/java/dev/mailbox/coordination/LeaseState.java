package dev.mailbox.coordination;

/**
 * Where a lease is in its life. {@link #ACTIVE} and {@link #REVOKING} are live: while a lease is in
 * either, nobody else can acquire its mailbox. The other three are terminal.
 */
public enum LeaseState {
    /** Held and renewable by its holder. */
    ACTIVE,
    /** Revoked by an operator: the holder's renewals are refused, and the mailbox stays unavailable until reclaimed. */
    REVOKING,
    /** Given up by its holder. */
    RELEASED,
    /** Not renewed within its TTL plus the namespace's grace. */
    EXPIRED,
    /** Reclaimed by an operator after a revoke: the mailbox is free. */
    REVOKED;

    /**
     * @return whether the lease still keeps its mailbox from being acquired
     */
    public boolean isLive() {
        return this == ACTIVE || this == REVOKING;
    }
}
