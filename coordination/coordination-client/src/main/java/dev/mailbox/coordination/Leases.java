package dev.mailbox.coordination;

import org.jspecify.annotations.Nullable;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Mailbox leases: acquire, renew, release, and the operator's revoke and reclaim. Get it from
 * {@link CoordinationClient#leases()}.
 *
 * <p>A lease is named by its mailbox, its lease id and its epoch; renewals and releases must present the
 * ones they were granted with, and anything acting for an older epoch is refused. Refusals throw
 * {@link CoordinationException} (FAILED_PRECONDITION for a lease held by someone else or named with a stale
 * id or epoch, NOT_FOUND for a mailbox that never had one); malformed arguments throw
 * {@link IllegalArgumentException} before anything is sent. Thread-safe.
 */
public interface Leases {

    /**
     * Acquires a mailbox's lease with its namespace's TTL.
     *
     * @param mailboxId the mailbox, {@code namespace@node} or a namespace name
     * @param holder    who holds it
     * @return the lease; if this runner already holds it, the same lease under a new epoch
     * @throws CoordinationException FAILED_PRECONDITION if another runner holds it or it is being revoked
     */
    Lease acquire(String mailboxId, LeaseHolder holder);

    /**
     * Acquires a mailbox's lease.
     *
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @param ttl       how long it lasts without a renewal, or zero for the namespace's policy
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if another runner holds it
     */
    Lease acquire(String mailboxId, LeaseHolder holder, Duration ttl);

    /**
     * Acquires a mailbox's lease without blocking; the client's own retries of it carry one request id.
     *
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @param ttl       the TTL, or zero for the namespace's
     * @return the lease, or the refusal as a {@link CoordinationException}
     */
    default CompletableFuture<Lease> acquireAsync(String mailboxId, LeaseHolder holder, Duration ttl) {
        return acquireAsync(mailboxId, holder, ttl, java.util.UUID.randomUUID().toString());
    }

    /**
     * Acquires a mailbox's lease; every retry of this one call (by the client or, with the same
     * {@code requestId}, by the caller) gets the first attempt's answer, so a retry after a lost reply
     * does not start a new epoch. Once a call this holder made later (under another request id) has been
     * granted, a late copy of this call (a coordinator may still be forwarding an attempt the client gave up
     * on) is refused with FAILED_PRECONDITION and changes nothing, rather than fencing the newer acquire; the
     * client numbers its calls in the order they are made for this, whether or not this one was ever granted.
     *
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @param ttl       the TTL, or zero for the namespace's
     * @param requestId the same on every attempt of one acquire, at most
     *                  {@link CoordinationLimits#MAX_REQUEST_ID_LENGTH} characters
     * @return the lease, or the refusal as a {@link CoordinationException}
     */
    CompletableFuture<Lease> acquireAsync(String mailboxId, LeaseHolder holder, Duration ttl, String requestId);

    /**
     * Renews a lease: its holder's heartbeat. Renewals arriving together share one call.
     *
     * @param lease the lease as granted
     * @return the lease
     * @throws CoordinationException FAILED_PRECONDITION if it is no longer the mailbox's active lease
     */
    Lease renew(Lease lease);

    /**
     * Renews a lease without blocking. One attempt waits at most a third of the lease's TTL (or the client's
     * call timeout, if shorter) before the client tries another coordinator, so a renewal sent to a leader
     * that has just died is retried elsewhere well before the lease could lapse.
     *
     * @param lease the lease as granted
     * @return the lease, or the refusal as a {@link CoordinationException}
     */
    CompletableFuture<Lease> renewAsync(Lease lease);

    /**
     * Gives a lease up; releasing it again is harmless.
     *
     * @param lease the lease as granted
     * @return the released lease
     * @throws CoordinationException FAILED_PRECONDITION if it is not the mailbox's current lease
     */
    Lease release(Lease lease);

    /**
     * An operator takes a mailbox away: the epoch grows, the holder's renewals are refused, and the
     * mailbox stays unavailable until {@link #reclaim reclaimed}.
     *
     * @param mailboxId the mailbox
     * @return the revoking lease
     * @throws CoordinationException NOT_FOUND if it never had a lease, FAILED_PRECONDITION if it has no live one
     */
    Lease revoke(String mailboxId);

    /**
     * Frees a revoked mailbox.
     *
     * @param mailboxId the mailbox
     * @return the revoked lease
     * @throws CoordinationException FAILED_PRECONDITION unless it is revoking (or already revoked)
     */
    Lease reclaim(String mailboxId);

    /**
     * @param mailboxId the mailbox
     * @return its latest lease (live or ended) as the leader sees it, or empty if it never had one
     */
    default Optional<Lease> get(String mailboxId) {
        return get(mailboxId, (ReadConsistency) null);
    }

    /**
     * @param mailboxId   the mailbox
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return its latest lease, or empty if it never had one
     */
    Optional<Lease> get(String mailboxId, @Nullable ReadConsistency consistency);

    /**
     * @param namespace a namespace, or "" for every namespace
     * @return every mailbox's latest lease in it, by mailbox id, as the leader sees it
     */
    default List<Lease> list(String namespace) {
        return list(namespace, (ReadConsistency) null);
    }

    /**
     * @param namespace   a namespace, or "" for every namespace
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return every mailbox's latest lease in it, by mailbox id
     */
    List<Lease> list(String namespace, @Nullable ReadConsistency consistency);

    /**
     * A {@link ReadConsistency#STALE} read of the leases, answered by whichever coordinator is asked, with
     * that coordinator's applied index, so that the caller can tell how stale the answer may be.
     *
     * @param namespace a namespace, or "" for every namespace
     * @return every mailbox's latest lease in it as the answering node has applied them, and its index
     */
    StaleRead<List<Lease>> listStale(String namespace);

    /**
     * Starts building a {@link LeaseKeeper} that acquires a mailbox and keeps it.
     *
     * @param mailboxId the mailbox
     * @param holder    who holds it
     * @return the keeper's builder
     */
    default LeaseKeeper.Builder keeper(String mailboxId, LeaseHolder holder) {
        return LeaseKeeper.builder(this, mailboxId, holder);
    }
}
