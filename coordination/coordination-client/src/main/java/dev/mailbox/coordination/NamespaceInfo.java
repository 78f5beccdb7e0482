package dev.mailbox.coordination;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A namespace: a named group of mailboxes ({@code namespace@node}) with one lease policy, placed on a
 * partition and, through the partition map, on a node.
 *
 * @param name            the name
 * @param partition       {@code crc32(name) % 256}
 * @param ownerNodeId     the live node whose partition range holds it when it was read, or null while no
 *                        node is up
 * @param policy          the lease policy of its mailboxes
 * @param labels          free-form labels
 * @param createdAtMillis when it was created (coordinator time, epoch millis)
 */
public record NamespaceInfo(String name, int partition, @Nullable String ownerNodeId, LeasePolicy policy,
                            Map<String, String> labels, long createdAtMillis) {

    /**
     * Checks the fields and copies the labels.
     */
    public NamespaceInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(policy, "policy");
        labels = Map.copyOf(new TreeMap<>(labels));
    }
}
