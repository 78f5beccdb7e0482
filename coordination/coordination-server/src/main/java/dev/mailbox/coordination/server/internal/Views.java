package dev.mailbox.coordination.server.internal;

import com.google.protobuf.MessageLite;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.ListNamespacesReply;
import dev.mailbox.coordination.proto.ListNodesReply;
import dev.mailbox.coordination.proto.NamespaceReply;
import dev.mailbox.coordination.proto.PartitionMapReply;
import dev.mailbox.coordination.proto.RoutesReply;
import dev.mailbox.coordination.proto.state.View;

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
     * @return the reply message; a NamespaceReply (QueueReply) without a namespace (queue) for one that does not exist
     */
    public static MessageLite answer(View view, LeaseTable table) {
        return switch (view.getKind()) {
            case NODES -> {
                ListNodesReply.Builder b = ListNodesReply.newBuilder();
                table.nodes().forEach(n -> b.addNodes(Protos.toProto(n)));
                yield b.build();
            }
            case PARTITIONS -> {
                PartitionMapReply.Builder b = PartitionMapReply.newBuilder().setAppliedIndex(table.appliedIndex());
                table.partitionMap().ranges().forEach(x -> b.addRanges(Protos.toProto(x)));
                yield b.build();
            }
            case NAMESPACE -> {
                NamespaceInfo ns = table.namespace(view.getNamespace());
                yield ns == null ? NamespaceReply.getDefaultInstance()
                        : NamespaceReply.newBuilder().setNamespace(Protos.toProto(ns)).build();
            }
            case NAMESPACES -> {
                ListNamespacesReply.Builder b = ListNamespacesReply.newBuilder();
                table.namespaces().forEach(n -> b.addNamespaces(Protos.toProto(n)));
                yield b.build();
            }
            case ROUTES -> {
                RoutesReply.Builder b = RoutesReply.newBuilder().setRevision(table.routesRevision());
                table.routes().forEach(x -> b.addRoutes(Protos.toProto(x)));
                yield b.build();
            }
            // the whole state in one answer: copies of it all at once on the leader and whoever relayed it (issue 30,
            // finding 1); a coordinator of this version exports in chunks from its own state, and never asks this
            case STATE -> throw new IllegalArgumentException("the whole state is not answered in one read: export it "
                    + "in chunks (ExportStateStream)");
            case QUEUE -> {
                dev.mailbox.coordination.QueueInfo q = table.queue(view.getNamespace());
                yield q == null ? dev.mailbox.coordination.proto.QueueReply.getDefaultInstance()
                        : dev.mailbox.coordination.proto.QueueReply.newBuilder().setQueue(Protos.toProto(q)).build();
            }
            case QUEUES -> dev.mailbox.coordination.proto.ListQueuesReply.newBuilder()
                    .addAllNames(table.queueNames(view.getPrefix(), view.getAfter(), view.getLimit())).build();
            case KIND_UNSPECIFIED, UNRECOGNIZED -> throw new IllegalArgumentException("unknown view " + view.getKind());
        };
    }
}
