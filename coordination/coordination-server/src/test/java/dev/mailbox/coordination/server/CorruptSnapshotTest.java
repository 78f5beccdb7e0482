package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A snapshot edited on disk so that it still parses (its .md5 no longer matches) is refused when the node
 * starts, with an error naming the file; loaded, it would have served edited state and made later commands
 * apply differently here than on the other replicas.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CorruptSnapshotTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a snapshot whose bytes no longer match its .md5 is refused at start, naming the file")
    void editedSnapshotIsRefused() throws Exception {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.leases().acquire("corrupt@m", new LeaseHolder("runner-aaaa", "node-a", "127.0.0.1:1"));
            assertThat(cluster.node("n1").takeSnapshot()).isPositive();
            cluster.stop("n1"); // a stop snapshots again: edit the newest one
            Path snapshot = newestSnapshot(cluster.dataDir("n1"));
            byte[] bytes = Files.readAllBytes(snapshot);
            String text = new String(bytes, StandardCharsets.ISO_8859_1);
            int at = text.indexOf("runner-aaaa");
            assertThat(at).as("the runner id is in the snapshot").isPositive();
            bytes[at + "runner-a".length()] = 'b'; // same length: the snapshot still parses, as runner-abaa
            Files.write(snapshot, bytes);

            assertThatThrownBy(() -> cluster.start("n1")).hasMessageContaining(snapshot.getFileName().toString())
                    .hasMessageContaining("is corrupt").hasMessageContaining("remove-member");
            assertThat(cluster.isRunning("n1")).isFalse();
        }
    }

    private static Path newestSnapshot(Path dataDir) throws Exception {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("snapshot.")
                            && !p.getFileName().toString().endsWith(".md5"))
                    .max(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString()
                            .substring(p.getFileName().toString().lastIndexOf('_') + 1))))
                    .orElseThrow();
        }
    }
}
