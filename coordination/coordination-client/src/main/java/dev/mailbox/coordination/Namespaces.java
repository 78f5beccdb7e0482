package dev.mailbox.coordination;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Namespaces and their lease policies. Get it from {@link CoordinationClient#namespaces()}. Names follow
 * {@link CoordinationLimits#namespaceProblem}. Thread-safe.
 */
public interface Namespaces {

    /**
     * Creates a namespace. Safe to retry: when the namespace exists already with exactly this policy and
     * these labels (made by an earlier attempt whose answer was lost, or by anyone else asking the same),
     * it is returned as if made now.
     *
     * @param name   the name
     * @param policy the lease policy of its mailboxes, or null for {@link LeasePolicy#DEFAULT}
     * @param labels free-form labels (see {@link CoordinationLimits#labelsProblem})
     * @return the namespace, with its partition and current owner
     * @throws CoordinationException ALREADY_EXISTS if it exists with another policy or other labels
     */
    NamespaceInfo create(String name, @Nullable LeasePolicy policy, Map<String, String> labels);

    /**
     * @param name a namespace
     * @return it, or empty if the leader does not know it
     */
    default Optional<NamespaceInfo> get(String name) {
        return get(name, (ReadConsistency) null);
    }

    /**
     * @param name        a namespace
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return it, or empty if it does not exist
     */
    Optional<NamespaceInfo> get(String name, @Nullable ReadConsistency consistency);

    /** @return every namespace, by name, as the leader has them */
    default List<NamespaceInfo> list() {
        return list((ReadConsistency) null);
    }

    /**
     * @param consistency how fresh the answer must be, or null for the coordinator's default for this read
     *                    ({@link ReadConsistency#LEADER_LEASE} unless its operator chose otherwise)
     * @return every namespace, by name
     */
    List<NamespaceInfo> list(@Nullable ReadConsistency consistency);

    /**
     * A {@link ReadConsistency#STALE} read of the namespaces, answered by whichever coordinator is asked,
     * with that coordinator's applied index, so that the caller can tell how stale the answer may be.
     *
     * @return every namespace, by name, as the answering node has applied them, and its index
     */
    StaleRead<List<NamespaceInfo>> listStale();

    /**
     * Sets a namespace's lease policy; leases granted afterwards use it. The namespace need not have
     * been created.
     *
     * @param namespace the namespace
     * @param policy    its policy
     */
    void setPolicy(String namespace, LeasePolicy policy);

    /**
     * @param namespace the namespace
     * @return its policy ({@link LeasePolicy#DEFAULT} unless one was set)
     */
    LeasePolicy policy(String namespace);
}
