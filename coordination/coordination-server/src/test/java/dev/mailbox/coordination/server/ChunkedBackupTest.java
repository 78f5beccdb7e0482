package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.ExportStateRequest;
import dev.mailbox.coordination.proto.ImportChunkReply;
import dev.mailbox.coordination.proto.ImportChunkRequest;
import dev.mailbox.coordination.proto.ImportStateRequest;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backups in chunks (issue 30, findings 1 and 2): an import that breaks off resumes from where the cluster got to,
 * across a snapshot and a restart of the importing coordinator; bad chunks are refused and change nothing; exports
 * that a client stops reading hold a bounded number of slots; the whole state in one message is no longer served.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChunkedBackupTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final int CHUNK = CoordinationLimits.MAX_IMPORT_CHUNK_BYTES;

    @TempDir
    Path dir;

    @Test
    @DisplayName("an import broken off after some chunks, with a snapshot and a restart in between, resumes where "
            + "the cluster got to: only the rest is sent, and the state is whole")
    void resumesAcrossSnapshotAndRestart() throws Exception {
        Path backup = backup(dir.resolve("backup"), 300, "");
        byte[] file = Files.readAllBytes(backup);
        int chunks = (file.length + CHUNK - 1) / CHUNK;
        assertThat(chunks).isGreaterThan(15);
        String id = sha256(file);
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(1_000_000).start()) {
            cluster.awaitLeader(PATIENCE);
            // an importer that got this far and then died
            try (Stub stub = new Stub(cluster)) {
                for (int i = 0; i < 10; i++) {
                    assertThat(stub.send(id, file, i).getNextOffset()).isEqualTo((long) (i + 1) * CHUNK);
                }
                assertThat(cluster.node("n1").takeSnapshot()).as("a snapshot with the import in progress").isPositive();
                for (int i = 10; i < 12; i++) { // in the log after the snapshot
                    stub.send(id, file, i);
                }
            }
            cluster.stop("n1");
            cluster.start("n1");
            cluster.awaitLeader(PATIENCE);

            CoordinationClient client = cluster.client();
            long before = cluster.node("n1").appliedIndex();
            assertThat(client.cluster().importState(backup).queues()).isEqualTo(300);
            long entries = cluster.node("n1").appliedIndex() - before;
            // one chunk to learn where the cluster got to, then the rest: never the first twelve again. Each command
            // may be followed by a Ratis metadata entry (the commit index), so a command takes one or two indexes;
            // starting over would have taken at least 27 for the commands alone, and some 54 in all
            assertThat(entries).isBetween(1L + chunks - 12, 2L * (1 + chunks - 12));

            Path exported = dir.resolve("exported");
            client.cluster().exportState(exported);
            assertThat(records(exported)).isEqualTo(records(backup));
        }
    }

    @Test
    @DisplayName("a chunk damaged on its way, one that overlaps, one of an import that another replaced and the whole "
            + "state in one message are refused, and change nothing")
    void refusals() throws Exception {
        Path backup = backup(dir.resolve("backup"), 60, "");
        Path other = backup(dir.resolve("other"), 60, "-other");
        byte[] file = Files.readAllBytes(backup);
        String id = sha256(file);
        try (TestingCluster cluster = TestingCluster.start(1); Stub stub = new Stub(cluster)) {
            cluster.awaitLeader(PATIENCE);
            stub.send(id, file, 0);
            ImportChunkRequest damaged = stub.request(id, file, 1).toBuilder()
                    .setCrc32C(stub.request(id, file, 1).getCrc32C() ^ 1).build();
            assertThatThrownBy(() -> stub.call(damaged)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                    .hasMessageContaining("CRC-32C");
            ImportChunkRequest overlapping = stub.request(id, file, 0).toBuilder().setOffset(CHUNK / 2).build();
            assertThatThrownBy(() -> stub.call(overlapping)).hasMessageContaining("overlaps");
            ImportChunkRequest gap = stub.request(id, file, 3);
            assertThat(stub.call(gap).getNextOffset()).as("a gap: go on from what the cluster has").isEqualTo(CHUNK);
            assertThat(stub.send(id, file, 0).getNextOffset()).as("nothing changed").isEqualTo(CHUNK);

            // another file's first chunk replaces the import in progress: the last importer wins
            byte[] second = Files.readAllBytes(other);
            stub.send(sha256(second), second, 0);
            assertThatThrownBy(() -> stub.send(id, file, 1)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION))
                    .hasMessageContaining("replaced");
            assertThat(cluster.client().cluster().importState(other).queues()).isEqualTo(60);

            ControlPlaneGrpc.ControlPlaneBlockingStub blocking = ControlPlaneGrpc.newBlockingStub(stub.channel);
            assertThatThrownBy(() -> blocking.exportState(ExportStateRequest.getDefaultInstance()))
                    .hasMessageContaining("in chunks");
            assertThatThrownBy(() -> blocking.importState(ImportStateRequest.newBuilder()
                    .setSnapshot(ByteString.copyFrom(file, 0, 1_000)).build())).hasMessageContaining("in chunks");
        }
    }

    @Test
    @DisplayName("exports whose clients stop reading hold at most two slots: a third is refused RESOURCE_EXHAUSTED, and "
            + "once they end another export runs")
    void exportsAreBounded() throws Exception {
        Path backup = backup(dir.resolve("backup"), 200, "");
        try (TestingCluster cluster = TestingCluster.start(1); Stub stub = new Stub(cluster)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.cluster().importState(backup);
            java.util.List<io.grpc.stub.ClientCallStreamObserver<ExportStateRequest>> stalled = new java.util.ArrayList<>();
            java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(2);
            for (int i = 0; i < 2; i++) {
                ControlPlaneGrpc.newStub(stub.channel).exportStateStream(ExportStateRequest.getDefaultInstance(),
                        new io.grpc.stub.ClientResponseObserver<ExportStateRequest,
                                dev.mailbox.coordination.proto.ExportStateChunk>() {
                            @Override
                            public void beforeStart(io.grpc.stub.ClientCallStreamObserver<ExportStateRequest> call) {
                                call.disableAutoRequestWithInitial(1); // takes one chunk, then nothing
                                stalled.add(call);
                            }

                            @Override
                            public void onNext(dev.mailbox.coordination.proto.ExportStateChunk chunk) {
                                first.countDown();
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
            }
            assertThat(first.await(30, TimeUnit.SECONDS)).as("both exports began").isTrue();
            java.util.Iterator<dev.mailbox.coordination.proto.ExportStateChunk> third = ControlPlaneGrpc
                    .newBlockingStub(stub.channel).exportStateStream(ExportStateRequest.getDefaultInstance());
            assertThatThrownBy(third::hasNext).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED))
                    .hasMessageContaining("exports already");

            stalled.forEach(c -> c.cancel("done", null));
            TestingCluster.await(PATIENCE, () -> {
                try {
                    client.cluster().exportState(dir.resolve("after"));
                    return true;
                } catch (dev.mailbox.coordination.CoordinationException e) {
                    return false; // the cancelled exports are still letting go of their slots
                }
            }, "an export runs once the stalled ones ended");
            assertThat(records(dir.resolve("after"))).isEqualTo(records(backup));
        }
    }

    /** Sends chunks of a file by hand, as an importer that stops half way would. */
    private static final class Stub implements AutoCloseable {
        final ManagedChannel channel;

        Stub(TestingCluster cluster) {
            channel = dev.mailbox.coordination.internal.Tls.channel(cluster.endpoint("n1"), ClientSecurity.none())
                    .build();
        }

        ImportChunkRequest request(String id, byte[] file, int chunk) {
            int from = chunk * CHUNK;
            int to = Math.min(file.length, from + CHUNK);
            byte[] data = Arrays.copyOfRange(file, from, to);
            CRC32C crc = new CRC32C();
            crc.update(data);
            return ImportChunkRequest.newBuilder().setImportId(id).setOffset(from).setData(ByteString.copyFrom(data))
                    .setCrc32C((int) crc.getValue()).setLast(to == file.length).build();
        }

        ImportChunkReply send(String id, byte[] file, int chunk) {
            return call(request(id, file, chunk));
        }

        ImportChunkReply call(ImportChunkRequest r) {
            return ControlPlaneGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).importStateChunk(r);
        }

        @Override
        public void close() {
            channel.shutdownNow();
        }
    }

    /** A backup of {@code queues} queues with some 50 KB of attributes and tags each. */
    static Path backup(Path file, int queues, String suffix) throws Exception {
        LeaseTable table = new LeaseTable();
        for (int q = 0; q < queues; q++) {
            Map<String, String> attrs = Map.of("Policy", ("p" + q + suffix).repeat(5_000).substring(0, 10_000));
            Map<String, String> tags = new java.util.TreeMap<>();
            for (int t = 0; t < CoordinationLimits.MAX_QUEUE_TAGS; t++) {
                tags.put("tag-" + t, ("v" + q + suffix).repeat(256).substring(0, 256));
            }
            table.apply(q + 1, 1, new Command.CreateQueue(new QueueInfo("q-" + q, attrs, tags, 1_000, 1_000), 1_000));
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
            table.writeExport(out);
        }
        return file;
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** The records of a backup (not its header: each cluster's own position), as one digest. */
    private static String records(Path file) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (var in = new java.io.BufferedInputStream(Files.newInputStream(file))) {
            dev.mailbox.coordination.proto.state.SnapshotHeader.parseDelimitedFrom(in);
            for (dev.mailbox.coordination.proto.state.SnapshotRecord r;
                 (r = dev.mailbox.coordination.proto.state.SnapshotRecord.parseDelimitedFrom(in)) != null; ) {
                if (!r.hasEnd()) {
                    sha.update(r.toByteArray());
                }
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
