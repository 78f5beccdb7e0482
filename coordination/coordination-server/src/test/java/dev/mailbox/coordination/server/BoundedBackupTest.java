package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.Cluster;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.proto.state.SnapshotRecord;
import dev.mailbox.coordination.server.internal.Command;
import dev.mailbox.coordination.server.internal.LeaseTable;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, findings 1 and 2: a state of queues filled to their caps (~68 MB) was exported by building it whole
 * in memory several times over (the leader and the follower relaying it died of OutOfMemoryError at 256 MiB), and a
 * backup over 14 MiB could not be imported at all. Here coordinators with a 256 MiB heap, in child JVMs, import such
 * a state, export it and import the export, every byte accounted for, and none of them runs out of memory.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BoundedBackupTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /** Queues filled to every per-queue cap, some 52 KB each: about 68 MB in all. */
    private static final int QUEUES = 1_300;

    @TempDir
    Path dir;

    @Test
    @DisplayName("a state of queues filled to their caps (~68 MB) is imported, exported and imported again by "
            + "coordinators with 256 MiB of heap")
    void capsFilledStateAt256MiB() throws Exception {
        Path original = dir.resolve("original.backup");
        writeFilledState(original);
        assertThat(Files.size(original)).as("well past the 14 MiB that one message used to carry")
                .isGreaterThan(60L << 20);

        Path exported = dir.resolve("exported.backup");
        Path again = dir.resolve("again.backup");
        try (TestingCluster a = small(); TestingCluster b = small()) {
            a.awaitLeader(PATIENCE);
            b.awaitLeader(PATIENCE);
            try (CoordinationClient ca = client(a); CoordinationClient cb = client(b)) {
                assertThat(ca.cluster().importState(original)).isEqualTo(new Cluster.Imported(0, 0, 0, QUEUES));
                Cluster.Exported e = ca.cluster().exportState(exported);
                assertThat(e.bytes()).isEqualTo(Files.size(exported));
                assertThat(cb.cluster().importState(exported).queues()).isEqualTo(QUEUES);
                cb.cluster().exportState(again);

                QueueInfo sample = cb.queues().get("q-0777").orElseThrow();
                assertThat(sample.tags()).hasSize(CoordinationLimits.MAX_QUEUE_TAGS);
                assertThat(sample.attributes().values().stream().mapToInt(String::length).sum())
                        .isEqualTo(CoordinationLimits.MAX_QUEUE_ATTRIBUTES_TOTAL_LENGTH);
            }
            for (TestingCluster c : java.util.List.of(a, b)) {
                assertThat(c.isRunning("n1")).as("the coordinator still runs").isTrue();
                assertThat(Files.readString(c.dataDir("n1").resolveSibling("n1.log")))
                        .doesNotContain("OutOfMemoryError").doesNotContain("stops serving");
            }
        }
        // every record of the state made the round trip (the headers hold each cluster's own log position)
        assertThat(recordsDigest(exported)).isEqualTo(recordsDigest(original));
        assertThat(recordsDigest(again)).isEqualTo(recordsDigest(original));
    }

    private static TestingCluster small() {
        // a coordinator that runs out of memory exits at once: the test fails on it rather than waiting
        return TestingCluster.builder().size(1).processes(true).javaOptions("-Xmx256m", "-XX:+ExitOnOutOfMemoryError")
                .start();
    }

    private static CoordinationClient client(TestingCluster c) {
        return CoordinationClient.builder().endpoints(c.endpoints()).callTimeout(Duration.ofSeconds(30)).build();
    }

    /** A backup file of {@link #QUEUES} queues, each with every attribute character and tag the caps allow. */
    private static void writeFilledState(Path file) throws Exception {
        LeaseTable table = new LeaseTable();
        int attributes = 4;
        int perAttribute = CoordinationLimits.MAX_QUEUE_ATTRIBUTES_TOTAL_LENGTH / attributes;
        for (int q = 0; q < QUEUES; q++) {
            String name = String.format("q-%04d", q);
            Map<String, String> attrs = new LinkedHashMap<>();
            for (int i = 0; i < attributes; i++) {
                attrs.put("Attribute" + i, fill(name + "-a" + i + "-", perAttribute));
            }
            Map<String, String> tags = new LinkedHashMap<>();
            for (int i = 0; i < CoordinationLimits.MAX_QUEUE_TAGS; i++) {
                tags.put(fill(String.format("k%02d-", i), CoordinationLimits.MAX_QUEUE_TAG_KEY_LENGTH),
                        fill(name + "-v" + i + "-", CoordinationLimits.MAX_QUEUE_TAG_VALUE_LENGTH));
            }
            assertThat(table.apply(q + 1, 1, new Command.CreateQueue(new QueueInfo(name, attrs, tags, 1_000, 1_000),
                    1_000)).isOk()).as("queue %s within the caps", name).isTrue();
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            table.writeExport(out);
        }
    }

    private static String fill(String prefix, int length) {
        StringBuilder b = new StringBuilder(length).append(prefix);
        while (b.length() < length) {
            b.append((char) ('a' + b.length() % 26));
        }
        return b.substring(0, length);
    }

    /** The SHA-256 of a backup's records (not its header, which holds the position of the cluster it came from). */
    private static String recordsDigest(Path file) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        long records = 0;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            dev.mailbox.coordination.proto.state.SnapshotHeader.parseDelimitedFrom(in);
            for (SnapshotRecord r; (r = SnapshotRecord.parseDelimitedFrom(in)) != null; ) {
                if (r.getRecordCase() != SnapshotRecord.RecordCase.END) {
                    sha.update(r.toByteArray());
                    records++;
                }
            }
        }
        assertThat(records).isEqualTo(QUEUES);
        return java.util.HexFormat.of().formatHex(sha.digest());
    }
}
