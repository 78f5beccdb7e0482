package dev.mailbox.coordination.server.internal;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.state.Acquire;
import dev.mailbox.coordination.proto.state.CreateNamespace;
import dev.mailbox.coordination.proto.state.Expire;
import dev.mailbox.coordination.proto.state.HolderSecret;
import dev.mailbox.coordination.proto.state.LogEntry;
import dev.mailbox.coordination.proto.state.NamespacePolicy;
import dev.mailbox.coordination.proto.state.Policy;
import dev.mailbox.coordination.proto.state.Reclaim;
import dev.mailbox.coordination.proto.state.RegisterNode;
import dev.mailbox.coordination.proto.state.Release;
import dev.mailbox.coordination.proto.state.RequestId;
import dev.mailbox.coordination.proto.state.Revoke;
import dev.mailbox.coordination.proto.state.SetPolicy;
import dev.mailbox.coordination.proto.state.SnapshotEnd;
import dev.mailbox.coordination.proto.state.SnapshotHeader;
import dev.mailbox.coordination.proto.state.SnapshotRecord;
import dev.mailbox.coordination.proto.state.StoredNamespace;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;
import java.util.TreeMap;

/**
 * The coordinator's stored formats (see {@code coordinator_state.proto}): log entries and snapshots in
 * protobuf, with a format version. This class writes format {@link #FORMAT}; it reads every format up to
 * it (format 0 through {@link LegacyFormat}) and refuses a newer one with an error naming both.
 */
public final class StateCodec {

    /** The format this coordinator writes, and the newest it reads. */
    public static final int FORMAT = 6;

    private StateCodec() {
    }

    /**
     * A decoded log entry.
     *
     * @param format  the format it was written in
     * @param command its command
     */
    public record Entry(int format, Command command) {
    }

    // --- log entries -----------------------------------------------------------------------------

    /**
     * @param command a command, stamped with the leader's time
     * @return its log entry's bytes, in format {@link #FORMAT}
     */
    public static byte[] encode(Command command) {
        LogEntry.Builder b = LogEntry.newBuilder().setFormat(FORMAT).setLeaderTimeMillis(command.now());
        if (command instanceof Command.Acquire a) {
            b.setAcquire(Acquire.newBuilder().setMailboxId(a.mailboxId()).setRunnerId(a.runnerId()).setNodeId(a.nodeId())
                    .setAddress(a.address()).setTtlMillis(a.ttlMillis()).setRequestId(a.requestId())
                    .setHolderSecretSha256(a.secretHash()).setSequence(a.sequence()));
        } else if (command instanceof Command.Release r) {
            b.setRelease(Release.newBuilder().setMailboxId(r.mailboxId()).setLeaseId(r.leaseId()).setEpoch(r.epoch()));
        } else if (command instanceof Command.Expire e) {
            b.setExpire(Expire.newBuilder().setMailboxId(e.mailboxId()).setLeaseId(e.leaseId()).setEpoch(e.epoch())
                    .setTerm(e.term()));
        } else if (command instanceof Command.Revoke r) {
            b.setRevoke(Revoke.newBuilder().setMailboxId(r.mailboxId()));
        } else if (command instanceof Command.Reclaim r) {
            b.setReclaim(Reclaim.newBuilder().setMailboxId(r.mailboxId()));
        } else if (command instanceof Command.SetPolicy p) {
            b.setSetPolicy(SetPolicy.newBuilder().setNamespace(p.namespace())
                    .setPolicy(policy(p.ttlMillis(), p.heartbeatMillis(), p.graceMillis())));
        } else if (command instanceof Command.RegisterNode n) {
            b.setRegisterNode(RegisterNode.newBuilder().setNode(Protos.toProto(new NodeInfo(n.nodeId(), n.address(),
                    n.region(), n.version(), n.capabilities(), n.labels(), false, 0)))
                    .setTtlMillis(n.ttlMillis()).setRequestId(n.requestId()));
        } else if (command instanceof Command.CreateNamespace c) {
            CreateNamespace.Builder cb = CreateNamespace.newBuilder().setName(c.name()).putAllLabels(c.labels());
            if (c.ttlMillis() != 0 || c.heartbeatMillis() != 0 || c.graceMillis() != 0) {
                cb.setPolicy(policy(c.ttlMillis(), c.heartbeatMillis(), c.graceMillis()));
            }
            b.setCreateNamespace(cb);
        } else if (command instanceof Command.Restore r) {
            b.setRestore(dev.mailbox.coordination.proto.state.Restore.newBuilder().setSnapshot(r.snapshot()));
        } else if (command instanceof Command.CreateQueue c) {
            b.setCreateQueue(dev.mailbox.coordination.proto.state.CreateQueue.newBuilder().setQueue(Protos.toProto(c.queue())));
        } else if (command instanceof Command.UpdateQueue u) {
            b.setUpdateQueue(dev.mailbox.coordination.proto.state.UpdateQueue.newBuilder().setName(u.name())
                    .putAllSetAttributes(u.setAttributes()).addAllRemovedAttributes(u.removedAttributes())
                    .putAllSetTags(u.setTags()).addAllRemovedTags(u.removedTags())
                    .setModifiedAtMillis(u.modifiedAtMillis()));
        } else if (command instanceof Command.DeleteQueue d) {
            b.setDeleteQueue(dev.mailbox.coordination.proto.state.DeleteQueue.newBuilder().setName(d.name()));
        }
        return b.build().toByteArray();
    }

