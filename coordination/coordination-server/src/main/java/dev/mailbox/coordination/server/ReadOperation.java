package dev.mailbox.coordination.server;

import java.util.Locale;

/**
 * The control-plane reads whose consistency a caller may choose. When a request does not say (a
 * {@code CoordinationClient} read without a {@link dev.mailbox.coordination.ReadConsistency}, or a raw gRPC
 * request with {@code CONSISTENCY_UNSPECIFIED}), the coordinator applies its default for the operation:
 * {@link dev.mailbox.coordination.ReadConsistency#LEADER_LEASE} unless
 * {@link CoordinatorNode.Builder#readConsistency} says otherwise.
 */
public enum ReadOperation {
    /** One mailbox's lease ({@code GetLease}). */
    GET_LEASE,
    /** The leases of a namespace ({@code ListLeases}). */
    LIST_LEASES,
    /** The mailbox nodes ({@code ListNodes}). */
    LIST_NODES,
    /** The partition map ({@code GetPartitionMap}). */
    PARTITION_MAP,
    /** One namespace ({@code GetNamespace}). */
    GET_NAMESPACE,
    /** The namespaces ({@code ListNamespaces}). */
    LIST_NAMESPACES,
    /** The routing table ({@code ListRoutes}). */
    LIST_ROUTES,
    /** A backup of the whole state ({@code ExportState}). */
    EXPORT_STATE,
    /** One queue record ({@code GetQueue}). */
    GET_QUEUE,
    /** Queue names ({@code ListQueues}). */
    LIST_QUEUES;

    /** @return the name operators write: lower case with dashes, e.g. {@code get-lease} */
    public String key() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * @param key an operation as {@link #key()} writes it (or its enum name), any case
     * @return the operation
     * @throws IllegalArgumentException naming the known operations if there is none of that name
     */
    public static ReadOperation parse(String key) {
        String k = key.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (ReadOperation op : values()) {
            if (op.name().equals(k)) {
                return op;
            }
        }
        StringBuilder known = new StringBuilder();
        for (ReadOperation op : values()) {
            known.append(known.length() == 0 ? "" : ", ").append(op.key());
        }
        throw new IllegalArgumentException("unknown read operation '" + key + "': expected one of " + known);
    }
}
