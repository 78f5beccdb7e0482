package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class PartitionMapTest {

    private static List<String> nodes(Random random, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("node-" + new UUID(random.nextLong(), random.nextLong()).toString().substring(0, 8));
        }
        return out;
    }

    @Test
    @DisplayName("adding a node to N moves only what the new node wins: about 256/(N+1) on average")
    void joinMovesAboutAFairShare() {
        Random random = new Random(20261122);
        for (int n = 1; n <= 12; n++) {
            double movedTotal = 0;
            int trials = 200;
            for (int t = 0; t < trials; t++) {
                List<String> before = nodes(random, n);
                List<String> after = new ArrayList<>(before);
                String joined = "joined-" + t;
                after.add(joined);
                PartitionMap old = PartitionMap.of(before);
                PartitionMap now = PartitionMap.of(after);
                int moved = old.moved(now);
                // every moved partition went to the new node, and the new node got nothing else
                int gained = now.rangesOf(joined).stream().mapToInt(PartitionMap.Range::size).sum();
                assertThat(moved).isEqualTo(gained);
                movedTotal += moved;
            }
            double mean = movedTotal / trials;
            double ideal = 256.0 / (n + 1);
            assertThat(mean).as("mean partitions moved when joining %d nodes (ideal %.1f)", n, ideal)
                    .isBetween(ideal * 0.85, ideal * 1.15);
        }
    }

    @Test
    @DisplayName("removing a node moves exactly its own partitions")
    void leaveMovesOnlyItsOwn() {
        Random random = new Random(7);
        for (int n = 2; n <= 12; n++) {
            List<String> before = nodes(random, n);
            PartitionMap old = PartitionMap.of(before);
            String leaving = before.get(random.nextInt(n));
            List<String> after = new ArrayList<>(before);
            after.remove(leaving);
            PartitionMap now = PartitionMap.of(after);
            int owned = old.rangesOf(leaving).stream().mapToInt(PartitionMap.Range::size).sum();
            assertThat(old.moved(now)).isEqualTo(owned);
            for (int p = 0; p < PartitionMap.PARTITIONS; p++) {
                if (!leaving.equals(old.ownerOf(p))) {
                    assertThat(now.ownerOf(p)).isEqualTo(old.ownerOf(p));
                }
            }
        }
    }

    @Test
    @DisplayName("the map depends only on the set of nodes, covers every partition, and round-trips through ranges")
    void deterministicAndComplete() {
        PartitionMap one = PartitionMap.of(List.of("c", "a", "b"));
        PartitionMap two = PartitionMap.of(List.of("b", "c", "a", "a"));
        assertThat(one).isEqualTo(two);
        assertThat(one.ranges().stream().mapToInt(PartitionMap.Range::size).sum()).isEqualTo(256);
        assertThat(PartitionMap.fromRanges(one.ranges())).isEqualTo(one);
        assertThat(one.nodes()).containsExactly("a", "b", "c");
        assertThat(PartitionMap.of(List.of()).ranges()).isEmpty();
        assertThat(PartitionMap.of(List.of()).ownerOf(3)).isNull();
        assertThatThrownBy(() -> one.ownerOf(256)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("255");
        assertThat(PartitionMap.partition("orders")).isBetween(0, 255);
    }
}
