package dev.mailbox.console;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RoutingSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import org.jspecify.annotations.Nullable;

/**
 * The {@link ConsoleSource} of a mailbox node: the cluster as its coordination client reads it (the client's
 * default read consistency; lease time left is the leader's to know, so it is not shown here), and the mailboxes
 * the node can reach. It needs no Ratis: only the coordination client and the mailboxes.
 */
public final class NodeConsoleSource implements ConsoleSource {

    /** The mailboxes a node can show. Thread-safe. */
    public interface Mailboxes {
        /** @return the ids of the mailboxes to list, sorted */
        SortedSet<String> ids();

        /**
         * @param mailboxId a mailbox id
         * @return the mailbox, if the node can reach it without creating it; the node keeps it (not closed by the
         *         console)
         */
        Optional<Mailbox<byte[]>> open(String mailboxId);
    }

    private final String nodeId;
    private final @Nullable CoordinationClient coordinators;
    private final Mailboxes mailboxes;

    /**
     * @param nodeId       the node's id
     * @param coordinators the client the node registers with, or null for a node without coordinators (then only
     *                     its mailboxes are shown)
     * @param mailboxes    the mailboxes it can show
     */
    public NodeConsoleSource(String nodeId, @Nullable CoordinationClient coordinators, Mailboxes mailboxes) {
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.coordinators = coordinators;
        this.mailboxes = Objects.requireNonNull(mailboxes, "mailboxes");
    }

    private CoordinationClient client() {
        if (coordinators == null) {
            throw new IllegalStateException("node " + nodeId + " runs without coordinators");
        }
        return coordinators;
    }

    @Override
    public String kind() {
        return "node";
    }

    @Override
    public String id() {
        return nodeId;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One status call per coordinator endpoint (each bounded by the client's call timeout); an endpoint that does
     * not answer is shown by its address, with role {@code UNREACHABLE} and a fault saying so.
     */
    @Override
    public List<ClusterStatus> coordinators() {
        CoordinationClient c = client();
        java.util.Map<String, ClusterStatus> answered = c.cluster().statusOfEach();
        List<ClusterStatus> out = new ArrayList<>(answered.values());
        out.sort(Comparator.comparing(ClusterStatus::nodeId));
        for (String endpoint : c.endpoints()) {
            if (!answered.containsKey(endpoint)) {
                out.add(new ClusterStatus(endpoint, "UNREACHABLE", null, -1, -1, -1, java.util.Map.of(),
                        "no answer from " + endpoint));
            }
        }
        return out;
    }

    @Override
    public List<NamespaceInfo> namespaces() {
        return client().namespaces().list();
    }

    @Override
    public List<NodeInfo> nodes() {
        return client().nodes().list();
    }

    @Override
    public List<Lease> leases() {
        return client().leases().list("");
    }

    @Override
    public RoutingSnapshot routes() {
        return client().routes().list();
    }

    @Override
    public SortedSet<String> mailboxIds() {
        return mailboxes.ids();
    }

    @Override
    public Optional<Mailbox<byte[]>> mailbox(String mailboxId) {
        return mailboxes.open(mailboxId);
    }
}
