package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Reads format 0: the hand-written binary encoding that log entries and snapshots had before the
 * protobuf formats of {@code coordinator_state.proto}. Read-only: coordinators never write it again, but
 * a data dir written by an older coordinator holds it, and an upgraded one must recover it into the same
 * state. The golden files under the server's test resources pin it.
 *
 * <p>An entry was one tag byte (1 acquire, 2 release, 3 expire, 4 revoke, 5 reclaim, 6 set policy, 7
 * register node, 8 create namespace), the fields with {@link java.io.DataOutputStream} ({@code writeUTF}
 * for strings, 8-byte longs), and the leader's time last. A snapshot was a 4-byte version (always 3) and
 * the table's fields in a fixed order.
 */
final class LegacyFormat {

    /** The only snapshot version format 0 ever wrote. */
    static final int SNAPSHOT_VERSION = 3;

    private LegacyFormat() {
    }

    /**
     * @param first an entry's first byte
     * @return whether it starts a format-0 entry
     */
    static boolean isEntry(byte first) {
        return first >= 1 && first <= 8;
    }

    /**
     * @param bytes a format-0 log entry
     * @return its command
     * @throws IllegalArgumentException if the bytes are not one
     */
    static Command decodeEntry(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int tag = in.readByte();
            Command c = switch (tag) {
                case 1 -> {
                    String m = in.readUTF();
                    String r = in.readUTF();
                    String n = in.readUTF();
                    String a = in.readUTF();
                    long ttl = in.readLong();
                    String requestId = in.readUTF();
                    yield new Command.Acquire(m, r, n, a, ttl, requestId, in.readLong());
                }
                case 2 -> {
                    String m = in.readUTF();
                    long id = in.readLong();
                    long epoch = in.readLong();
                    yield new Command.Release(m, id, epoch, in.readLong());
                }
                case 3 -> {
                    String m = in.readUTF();
                    long id = in.readLong();
                    long epoch = in.readLong();
                    long term = in.readLong();
                    yield new Command.Expire(m, id, epoch, term, in.readLong());
                }
                case 4 -> new Command.Revoke(in.readUTF(), in.readLong());
                case 5 -> new Command.Reclaim(in.readUTF(), in.readLong());
                case 6 -> {
                    String ns = in.readUTF();
                    long ttl = in.readLong();
                    long hb = in.readLong();
                    long grace = in.readLong();
                    yield new Command.SetPolicy(ns, ttl, hb, grace, in.readLong());
                }
                case 7 -> {
                    String id = in.readUTF();
                    String address = in.readUTF();
                    String region = in.readUTF();
                    String version = in.readUTF();
                    List<String> caps = strings(in);
                    SortedMap<String, String> labels = map(in);
                    long ttl = in.readLong();
                    String requestId = in.readUTF();
                    yield new Command.RegisterNode(id, address, region, version, caps, labels, ttl, requestId,
                            in.readLong());
                }
                case 8 -> {
                    String name = in.readUTF();
                    long ttl = in.readLong();
                    long hb = in.readLong();
                    long grace = in.readLong();
                    SortedMap<String, String> labels = map(in);
                    yield new Command.CreateNamespace(name, ttl, hb, grace, labels, in.readLong());
                }
                default -> throw new IllegalArgumentException("unknown format-0 command tag " + tag);
            };
            if (in.available() != 0) {
                throw new IllegalArgumentException("trailing bytes after format-0 " + c);
            }
            return c;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated format-0 log entry: " + e, e);
        }
    }

    /**
     * Reads a version-3 snapshot into a table.
     *
     * @param in    the snapshot, positioned after its 4-byte version
     * @param table an empty table
     * @throws IOException if the data ends early
     */
    static void readSnapshot(DataInputStream in, LeaseTable table) throws IOException {
        long appliedIndex = in.readLong();
        long time = in.readLong();
        int policies = in.readInt();
        for (int i = 0; i < policies; i++) {
            table.restorePolicy(in.readUTF(), policy(in));
        }
        int leases = in.readInt();
        for (int i = 0; i < leases; i++) {
            table.restoreLease(lease(in));
        }
        int history = in.readInt();
        for (int i = 0; i < history; i++) {
            table.restoreHistory(lease(in));
        }
        int ids = in.readInt();
        for (int i = 0; i < ids; i++) {
            table.restoreRequestId(in.readUTF(), in.readUTF(), List.of(), 0);
        }
        long routesRevision = in.readLong();
        int nodes = in.readInt();
        for (int i = 0; i < nodes; i++) {
            String id = in.readUTF();
            String address = in.readUTF();
            String region = in.readUTF();
            String software = in.readUTF();
            List<String> capabilities = strings(in);
            SortedMap<String, String> labels = map(in);
            table.restoreNode(new NodeInfo(id, address, region, software, capabilities, labels, false, in.readLong()));
        }
        int namespaces = in.readInt();
        for (int i = 0; i < namespaces; i++) {
            String name = in.readUTF();
            LeasePolicy policy = policy(in);
            SortedMap<String, String> labels = map(in);
            table.restoreNamespace(new NamespaceInfo(name, PartitionMap.partition(name), null, policy, labels,
                    in.readLong()));
        }
        table.restorePosition(appliedIndex, time, routesRevision);
    }

    private static LeasePolicy policy(DataInputStream in) throws IOException {
        return LeasePolicy.ofMillis(in.readLong(), in.readLong(), in.readLong());
    }

    private static Lease lease(DataInputStream in) throws IOException {
        long id = in.readLong();
        String mailbox = in.readUTF();
        String runner = in.readUTF();
        String node = in.readUTF();
        String address = in.readUTF();
        long epoch = in.readLong();
        LeaseState state = LeaseState.values()[in.readByte()];
        return new Lease(id, mailbox, runner, node, address, PartitionMap.partition(mailbox), epoch, state,
                in.readLong(), in.readLong(), in.readLong());
    }

    private static List<String> strings(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(in.readUTF());
        }
        return out;
    }

    private static SortedMap<String, String> map(DataInputStream in) throws IOException {
        int n = in.readInt();
        SortedMap<String, String> map = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            map.put(in.readUTF(), in.readUTF());
        }
        return map;
    }
}
