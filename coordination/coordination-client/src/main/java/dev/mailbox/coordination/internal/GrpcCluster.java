package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Cluster;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.proto.AddMemberRequest;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import com.google.protobuf.ByteString;
import dev.mailbox.coordination.proto.Consistency;
import dev.mailbox.coordination.proto.ExportStateRequest;
import dev.mailbox.coordination.proto.MembersReply;
import dev.mailbox.coordination.proto.RemoveMemberRequest;
import java.util.Map;

/** {@link Cluster} over the control plane. */
final class GrpcCluster implements Cluster {

    private final ControlPlaneCalls calls;

    GrpcCluster(ControlPlaneCalls calls) {
        this.calls = calls;
    }

    @Override
    public ClusterStatus status() {
        return CoordinationException.await(calls.call(s -> s.clusterStatus(ClusterStatusRequest.getDefaultInstance()))
                .thenApply(Protos::fromProto));
    }

    @Override
    public Map<String, ClusterStatus> statusOfEach() {
        return calls.statusOfEach();
    }

    @Override
    public Map<String, String> addMember(String nodeId, String raftAddress) {
        CoordinationLimits.require(CoordinationLimits.nodeIdProblem(nodeId));
        CoordinationLimits.require(CoordinationLimits.addressProblem(raftAddress));
        AddMemberRequest r = AddMemberRequest.newBuilder().setNodeId(nodeId).setRaftAddress(raftAddress).build();
        return CoordinationException.await(calls.call(s -> s.addMember(r), MEMBERSHIP_MILLIS, false)
                .thenApply(GrpcCluster::members));
    }

    @Override
    public Map<String, String> removeMember(String nodeId) {
        CoordinationLimits.require(CoordinationLimits.nodeIdProblem(nodeId));
        RemoveMemberRequest r = RemoveMemberRequest.newBuilder().setNodeId(nodeId).build();
        return CoordinationException.await(calls.call(s -> s.removeMember(r), MEMBERSHIP_MILLIS, false)
                .thenApply(GrpcCluster::members));
    }

    /** How long an export may go without a chunk: the coordinator writes the whole state before the first. */
    private long exportIdleMillis() {
        return Math.max(calls.callTimeout().toMillis(), 60_000);
    }

    @Override
    public Exported exportState(java.nio.file.Path file) {
        java.util.Objects.requireNonNull(file, "file");
        CoordinationException last = null;
        for (int attempt = 1; attempt <= Math.max(1, calls.maxAttempts()); attempt++) {
            io.grpc.ManagedChannel channel = calls.currentChannel();
            try {
                return exportOnce(channel, file);
            } catch (CoordinationException e) {
                last = e;
                if (!e.isRetryable()) {
                    throw e;
                }
                calls.moveOn(channel); // start again, from another coordinator
            }
        }
        throw last;
    }

    private Exported exportOnce(io.grpc.ManagedChannel channel, java.nio.file.Path file) {
        java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        ExportStateRequest r = ExportStateRequest.newBuilder().setConsistency(Consistency.LINEARIZABLE).build();
        io.grpc.Context.CancellableContext context = io.grpc.Context.current().withCancellation();
        java.util.concurrent.atomic.AtomicLong progressAt = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
        long idle = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(exportIdleMillis());
        // a coordinator that stops sending is given up on (the blocking stream has no deadline of its own: a large
        // state takes as long as it takes, as long as it moves)
        java.util.concurrent.ScheduledFuture<?> watchdog = calls.scheduler().scheduleWithFixedDelay(() -> {
            if (System.nanoTime() - progressAt.get() > idle) {
                context.cancel(new java.util.concurrent.TimeoutException("the coordinator sent nothing for "
                        + exportIdleMillis() + " ms"));
            }
        }, 1, 1, java.util.concurrent.TimeUnit.SECONDS);
        boolean done = false;
        try (java.nio.channels.FileChannel out = createPrivate(tmp)) {
            Exported exported = context.call(() -> {
                java.util.Iterator<dev.mailbox.coordination.proto.ExportStateChunk> chunks =
                        dev.mailbox.coordination.proto.ControlPlaneGrpc.newBlockingStub(channel).exportStateStream(r);
                java.security.MessageDigest sha = BackupFiles.sha256();
                long offset = 0;
                long total = -1;
                long index = -1;
                while (chunks.hasNext()) {
                    dev.mailbox.coordination.proto.ExportStateChunk c = chunks.next();
                    progressAt.set(System.nanoTime());
                    if (c.getOffset() != offset) {
                        throw damaged("a chunk at offset " + c.getOffset() + " where " + offset + " was due");
                    }
                    if (offset == 0) {
                        total = c.getTotalBytes();
                        index = c.getAppliedIndex();
                    }
                    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                    c.getData().asReadOnlyByteBufferList().forEach(crc::update);
                    if ((int) crc.getValue() != c.getCrc32C()) {
                        throw damaged("the chunk at offset " + offset + " does not match its CRC-32C");
                    }
                    for (java.nio.ByteBuffer b : c.getData().asReadOnlyByteBufferList()) {
                        sha.update(b.duplicate());
                        while (b.hasRemaining()) {
                            out.write(b);
                        }
                    }
                    offset += c.getData().size();
                    if (c.getLast()) {
                        byte[] actual = sha.digest();
                        if (offset != total || !java.security.MessageDigest.isEqual(actual, c.getSha256().toByteArray())) {
                            throw damaged("the file came to " + offset + " of " + total + " bytes with SHA-256 "
                                    + java.util.HexFormat.of().formatHex(actual) + ", not the coordinator's "
                                    + java.util.HexFormat.of().formatHex(c.getSha256().toByteArray()));
                        }
                        return new Exported(offset, index, java.util.HexFormat.of().formatHex(actual));
                    }
                }
                throw new CoordinationException(CoordinationException.Reason.UNAVAILABLE, "the export ended after "
                        + offset + " of " + total + " bytes", null);
            });
            out.force(true); // durable before it takes the backup's name
            done = true;
            return exported;
        } catch (CoordinationException e) {
            throw e;
        } catch (io.grpc.StatusRuntimeException e) {
            throw calls.failure(e, calls.endpointIndex(channel));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot write " + tmp + ": " + e.getMessage(), e);
        } catch (Exception e) {
            throw calls.failure(e, calls.endpointIndex(channel));
        } finally {
            watchdog.cancel(false);
            context.cancel(null);
            if (done) {
                try {
                    java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException("cannot rename " + tmp + " to " + file + ": "
                            + e.getMessage(), e);
                }
            } else {
                try {
                    java.nio.file.Files.deleteIfExists(tmp);
                } catch (java.io.IOException e) {
                    // the next export truncates it
                }
            }
        }
    }