    /**
     * @param bytes a log entry of any format up to {@link #FORMAT}
     * @return its format and command
     * @throws IllegalArgumentException if the bytes are not an entry this coordinator can read, naming why
     *                                  (a newer format names both formats)
     */
    public static Entry decode(byte[] bytes) {
        if (bytes.length == 0) {
            throw new IllegalArgumentException("empty log entry");
        }
        if (LegacyFormat.isEntry(bytes[0])) {
            return new Entry(0, LegacyFormat.decodeEntry(bytes));
        }
        LogEntry e;
        try {
            e = LogEntry.parseFrom(bytes);
        } catch (InvalidProtocolBufferException x) {
            throw new IllegalArgumentException("unreadable log entry: " + x.getMessage(), x);
        }
        requireReadable("log entry", e.getFormat());
        long now = e.getLeaderTimeMillis();
        Command c = switch (e.getCommandCase()) {
            case ACQUIRE -> {
                Acquire a = e.getAcquire();
                yield new Command.Acquire(a.getMailboxId(), a.getRunnerId(), a.getNodeId(), a.getAddress(),
                        a.getTtlMillis(), a.getRequestId(), a.getHolderSecretSha256(), a.getSequence(), now);
            }
            case RELEASE -> new Command.Release(e.getRelease().getMailboxId(), e.getRelease().getLeaseId(),
                    e.getRelease().getEpoch(), now);
            case EXPIRE -> new Command.Expire(e.getExpire().getMailboxId(), e.getExpire().getLeaseId(),
                    e.getExpire().getEpoch(), e.getExpire().getTerm(), now);
            case REVOKE -> new Command.Revoke(e.getRevoke().getMailboxId(), now);
            case RECLAIM -> new Command.Reclaim(e.getReclaim().getMailboxId(), now);
            case SET_POLICY -> {
                Policy p = e.getSetPolicy().getPolicy();
                yield new Command.SetPolicy(e.getSetPolicy().getNamespace(), p.getTtlMillis(), p.getHeartbeatMillis(),
                        p.getGraceMillis(), now);
            }
            case REGISTER_NODE -> {
                RegisterNode r = e.getRegisterNode();
                NodeInfo n = Protos.fromProto(r.getNode());
                yield new Command.RegisterNode(n.id(), n.address(), n.region(), n.version(), n.capabilities(),
                        new TreeMap<>(n.labels()), r.getTtlMillis(), r.getRequestId(), now);
            }
            case CREATE_NAMESPACE -> {
                CreateNamespace cn = e.getCreateNamespace();
                Policy p = cn.getPolicy(); // all zero when absent: the default policy
                yield new Command.CreateNamespace(cn.getName(), p.getTtlMillis(), p.getHeartbeatMillis(),
                        p.getGraceMillis(), new TreeMap<>(cn.getLabelsMap()), now);
            }
            case RESTORE -> new Command.Restore(e.getRestore().getSnapshot(), now);
            case CREATE_QUEUE -> new Command.CreateQueue(Protos.fromProto(e.getCreateQueue().getQueue()), now);
            case UPDATE_QUEUE -> {
                dev.mailbox.coordination.proto.state.UpdateQueue u = e.getUpdateQueue();
                yield new Command.UpdateQueue(u.getName(), new TreeMap<>(u.getSetAttributesMap()),
                        new java.util.TreeSet<>(u.getRemovedAttributesList()), new TreeMap<>(u.getSetTagsMap()),
                        new java.util.TreeSet<>(u.getRemovedTagsList()), u.getModifiedAtMillis(), now);
            }
            case DELETE_QUEUE -> new Command.DeleteQueue(e.getDeleteQueue().getName(), now);
            case COMMAND_NOT_SET -> throw new IllegalArgumentException("log entry of format " + e.getFormat()
                    + " carries no command this coordinator knows (field numbers " + e.getUnknownFields().asMap().keySet()
                    + "); it was written by a newer coordinator");
        };
        return new Entry(e.getFormat(), c);
    }

