package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UnknownFieldSet;
import dev.mailbox.coordination.proto.state.LogEntry;
import dev.mailbox.coordination.proto.state.Revoke;
import dev.mailbox.coordination.proto.state.SnapshotHeader;
import dev.mailbox.coordination.server.internal.LeaseTable;
import dev.mailbox.coordination.server.internal.StateCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Old data stays readable. The golden files under {@code src/test/resources/golden} were written by the
 * coordinators of earlier commits, each with the state it recovers into, dumped by that code: format 0 by
 * commit 3bddf78, before the stored formats moved to protobuf (hand-written log entries, snapshot version
 * 3): a data dir holding only a log with every kind of command, one holding a snapshot plus the log after
 * it, and a bare snapshot file; format 1 by commit 8474aef (protobuf, before holder secrets): a snapshot
 * plus the log after it; format 2 by commit ab622c1 (holder secrets, before the Restore command): a
 * snapshot plus the log after it, in which a holder re-acquires with the secret kept in the snapshot and
 * another with a wrong one is refused; format 4 by the commit that added queue records (the Restore command of
 * format 3 has no fixture of its own): a snapshot holding queue records plus a log of queue creates, changes and
 * a delete after it. Today's coordinator must recover each into the same state, then keep it through a snapshot and a
 * restart in today's format; and it must refuse data of a newer format with an error naming both.
 */
class StoredFormatUpgradeTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    @DisplayName("a format-0 log of every command kind recovers into the state the old code reached")
    void logOnly() throws Exception {
        recoverAndCheck("log-only");
    }

    @Test
    @DisplayName("a format-0 snapshot plus the format-0 log after it recover into the same state")
    void snapshotAndLog() throws Exception {
        recoverAndCheck("snapshot-and-log");
    }

    @Test
    @DisplayName("a format-1 snapshot plus the format-1 log after it recover into the state that code reached")
    void format1() throws Exception {
        recoverAndCheck("format1");
    }

    @Test
    @DisplayName("a format-2 snapshot (holder secrets) plus the format-2 log after it recover into the state that code "
            + "reached; a re-acquire after the snapshot that needed the snapshot's secret replays the same")
    void format2() throws Exception {
        recoverAndCheck("format2");
    }

    @Test
    @DisplayName("a format-4 snapshot (queue records) plus the format-4 log after it (queue creates, changes and a "
            + "create of an existing queue) recover into the state that code reached")
    void format4() throws Exception {
        recoverAndCheck("format4");
    }

    @Test
    @DisplayName("the format-4 fixture holds queue records in its snapshot and queue commands in its log")
    void format4HoldsQueues() throws Exception {
        Path data = dir.resolve("n1");
        unzip("format4.zip", data);
        java.util.List<Path> files;
        try (Stream<Path> all = Files.walk(data)) {
            files = all.filter(Files::isRegularFile).toList();
        }
        Path snapshot = files.stream().filter(p -> p.getFileName().toString().startsWith("snapshot.")
                && !p.getFileName().toString().endsWith(".md5")).findFirst().orElseThrow();
        try (InputStream in = Files.newInputStream(snapshot)) {
            LeaseTable table = LeaseTable.readFrom(in);
            assertThat(table.queues()).extracting(q -> q.name()).containsExactly("orders", "orders-dlq");
        }
        byte[] first = Files.readAllBytes(snapshot);
        assertThat(SnapshotHeader.parseDelimitedFrom(new ByteArrayInputStream(first)).getFormat()).isEqualTo(4);
        assertThat(expected("format4")).contains("queue QueueInfo[name=payments").doesNotContain("name=scratch");
    }

    @Test
    @DisplayName("a bare version-3 snapshot file reads into the same table")
    void bareSnapshot() throws IOException {
        try (InputStream in = resource("table-v3.snapshot")) {
            assertThat(dump(LeaseTable.readFrom(in))).isEqualTo(expected("snapshot-and-log"));
        }
    }

    @Test
    @DisplayName("a table written in today's format reads back byte for byte")
    void roundTrip() throws IOException {
        LeaseTable old;
        try (InputStream in = resource("table-v3.snapshot")) {
            old = LeaseTable.readFrom(in);
        }
        byte[] once = bytes(old);
        assertThat(once[0]).as("a format-1 snapshot starts with its header's length").isNotZero();
        LeaseTable again = LeaseTable.readFrom(new ByteArrayInputStream(once));
        assertThat(bytes(again)).isEqualTo(once);
        assertThat(dump(again)).isEqualTo(expected("snapshot-and-log"));
    }

    @Test
    @DisplayName("a log entry of a newer format is refused with an error naming both formats")
    void newerLogEntry() {
        byte[] entry = LogEntry.newBuilder().setFormat(StateCodec.FORMAT + 1).setLeaderTimeMillis(1)
                .setRevoke(Revoke.newBuilder().setMailboxId("a@b")).build().toByteArray();
        assertThatThrownBy(() -> StateCodec.decode(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("format " + (StateCodec.FORMAT + 1))
                .hasMessageContaining("reads formats 0 to " + StateCodec.FORMAT);
    }

    @Test
    @DisplayName("a log entry carrying a command this version does not know is refused, not skipped")
    void unknownCommand() {
        byte[] entry = LogEntry.newBuilder().setFormat(StateCodec.FORMAT).setUnknownFields(UnknownFieldSet
                .newBuilder().addField(99, UnknownFieldSet.Field.newBuilder().addVarint(1).build()).build())
                .build().toByteArray();
        assertThatThrownBy(() -> StateCodec.decode(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no command this coordinator knows").hasMessageContaining("99");
    }

    @Test
    @DisplayName("a snapshot of a newer format is refused with an error naming both formats")
    void newerSnapshot() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SnapshotHeader.newBuilder().setFormat(StateCodec.FORMAT + 1).setAppliedIndex(5).build().writeDelimitedTo(out);
        assertThatThrownBy(() -> LeaseTable.readFrom(new ByteArrayInputStream(out.toByteArray())))
                .isInstanceOf(IOException.class).hasMessageContaining("format " + (StateCodec.FORMAT + 1))
                .hasMessageContaining("reads formats 0 to " + StateCodec.FORMAT);
    }

    @Test
    @DisplayName("a snapshot cut short is refused, not read as a smaller table")
    void truncatedSnapshot() throws IOException {
        LeaseTable old;
        try (InputStream in = resource("table-v3.snapshot")) {
            old = LeaseTable.readFrom(in);
        }
        byte[] whole = bytes(old);
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 5);
        assertThatThrownBy(() -> LeaseTable.readFrom(new ByteArrayInputStream(cut))).isInstanceOf(IOException.class);
    }

    private void recoverAndCheck(String fixture) throws Exception {
        Path data = dir.resolve("n1");
        unzip(fixture + ".zip", data);
        InetSocketAddress raft;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            raft = new InetSocketAddress("127.0.0.1", s.getLocalPort());
        }
        // the fixtures were written by a one-node cluster named "golden"
        CoordinatorNode.Builder b = CoordinatorNode.builder("n1").cluster("golden").peer("n1", raft).dataDir(data)
                .snapshotEvery(1_000_000);
        try (CoordinatorNode node = b.start()) {
            TestingCluster.await(PATIENCE, node::isLeader, "n1 leads");
            assertThat(dump(node.stateMachine().snapshotTable())).isEqualTo(expected(fixture));
            assertThat(node.takeSnapshot()).as("a snapshot in today's format").isPositive();
        }
        try (Stream<Path> files = Files.walk(data)) {
            assertThat(files.map(p -> p.getFileName().toString())).anyMatch(f -> f.startsWith("snapshot.")
                    && !f.endsWith(".md5"));
        }
        try (CoordinatorNode node = b.start()) {
            TestingCluster.await(PATIENCE, node::isLeader, "n1 leads again");
            assertThat(dump(node.stateMachine().snapshotTable())).as("after a restart from today's snapshot")
                    .isEqualTo(expected(fixture));
        }
    }

    private String expected(String fixture) throws IOException {
        try (InputStream in = resource(fixture + ".expected.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private InputStream resource(String name) {
        InputStream in = getClass().getResourceAsStream("/golden/" + name);
        assertThat(in).as("golden file %s", name).isNotNull();
        return in;
    }

    private void unzip(String resource, Path to) throws IOException {
        try (ZipInputStream z = new ZipInputStream(resource(resource))) {
            for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                Path p = to.resolve(e.getName());
                Files.createDirectories(p.getParent());
                Files.copy(z, p);
            }
        }
    }

    private static byte[] bytes(LeaseTable t) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        t.writeTo(out);
        return out.toByteArray();
    }

    /** One line per fact of the table, in the order and words the old code's dump used. */
    static String dump(LeaseTable t) {
        StringBuilder b = new StringBuilder();
        b.append("applied ").append(t.appliedIndex()).append('\n');
        b.append("time ").append(t.time()).append('\n');
        b.append("routes-revision ").append(t.routesRevision()).append('\n');
        t.policies().forEach((ns, p) -> b.append("policy ").append(ns).append(' ').append(p).append('\n'));
        t.leases().forEach(l -> b.append("lease ").append(l).append('\n'));
        t.history().forEach(l -> b.append("history ").append(l).append('\n'));
        t.nodes().forEach(n -> b.append("node ").append(n.id()).append(' ').append(n.address()).append(' ')
                .append(n.region()).append(' ').append(n.version()).append(' ').append(n.capabilities()).append(' ')
                .append(new TreeMap<>(n.labels())).append(' ').append(n.registeredAtMillis()).append('\n'));
        t.namespaces().forEach(n -> b.append("namespace ").append(n.name()).append(' ').append(n.partition())
                .append(' ').append(n.policy()).append(' ').append(new TreeMap<>(n.labels())).append(' ')
                .append(n.createdAtMillis()).append('\n'));
        t.routes().forEach(r -> b.append("route ").append(r).append('\n'));
        t.queues().forEach(q -> b.append("queue ").append(q).append('\n')); // format 4 on
        return b.toString();
    }
}
