package dev.mailbox.coordination;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.zip.CRC32;
import org.jspecify.annotations.Nullable;

/**
 * Which live node owns each of the 256 partitions. Computed from the set of live node ids, never
 * stored: every node and client that knows the same set computes the same map.
 *
 * <p>The scheme is rendezvous (highest random weight) hashing: each partition goes to the node with
 * the highest {@code hash(node, partition)}. Adding a node to N moves only the partitions the new node
 * now wins, about 256/(N+1); removing a node moves only the partitions it owned. Nothing else moves.
 */
public final class PartitionMap {

    /** Number of partitions. */
    public static final int PARTITIONS = 256;

    /**
     * A run of consecutive partitions owned by one node.
     *
     * @param start  first partition, inclusive
     * @param end    last partition, inclusive
     * @param nodeId the owner
     */
    public record Range(int start, int end, String nodeId) {
        /**
         * Checks the fields.
         */
        public Range {
            Objects.requireNonNull(nodeId, "nodeId");
            if (start < 0 || end >= PARTITIONS || start > end) {
                throw new IllegalArgumentException("range must satisfy 0 <= start <= end < " + PARTITIONS + ", was "
                        + start + ".." + end);
            }
        }

        /** @return how many partitions the range holds */
        public int size() {
            return end - start + 1;
        }
    }

    private final String[] owners; // null entries while no node is up
    private final List<String> nodes;

    private PartitionMap(String[] owners, List<String> nodes) {
        this.owners = owners;
        this.nodes = nodes;
    }

    /**
     * @param liveNodeIds the ids of the live nodes, in any order
     * @return the map over them (every partition unowned if there are none)
     */
    public static PartitionMap of(Collection<String> liveNodeIds) {
        List<String> nodes = List.copyOf(new TreeSet<>(liveNodeIds));
        String[] owners = new String[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            long best = 0;
            for (String node : nodes) {
                long w = weight(node, p);
                // ties (astronomically rare) go to the smaller id, which comes first in sorted order
                if (owners[p] == null || Long.compareUnsigned(w, best) > 0) {
                    best = w;
                    owners[p] = node;
                }
            }
        }
        return new PartitionMap(owners, nodes);
    }

    /**
     * Rebuilds a map from its ranges (as a coordinator sends them).
     *
     * @param ranges ranges that do not overlap
     * @return the map
     */
    public static PartitionMap fromRanges(Collection<Range> ranges) {
        String[] owners = new String[PARTITIONS];
        TreeSet<String> nodes = new TreeSet<>();
        for (Range r : ranges) {
            for (int p = r.start(); p <= r.end(); p++) {
                if (owners[p] != null) {
                    throw new IllegalArgumentException("partition " + p + " is in two ranges");
                }
                owners[p] = r.nodeId();
            }
            nodes.add(r.nodeId());
        }
        return new PartitionMap(owners, List.copyOf(nodes));
    }

    /**
     * @param partition 0 to 255
     * @return its owner, or null when no node is up
     */
    public @Nullable String ownerOf(int partition) {
        if (partition < 0 || partition >= PARTITIONS) {
            throw new IllegalArgumentException("partition must be between 0 and " + (PARTITIONS - 1) + ", was "
                    + partition);
        }
        return owners[partition];
    }

    /**
     * @param name a namespace or mailbox id
     * @return the owner of its partition, or null when no node is up
     */
    public @Nullable String ownerOf(String name) {
        return ownerOf(partition(name));
    }

    /** @return the live node ids the map was computed over, sorted */
    public List<String> nodes() {
        return nodes;
    }

    /** @return the runs of consecutive partitions with one owner, in partition order */
    public List<Range> ranges() {
        List<Range> out = new ArrayList<>();
        int start = 0;
        for (int p = 1; p <= PARTITIONS; p++) {
            if (p == PARTITIONS || !Objects.equals(owners[p], owners[start])) {
                if (owners[start] != null) {
                    out.add(new Range(start, p - 1, owners[start]));
                }
                start = p;
            }
        }
        return out;
    }

    /**
     * @param nodeId a node
     * @return its ranges, in partition order
     */
    public List<Range> rangesOf(String nodeId) {
        return ranges().stream().filter(r -> r.nodeId().equals(nodeId)).toList();
    }

    /**
     * @param other another map
     * @return how many partitions have a different owner there
     */
    public int moved(PartitionMap other) {
        int n = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            if (!Objects.equals(owners[p], other.owners[p])) {
                n++;
            }
        }
        return n;
    }

    /**
     * @param name a namespace or mailbox id
     * @return {@code crc32(name) % 256}
     */
    public static int partition(String name) {
        CRC32 crc = new CRC32();
        crc.update(name.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % PARTITIONS);
    }

    /** FNV-1a over the node id and the partition, then a SplitMix64 finish so close inputs spread. */
    private static long weight(String node, int partition) {
        long h = 0xcbf29ce484222325L;
        for (byte b : node.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h = (h ^ 0xff) * 0x100000001b3L; // separator, so ("a1", 2) and ("a", 12) differ
        for (int shift = 0; shift < 32; shift += 8) {
            h = (h ^ ((partition >>> shift) & 0xff)) * 0x100000001b3L;
        }
        h += 0x9e3779b97f4a7c15L;
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartitionMap m && java.util.Arrays.equals(owners, m.owners);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(owners);
    }

    @Override
    public String toString() {
        return "PartitionMap" + ranges();
    }
}