    // --- snapshots -------------------------------------------------------------------------------

    /**
     * Writes the whole table: a header, every record in a fixed sorted order (policies, leases, history,
     * request ids, holder secrets, nodes, namespaces, queues), and an end record. Equal tables write equal bytes.
     *
     * @param table the table
     * @param out   where to
     * @throws IOException if writing fails
     */
    static void writeSnapshot(LeaseTable table, OutputStream out) throws IOException {
        CodedOutputStream coded = CodedOutputStream.newInstance(out);
        coded.useDeterministicSerialization(); // protobuf maps: sorted, so replicas write the same bytes
        writeDelimited(coded, SnapshotHeader.newBuilder().setFormat(FORMAT).setAppliedIndex(table.appliedIndex())
                .setLeaderTimeMillis(table.time()).setRoutesRevision(table.routesRevision()).build());
        long records = 0;
        for (Map.Entry<String, LeasePolicy> p : table.policies().entrySet()) {
            LeasePolicy v = p.getValue();
            writeRecord(coded, SnapshotRecord.newBuilder().setPolicy(NamespacePolicy.newBuilder()
                    .setNamespace(p.getKey()).setPolicy(policy(v))).build());
            records++;
        }
        for (Lease l : table.leases()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setLease(Protos.toProto(l)).build());
            records++;
        }
        for (Lease l : table.history()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setHistory(Protos.toProto(l)).build());
            records++;
        }
        for (Map.Entry<String, String> r : table.requestIds().entrySet()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setRequestId(RequestId.newBuilder().setMailboxId(r.getKey())
                    .setRequestId(r.getValue()).addAllSuperseded(table.superseded(r.getKey()))
                    .setSequence(table.sequence(r.getKey()))).build());
            records++;
        }
        for (Map.Entry<String, String> h : table.secretHashes().entrySet()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setHolderSecret(HolderSecret.newBuilder()
                    .setMailboxId(h.getKey()).setSha256(h.getValue())).build());
            records++;
        }
        for (NodeInfo n : table.registeredNodes()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setNode(Protos.toProto(n)).build());
            records++;
        }
        for (NamespaceInfo n : table.storedNamespaces()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setNamespace(StoredNamespace.newBuilder().setName(n.name())
                    .setPolicy(policy(n.policy())).putAllLabels(n.labels()).setCreatedAtMillis(n.createdAtMillis()))
                    .build());
            records++;
        }
        for (dev.mailbox.coordination.QueueInfo q : table.queues()) {
            writeRecord(coded, SnapshotRecord.newBuilder().setQueue(Protos.toProto(q)).build());
            records++;
        }
        writeRecord(coded, SnapshotRecord.newBuilder().setEnd(SnapshotEnd.newBuilder().setRecords(records)).build());
        coded.flush();
    }

    /**
     * Reads a snapshot of any format up to {@link #FORMAT}.
     *
     * @param in the snapshot
     * @return the table
     * @throws IOException if it is truncated, unreadable, or of a newer format (the message names both)
     */
    static LeaseTable readSnapshot(InputStream in) throws IOException {
        InputStream buffered = in.markSupported() ? in : new BufferedInputStream(in);
        buffered.mark(1);
        int first = buffered.read();
        if (first < 0) {
            throw new IOException("empty snapshot");
        }
        buffered.reset();
        LeaseTable table = new LeaseTable();
        if (first == 0) {
            DataInputStream data = new DataInputStream(buffered);
            int version = data.readInt();
            if (version != LegacyFormat.SNAPSHOT_VERSION) {
                throw new IOException("snapshot of format 0 has version " + version + "; format 0 wrote only "
                        + LegacyFormat.SNAPSHOT_VERSION);
            }
            LegacyFormat.readSnapshot(data, table);
            return table;
        }
        SnapshotHeader header = SnapshotHeader.parseDelimitedFrom(buffered);
        try {
            requireReadable("snapshot", header.getFormat());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        long records = 0;
        while (true) {
            SnapshotRecord r = SnapshotRecord.parseDelimitedFrom(buffered);
            if (r == null) {
                throw new IOException("snapshot is truncated after " + records + " records (no end record)");
            }
            switch (r.getRecordCase()) {
                case POLICY -> table.restorePolicy(r.getPolicy().getNamespace(), policy(r.getPolicy().getPolicy()));
                case LEASE -> table.restoreLease(Protos.fromProto(r.getLease()));
                case HISTORY -> table.restoreHistory(Protos.fromProto(r.getHistory()));
                case REQUEST_ID -> table.restoreRequestId(r.getRequestId().getMailboxId(),
                        r.getRequestId().getRequestId(), r.getRequestId().getSupersededList(),
                        r.getRequestId().getSequence());
                case NODE -> table.restoreNode(Protos.fromProto(r.getNode()));
                case HOLDER_SECRET -> table.restoreSecretHash(r.getHolderSecret().getMailboxId(),
                        r.getHolderSecret().getSha256());
                case NAMESPACE -> {
                    StoredNamespace n = r.getNamespace();
                    table.restoreNamespace(new NamespaceInfo(n.getName(), PartitionMap.partition(n.getName()), null,
                            policy(n.getPolicy()), n.getLabelsMap(), n.getCreatedAtMillis()));
                }
                case QUEUE -> table.restoreQueue(Protos.fromProto(r.getQueue()));
                case END -> {
                    if (r.getEnd().getRecords() != records) {
                        throw new IOException("snapshot end record counts " + r.getEnd().getRecords()
                                + " records, but " + records + " came before it");
                    }
                    table.restorePosition(header.getAppliedIndex(), header.getLeaderTimeMillis(),
                            header.getRoutesRevision());
                    return table;
                }
                case RECORD_NOT_SET -> throw new IOException("snapshot of format " + header.getFormat()
                        + " holds a record this coordinator does not know; it was written by a newer coordinator");
            }
            records++;
        }
    }

    private static void writeRecord(CodedOutputStream out, SnapshotRecord record) throws IOException {
        writeDelimited(out, record);
    }

    private static void writeDelimited(CodedOutputStream out, com.google.protobuf.MessageLite m) throws IOException {
        out.writeUInt32NoTag(m.getSerializedSize());
        m.writeTo(out);
    }

    private static void requireReadable(String what, int format) {
        if (format > FORMAT) {
            throw new IllegalArgumentException(what + " has format " + format + ", but this coordinator reads formats 0 to "
                    + FORMAT + ": it was written by a newer coordinator; upgrade this one");
        }
    }

    private static Policy policy(long ttl, long heartbeat, long grace) {
        return Policy.newBuilder().setTtlMillis(ttl).setHeartbeatMillis(heartbeat).setGraceMillis(grace).build();
    }

    private static Policy policy(LeasePolicy p) {
        return policy(p.ttl().toMillis(), p.heartbeatInterval().toMillis(), p.grace().toMillis());
    }

    private static LeasePolicy policy(Policy p) {
        return LeasePolicy.ofMillis(p.getTtlMillis(), p.getHeartbeatMillis(), p.getGraceMillis());
    }
}
