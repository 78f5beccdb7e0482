package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.proto.ListNamespacesReply;
import dev.mailbox.coordination.proto.ListNodesReply;
import dev.mailbox.coordination.proto.NamespaceReply;
import dev.mailbox.coordination.proto.PartitionMapReply;
import dev.mailbox.coordination.proto.RoutesReply;

/**
 * The control plane's replies for nodes, partitions, namespaces and routes, built from a lease table.
 * One place, because the same reply is built on the node that answers (stale reads) and, through a
 * Raft read, on the leader.
 */
public final class Views {

    private Views() {
    }

    /**
     * @param view  what to read
     * @param table the table to read it from (the caller holds the table's read lock)
     * @return the reply message's bytes; none for a namespace that does not exist
     */
    public static byte[] answer(Wire.Read.View view, LeaseTable table) {
        return switch (view.kind()) {
            case NODES -> {
                ListNodesReply.Builder b = ListNodesReply.newBuilder();
                table.nodes().forEach(n -> b.addNodes(Protos.toProto(n)));
                yield b.build().toByteArray();
            }
            case PARTITIONS -> {
                PartitionMapReply.Builder b = PartitionMapReply.newBuilder().setAppliedIndex(table.appliedIndex());
                table.partitionMap().ranges().forEach(x -> b.addRanges(Protos.toProto(x)));
                yield b.build().toByteArray();
            }
            case NAMESPACE -> {
                NamespaceInfo ns = table.namespace(view.arg());
                yield ns == null ? new byte[0]
                        : NamespaceReply.newBuilder().setNamespace(Protos.toProto(ns)).build().toByteArray();
            }
            case NAMESPACES -> {
                ListNamespacesReply.Builder b = ListNamespacesReply.newBuilder();
                table.namespaces().forEach(n -> b.addNamespaces(Protos.toProto(n)));
                yield b.build().toByteArray();
            }
            case ROUTES -> {
                RoutesReply.Builder b = RoutesReply.newBuilder().setRevision(table.routesRevision());
                table.routes().forEach(x -> b.addRoutes(Protos.toProto(x)));
                yield b.build().toByteArray();
            }
        };
    }
}
