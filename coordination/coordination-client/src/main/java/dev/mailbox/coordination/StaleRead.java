package dev.mailbox.coordination;

import java.util.Objects;

/**
 * The answer of a {@link ReadConsistency#STALE} read, with how fresh it is. Any coordinator answers a
 * stale read from what it has applied, followers included, even without a leader; {@code appliedIndex}
 * says how far: the answering node had applied the replicated log at least up to that index when it
 * read, so the answer reflects every write committed at or below it. Compare it with an index known to
 * be committed ({@link ClusterStatus#commitIndex()} of any node, or the leader's) to bound the staleness:
 * {@code commitIndex - appliedIndex} entries at most were missing. The index is a lower bound taken before
 * the read, so it does not order two reads: one that reports a lower index may have seen more.
 *
 * @param value        the answer
 * @param appliedIndex the answering node's applied log index when it read (at least), 0 if it had applied
 *                     nothing
 * @param <T>          the answer's type
 */
public record StaleRead<T>(T value, long appliedIndex) {

    /** Checks the arguments. */
    public StaleRead {
        Objects.requireNonNull(value, "value");
        if (appliedIndex < 0) {
            throw new IllegalArgumentException("appliedIndex must be 0 or more, was " + appliedIndex);
        }
    }
}