    /** A file only its owner may read ({@code 0600}), where the file system has such permissions. */
    private static java.nio.channels.FileChannel createPrivate(java.nio.file.Path file) throws java.io.IOException {
        java.util.Set<java.nio.file.OpenOption> options = java.util.Set.of(java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
        if (java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, options,
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            // an existing file keeps its mode through CREATE: make it the owner's alone too
            java.nio.file.Files.setPosixFilePermissions(file,
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            return ch;
        }
        return java.nio.channels.FileChannel.open(file, options);
    }

    private static CoordinationException damaged(String what) {
        // damaged on the way (or a coordinator at fault): retrying, perhaps elsewhere, may help
        return new CoordinationException(CoordinationException.Reason.UNAVAILABLE, "the export was damaged on its way: "
                + what, null);
    }

    @Override
    public Imported importState(java.nio.file.Path file) {
        BackupFiles.Checked checked = BackupFiles.check(java.util.Objects.requireNonNull(file, "file"));
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(CoordinationLimits.MAX_IMPORT_CHUNK_BYTES);
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.READ)) {
            if (in.size() != checked.size()) {
                throw new IllegalArgumentException(file + " changed while it was checked");
            }
            long offset = 0; // the cluster says where to go on: a resumed import skips what it has
            while (true) {
                buffer.clear();
                if (checked.size() - offset < buffer.capacity()) {
                    buffer.limit((int) (checked.size() - offset));
                }
                while (buffer.hasRemaining()) {
                    if (in.read(buffer, offset + buffer.position()) < 0) {
                        throw new IllegalArgumentException(file + " became shorter while it was imported");
                    }
                }
                buffer.flip();
                ByteString data = ByteString.copyFrom(buffer);
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                data.asReadOnlyByteBufferList().forEach(crc::update);
                long from = offset;
                boolean last = from + data.size() == checked.size();
                dev.mailbox.coordination.proto.ImportChunkRequest r = dev.mailbox.coordination.proto.ImportChunkRequest
                        .newBuilder().setImportId(checked.sha256()).setOffset(from).setData(data)
                        .setCrc32C((int) crc.getValue()).setLast(last).build();
                // a chunk applied twice (a retry after a lost answer) changes nothing: retried like any call
                dev.mailbox.coordination.proto.ImportChunkReply reply = CoordinationException.await(
                        calls.call(s -> s.importStateChunk(r)));
                if (reply.getDone()) {
                    dev.mailbox.coordination.proto.ImportStateReply x = reply.getImported();
                    return new Imported(x.getNamespaces(), x.getLeases(), x.getNodes(), x.getQueues());
                }
                offset = reply.getNextOffset();
                if (offset < 0 || offset > checked.size() || (last && offset == from + data.size())) {
                    throw new CoordinationException(CoordinationException.Reason.INTERNAL, "the coordinator answered "
                            + "the chunk at offset " + from + " of " + checked.size() + " with offset " + offset, null);
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(BackupFiles.describe(file, e), e);
        }
    }


    /** A membership change waits while the leader copies a new member the state: allow it a minute. */
    private static final long MEMBERSHIP_MILLIS = 60_000;

    private static Map<String, String> members(MembersReply reply) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        reply.getMembersList().forEach(m -> out.put(m.getNodeId(), m.getAddress()));
        return out;
    }
}
