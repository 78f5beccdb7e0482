package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Raft log segment damaged on disk stops the node at start with an error that names the file and the recovery,
 * as a corrupt snapshot does; Ratis alone said only "Failed to initRaftLog" (issue 30, finding 7).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CorruptLogTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a log segment whose bytes were damaged is refused at start, naming the file and the recovery")
    void damagedSegmentIsNamed() throws Exception {
        try (TestingCluster cluster = TestingCluster.builder().size(1).snapshotEvery(1_000_000).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            for (int i = 0; i < 20; i++) {
                client.namespaces().create("ns-" + i, null, Map.of("k", "v".repeat(200)));
            }
            cluster.kill("n1");
            Path segment = segments(cluster.dataDir("n1")).get(0);
            byte[] bytes = Files.readAllBytes(segment);
            String text = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1);
            int at = text.indexOf("ns-10");
            assertThat(at).as("an entry's bytes are in %s", segment).isPositive();
            bytes[at + 3] = '9'; // the entry's checksum no longer matches
            Files.write(segment, bytes);

            assertThatThrownBy(() -> cluster.start("n1")).hasMessageContaining(segment.getFileName().toString())
                    .hasMessageContaining("remove-member");
            assertThat(cluster.isRunning("n1")).isFalse();
        }
    }

    static List<Path> segments(Path dataDir) throws Exception {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("log_")).sorted().toList();
        }
    }
}
