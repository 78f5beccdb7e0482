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
    public static final int FORMAT = 7;

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
        } else if (command instanceof Command.ImportChunk c) {
            b.setImportChunk(dev.mailbox.coordination.proto.state.ImportChunk.newBuilder().setImportId(c.importId())
                    .setOffset(c.offset()).setData(c.data()).setCrc32C(c.crc32c()).setLast(c.last()));
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
            case IMPORT_CHUNK -> {
                dev.mailbox.coordination.proto.state.ImportChunk ic = e.getImportChunk();
                yield new Command.ImportChunk(ic.getImportId(), ic.getOffset(), ic.getData(), ic.getCrc32C(),
                        ic.getLast(), now);
            }
            case COMMAND_NOT_SET -> throw new IllegalArgumentException("log entry of format " + e.getFormat()
                    + " carries no command this coordinator knows (field numbers " + e.getUnknownFields().asMap().keySet()
                    + "); it was written by a newer coordinator");
        };
        return new Entry(e.getFormat(), c);
    }

    // --- snapshots -------------------------------------------------------------------------------

    /**
     * Writes the whole table: a header, every record in a fixed sorted order (policies, leases, history,
     * request ids, holder secrets, nodes, namespaces, queues, then an import in progress and its staged records),
     * and an end record. Equal tables write equal bytes.
     *
     * @param table the table
     * @param out   where to
     * @throws IOException if writing fails
     */
    static void writeSnapshot(LeaseTable table, OutputStream out) throws IOException {
        writeSnapshot(table, out, false);
    }

    /**
     * Writes the table as a backup: without an import in progress (not part of the state) and with the SHA-256 of
     * every byte before the end record in it, so that a damaged copy is told from a good one wherever it is read.
     *
     * @param table the table
     * @param out   where to
     * @throws IOException if writing fails
     */
    static void writeExport(LeaseTable table, OutputStream out) throws IOException {
        writeSnapshot(table, out, true);
    }

    private static void writeSnapshot(LeaseTable table, OutputStream out, boolean export) throws IOException {
        java.security.MessageDigest sha = export ? SnapshotParser.sha256() : null;
        CodedOutputStream coded = CodedOutputStream.newInstance(sha == null ? out
                : new java.security.DigestOutputStream(out, sha));
        coded.useDeterministicSerialization(); // protobuf maps: sorted, so replicas write the same bytes
        SnapshotHeader.Builder header = SnapshotHeader.newBuilder().setFormat(FORMAT)
                .setAppliedIndex(table.appliedIndex()).setLeaderTimeMillis(table.time())
                .setRoutesRevision(table.routesRevision());
        if (!export) {
            header.setLastImportId(table.lastImportId());
        }
        writeDelimited(coded, header.build());
        long[] records = {0};
        RecordSink sink = r -> {
            writeRecord(coded, r);
            records[0]++;
        };
        writeRecords(table, sink);
        ImportStaging staging = export ? null : table.staging();
        if (staging != null) {
            sink.accept(SnapshotRecord.newBuilder().setImportStaging(staging.toProto()).build());
            writeRecords(staging.staged(), r -> sink.accept(SnapshotRecord.newBuilder().setStaged(r).build()));
        }
        SnapshotEnd.Builder end = SnapshotEnd.newBuilder().setRecords(records[0]);
        if (sha != null) {
            coded.flush(); // every byte before the end record has passed through the digest
            end.setSha256(com.google.protobuf.ByteString.copyFrom(sha.digest()));
        }
        writeRecord(coded, SnapshotRecord.newBuilder().setEnd(end).build());
        coded.flush();
    }

    /** Where records go as they are written. */
    @FunctionalInterface
    private interface RecordSink {
        void accept(SnapshotRecord record) throws IOException;
    }

    private static void writeRecords(LeaseTable table, RecordSink sink) throws IOException {
        for (Map.Entry<String, LeasePolicy> p : table.policies().entrySet()) {
            LeasePolicy v = p.getValue();
            sink.accept(SnapshotRecord.newBuilder().setPolicy(NamespacePolicy.newBuilder()
                    .setNamespace(p.getKey()).setPolicy(policy(v))).build());
        }
        for (Lease l : table.leases()) {
            sink.accept(SnapshotRecord.newBuilder().setLease(Protos.toProto(l)).build());
        }
        for (Lease l : table.history()) {
            sink.accept(SnapshotRecord.newBuilder().setHistory(Protos.toProto(l)).build());
        }
        for (Map.Entry<String, String> r : table.requestIds().entrySet()) {
            sink.accept(SnapshotRecord.newBuilder().setRequestId(RequestId.newBuilder().setMailboxId(r.getKey())
                    .setRequestId(r.getValue()).addAllSuperseded(table.superseded(r.getKey()))
                    .setSequence(table.sequence(r.getKey()))).build());
        }
        for (Map.Entry<String, String> h : table.secretHashes().entrySet()) {
            sink.accept(SnapshotRecord.newBuilder().setHolderSecret(HolderSecret.newBuilder()
                    .setMailboxId(h.getKey()).setSha256(h.getValue())).build());
        }
        for (NodeInfo n : table.registeredNodes()) {
            sink.accept(SnapshotRecord.newBuilder().setNode(Protos.toProto(n)).build());
        }
        for (NamespaceInfo n : table.storedNamespaces()) {
            sink.accept(SnapshotRecord.newBuilder().setNamespace(StoredNamespace.newBuilder().setName(n.name())
                    .setPolicy(policy(n.policy())).putAllLabels(n.labels()).setCreatedAtMillis(n.createdAtMillis()))
                    .build());
        }
        for (dev.mailbox.coordination.QueueInfo q : table.queues()) {
            sink.accept(SnapshotRecord.newBuilder().setQueue(Protos.toProto(q)).build());
        }
    }

    /**
     * Reads a snapshot of any format up to {@link #FORMAT}, in bounded memory (see {@link SnapshotParser}): a
     * record at a time, its end record's SHA-256 checked where it has one.
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
        SnapshotParser parser = new SnapshotParser(into(table, true), true);
        byte[] chunk = new byte[64 << 10];
        for (int n; (n = buffered.read(chunk)) > 0; ) {
            parser.feed(chunk, 0, n);
        }
        if (!parser.ended()) {
            throw new IOException("snapshot is truncated after " + parser.records() + " records (no end record)");
        }
        return table;
    }

    /**
     * @param table        a table to fill
     * @param ownSnapshot  whether the records may include an import in progress (a node's own snapshot; an exported
     *                     state never does)
     * @return a parser target that restores records into the table
     */
    static SnapshotParser.Target into(LeaseTable table, boolean ownSnapshot) {
        return new SnapshotParser.Target() {
            @Override
            public void record(SnapshotRecord r) throws IOException {
                switch (r.getRecordCase()) {
                    case IMPORT_STAGING -> {
                        if (!ownSnapshot) {
                            throw new IOException("the state holds an import in progress of its own: it is a "
                                    + "coordinator's snapshot, not an exported state");
                        }
                        table.restoreStaging(new ImportStaging(r.getImportStaging()));
                    }
                    case STAGED -> {
                        ImportStaging staging = table.staging();
                        if (!ownSnapshot || staging == null) {
                            throw new IOException("snapshot has a staged record without an import in progress");
                        }
                        restore(staging.staged(), r.getStaged());
                    }
                    default -> restore(table, r);
                }
            }

            @Override
            public void end(SnapshotHeader header, SnapshotEnd end) {
                table.restorePosition(header.getAppliedIndex(), header.getLeaderTimeMillis(),
                        header.getRoutesRevision());
                if (ownSnapshot) {
                    table.restoreLastImportId(header.getLastImportId());
                }
            }
        };
    }

    /** Restores one record of a state (not the end, not an import's) into a table. */
    private static void restore(LeaseTable table, SnapshotRecord r) throws IOException {
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
            default -> throw new IOException("snapshot has a " + r.getRecordCase() + " record where a record of the "
                    + "state belongs");
        }
    }

    private static void writeRecord(CodedOutputStream out, SnapshotRecord record) throws IOException {
        writeDelimited(out, record);
    }

    private static void writeDelimited(CodedOutputStream out, com.google.protobuf.MessageLite m) throws IOException {
        out.writeUInt32NoTag(m.getSerializedSize());
        m.writeTo(out);
    }

    /**
     * @param format a snapshot header's format
     * @throws IOException if this coordinator cannot read it, naming both formats
     */
    static void requireReadableSnapshot(int format) throws IOException {
        try {
            requireReadable("snapshot", format);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
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
