package dev.mailbox.console;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RoutingSnapshot;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;

/**
 * What the {@link Console} of one process shows, read when a page asks: the cluster as this process sees it and,
 * on a mailbox node, the mailboxes it can reach. A coordinator reads its own replicated state; a node asks the
 * coordinators through its client ({@link NodeConsoleSource}). The console authorizes every read before it calls
 * here, so a source returns everything it has; it bounds nothing either: the console pages what it sends.
 *
 * <p>A read may throw (a coordinator out of reach, no leader): the console shows that section's error and the
 * rest of the page. Implementations are thread-safe.
 */
public interface ConsoleSource {

    /** @return what this process is: {@code coordinator} or {@code node} */
    String kind();

    /** @return this process's id (the coordinator's or the node's) */
    String id();

    /**
     * @return the coordinators' statuses as this process sees them: a coordinator's own first (then what it knows
     *         of the others), a node's one per coordinator endpoint that answered
     */
    List<ClusterStatus> coordinators();

    /** @return every namespace with its lease policy */
    List<NamespaceInfo> namespaces();

    /** @return every registered mailbox node */
    List<NodeInfo> nodes();

    /** @return the latest lease of every mailbox that has one, in any state */
    List<Lease> leases();

    /**
     * @param lease a lease {@link #leases()} returned
     * @return how long it has before it expires unless renewed, in milliseconds, or -1 where this process cannot
     *         tell: renewals are kept in the leading coordinator's memory, so only the leader knows
     */
    default long timeLeftMillis(Lease lease) {
        return -1;
    }

    /** @return the routing table */
    RoutingSnapshot routes();

    /**
     * @return the ids of the mailboxes this process can show, sorted; none on a coordinator, which holds no
     *         messages
     */
    default SortedSet<String> mailboxIds() {
        return Collections.emptySortedSet();
    }

    /**
     * @param mailboxId a mailbox id
     * @return the mailbox, if this process can reach it without creating it (a node-local mailbox lives in one
     *         node only); not to be closed by the caller
     */
    default Optional<Mailbox<byte[]>> mailbox(String mailboxId) {
        return Optional.empty();
    }
}
