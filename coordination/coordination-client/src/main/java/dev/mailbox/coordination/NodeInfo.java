package dev.mailbox.coordination;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A mailbox node as the coordinator knows it: the seeds' proxy. A node registers once and then keeps
 * its registration lease (mailbox {@code _nodes@<id>}, see {@link CoordinationLimits#NODES_NAMESPACE})
 * renewed; a node whose lease ends is down and owns no partitions until it registers again.
 *
 * @param id                 unique node id
 * @param address            {@code host:port} of the node's MailboxService
 * @param region             free-form placement hint, may be empty
 * @param version            the node's software version, may be empty
 * @param capabilities       what the node can host (for example backend names), may be empty
 * @param labels             free-form labels
 * @param up                 whether its registration lease is active
 * @param registeredAtMillis when it last registered (coordinator time, epoch millis)
 */
public record NodeInfo(String id, String address, String region, String version, List<String> capabilities,
                       Map<String, String> labels, boolean up, long registeredAtMillis) {

    /**
     * Checks the fields and copies the collections.
     */
    public NodeInfo {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(version, "version");
        capabilities = List.copyOf(capabilities);
        labels = Map.copyOf(new TreeMap<>(labels));
    }

    /**
     * A node to register.
     *
     * @param id      node id
     * @param address where its MailboxService listens
     * @return the info, with no region, version, capabilities or labels
     */
    public static NodeInfo of(String id, String address) {
        return new NodeInfo(id, address, "", "", List.of(), Map.of(), false, 0);
    }

    /**
     * @return the mailbox id of this node's registration lease
     */
    public String leaseMailboxId() {
        return CoordinationLimits.NODES_NAMESPACE + "@" + id;
    }
}
