package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.settings.Setting;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The settings of a coordinator, each defined once: its config key and flag ({@code mailboxctl coordinator start
 * --KEY} or {@code KEY=} in its {@code --config} file), its help, its default and the values it accepts.
 * {@link CoordinatorNode.Builder} starts from these defaults and refuses with these rules, and {@code mailboxctl}
 * makes its flags, its config keys and its reference from them. The server's security settings are
 * {@link SecurityKeys}'.
 *
 * <p>A few settings have a process default that differs from the library's on purpose: {@code mailboxctl} listens
 * on fixed, documented ports and warms up, an embedded node takes a free port and starts at once. The settings a
 * builder takes as objects or arguments ({@code id}, {@code raft}, {@code peers}, {@code data-dir}) have only a
 * process default: the builder requires them.
 */
public final class CoordinatorKeys {

    private CoordinatorKeys() {
    }

    /** The control plane's address when {@code mailboxctl} starts a coordinator: the clients' default too. */
    public static final String DEFAULT_CONTROL_PLANE = "127.0.0.1:7100";

    /** This member's id. */
    public static final Setting<String> ID = Setting.text("id").name("nodeId").label("ID")
            .help("this coordinator's id: its name among the members")
            .check((v, s) -> {
                String p = CoordinationLimits.nodeIdProblem(v);
                return p == null ? null : p.replaceFirst("^node id ", "");
            })
            .defaults(s -> null, "the builder's argument").processDefault("n1").build();

    /** The cluster's name; the members of a cluster share it, and it names their Raft group. */
    public static final Setting<String> CLUSTER = Setting.text("cluster").name("cluster").label("NAME")
            .help("the cluster's name: every member gives the same, and a member's data dir holds its cluster's "
                    + "state under it")
            .check((v, s) -> v.isBlank() ? "must not be empty" : null)
            .defaults("mailbox").build();

    /** Where the Raft log and snapshots live. */
    public static final Setting<Path> DATA_DIR = Setting.path("data-dir").name("dataDir").label("DIR")
            .help("where the Raft log and snapshots live (created, mode 0700)")
            .defaults(s -> null, "required")
            .processDefault(s -> Path.of("coordinator-" + s.get(ID)), "./coordinator-<id>").build();

    /** This member's Raft address, as the other members dial it. */
    public static final Setting<InetSocketAddress> RAFT = Setting.address("raft").name("raft")
            .help("this coordinator's Raft address, as the other members dial it")
            .defaults(s -> null, "its entry in peers")
            .processDefault(new InetSocketAddress("127.0.0.1", 7000)).build();

    /** Where this member's Raft server binds, when the others reach it at another address. */
    public static final Setting<InetSocketAddress> RAFT_LISTEN = Setting.address("raft-listen").name("raftListen")
            .help("where this coordinator's Raft server binds, when the others reach it at another address (--raft, "
                    + "which they dial): a port published by a container or NAT, or a proxy in front of it")
            .defaults(s -> null, "the --raft address").build();

    /** The gRPC control plane's address. */
    public static final Setting<InetSocketAddress> CONTROL_PLANE = Setting.address("control-plane").name("controlPlane")
            .help("the gRPC control plane's address: clients, nodes and runners call it")
            .defaults(new InetSocketAddress("127.0.0.1", 0), "127.0.0.1 on a free port")
            .processDefault(new InetSocketAddress("127.0.0.1", 7100)).build(); // DEFAULT_CONTROL_PLANE

    /** The other members, each {@code id=host:port}. */
    public static final Setting<List<Map.Entry<String, InetSocketAddress>>> PEERS = Setting.list("peers",
                    "ID=HOST:PORT", CoordinatorKeys::peer, e -> e.getKey() + "=" + Setting.hostPort(e.getValue()))
            .flags("--peer").name("peers")
            .help("another member, id=host:port (repeatable; the key is a comma-separated list); without any, a "
                    + "cluster of one")
            .build();

    /** How a member whose data dir is empty starts. */
    public static final Setting<CoordinatorNode.ClusterState> INITIAL_CLUSTER_STATE = Setting
            .choice("initial-cluster-state", CoordinatorNode.ClusterState.class).name("clusterState")
            .help("new: bootstrap a new cluster (its very first start only; refused if the cluster has heard from "
                    + "this member before: its data was lost); existing: the cluster exists (every later start, and "
                    + "a member being added); replace: this member's data was lost and it takes its place again (it "
                    + "has the cluster remove it, starts empty and has itself added back; see "
                    + "docs/operations-hardening.md). Only matters when the data dir is empty")
            .defaults(CoordinatorNode.ClusterState.NEW).build();

    /** The shortest election timeout, in milliseconds. */
    public static final Setting<Duration> ELECTION_TIMEOUT_MIN = Setting.millis("election-timeout-min-ms")
            .name("electionTimeout")
            .help("the shortest election timeout: how long a follower waits without a heartbeat before it asks for "
                    + "votes; heartbeats go every half of it")
            .range("at least 50", (v, s) -> v.toMillis() < 50 ? "must be at least 50 ms, was " + v.toMillis()
                    + " ms" : null)
            .defaults(Duration.ofMillis(300)).build();

    /** The longest election timeout, in milliseconds. */
    public static final Setting<Duration> ELECTION_TIMEOUT_MAX = Setting.millis("election-timeout-max-ms")
            .name("the longest election timeout")
            .help("the longest election timeout; each wait is drawn between the two")
            .range("more than the shortest", (v, s) -> {
                Duration min = s.get(ELECTION_TIMEOUT_MIN);
                return min != null && v.compareTo(min) <= 0 ? "must be more than the shortest (" + min.toMillis()
                        + " ms), was " + v.toMillis() + " ms" : null;
            })
            .defaults(s -> twice(s.get(ELECTION_TIMEOUT_MIN)), "twice the shortest").build();

    /** How long a Raft request between coordinators may take before it is sent again. */
    public static final Setting<Duration> RAFT_REQUEST_TIMEOUT = Setting.millis("raft-request-timeout-ms")
            .name("raftRequestTimeout")
            .help("how long a Raft request between coordinators (an append, a vote, a snapshot chunk) may take "
                    + "before it is given up and sent again")
            .range("more than 0", (v, s) -> v.isNegative() || v.isZero() ? "must be positive, was " + v.toMillis()
                    + " ms" : null)
            .rule("at least the longest election timeout", (v, s) -> {
                Duration max = s.get(ELECTION_TIMEOUT_MAX);
                return max != null && v.compareTo(max) < 0 ? "(" + v.toMillis() + " ms) must be at least the longest "
                        + "election timeout (" + max.toMillis() + " ms)" : null;
            })
            .defaults(s -> {
                Duration max = s.get(ELECTION_TIMEOUT_MAX);
                return max != null && max.compareTo(Duration.ofSeconds(3)) > 0 ? max : Duration.ofSeconds(3);
            }, "3000, or the longest election timeout if that is longer").build();

    /** Whether a follower asks for a pre-vote before a real election. */
    public static final Setting<Boolean> PRE_VOTE = Setting.bool("pre-vote").name("preVote")
            .help("ask the others whether they would vote before a real election, so that a coordinator that was "
                    + "cut off, or merely slow, cannot raise the term and depose a healthy leader when it comes back")
            .defaults(true).build();

    /** The leader's lease, as a fraction of the shortest election timeout. */
    public static final Setting<Double> LEADER_LEASE_RATIO = Setting.number("leader-lease-ratio")
            .name("leaderLeaseRatio").label("RATIO")
            .help("the leader serves leader-lease reads and renewals from its own state for this fraction of the "
                    + "shortest election timeout after a majority last acknowledged it; lower it where clocks may run "
                    + "at different rates")
            .range("(0, 1]", (v, s) -> !(v > 0 && v <= 1) ? "must be more than 0 and at most 1, was " + v : null)
            .defaults(0.9).build();

    /** Log entries between snapshots. */
    public static final Setting<Long> SNAPSHOT_EVERY = Setting.wholeNumber("snapshot-every").name("snapshotEvery")
            .help("take a snapshot after this many log entries")
            .range("1 or more", (v, s) -> v < 1 ? "must be 1 or more, was " + v : null)
            .defaults(10_000L).build();

    /** Snapshots kept on disk. */
    public static final Setting<Integer> SNAPSHOT_RETENTION = Setting.integer("snapshot-retention")
            .name("snapshotRetention")
            .help("how many snapshots to keep on disk, the newest (older ones and the log before the oldest kept "
                    + "are deleted)")
            .range("1 or more", (v, s) -> v < 1 ? "must be 1 or more, was " + v : null)
            .defaults(2).build();

    /** The size of a file of the Raft log. */
    public static final Setting<Long> LOG_SEGMENT_BYTES = Setting.wholeNumber("log-segment-bytes")
            .name("logSegmentSize").label("BYTES")
            .help("how large a file of the Raft log grows before the next one starts; the log before a snapshot is "
                    + "deleted a whole file at a time, so smaller files free disk sooner, and the open file's entries "
                    + "are kept in memory (Ratis's own size is 32 MiB); an entry larger than this gets a file of "
                    + "its own")
            .range("at least 4096", (v, s) -> v < 4096 ? "must be at least 4096 bytes, was " + v : null)
            .defaults(8L << 20, "8388608, 8 MiB").build();

    /** The consistency of each read whose request does not choose one. */
    public static final Setting<List<Map.Entry<ReadOperation, ReadConsistency>>> READ_CONSISTENCY = Setting.list(
                    "read-consistency", "OPERATION=LEVEL", CoordinatorKeys::read,
                    e -> e.getKey().key() + "=" + e.getValue().name().toLowerCase(Locale.ROOT).replace('_', '-'))
            .name("readConsistency")
            .help("the consistency of a read whose request does not choose one (repeatable; the key is a "
                    + "comma-separated list). OPERATION: " + String.join(", ", java.util.Arrays
                    .stream(ReadOperation.values()).map(ReadOperation::key).toList())
                    + "; LEVEL: stale, leader-lease, linearizable")
            .defaults(List.of(), "leader-lease for every read").build();

    /** Whether to load the leader's code in a throwaway cluster before joining. */
    public static final Setting<Boolean> WARM_UP = Setting.bool("warm-up").name("warmUp")
            .help("before joining, run an election and a term as leader once in a throwaway in-process cluster on "
                    + "free loopback ports, so that this coordinator's first real term as leader does not spend "
                    + "100-250 ms loading that code; adds 2-4 s to the start")
            .defaults(false).processDefault(true).build();

    /** Every setting of this registry, in the order the reference lists them. */
    public static final List<Setting<?>> ALL = List.of(ID, CLUSTER, DATA_DIR, RAFT, RAFT_LISTEN, CONTROL_PLANE, PEERS,
            INITIAL_CLUSTER_STATE, ELECTION_TIMEOUT_MIN, ELECTION_TIMEOUT_MAX, RAFT_REQUEST_TIMEOUT, PRE_VOTE,
            LEADER_LEASE_RATIO, SNAPSHOT_EVERY, SNAPSHOT_RETENTION, LOG_SEGMENT_BYTES, READ_CONSISTENCY, WARM_UP);

    private static @Nullable Duration twice(@Nullable Duration d) {
        return d == null ? null : d.multipliedBy(2);
    }

    private static Map.Entry<String, InetSocketAddress> peer(String text) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("must be id=host:port, was '" + text + "'");
        }
        String id = text.substring(0, eq).strip();
        String bad = CoordinationLimits.nodeIdProblem(id);
        if (bad != null) {
            throw new IllegalArgumentException("must be id=host:port, was '" + text + "': " + bad);
        }
        try {
            return Map.entry(id, RAFT.parse(text.substring(eq + 1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("must be id=host:port, was '" + text + "'", e);
        }
    }

    private static Map.Entry<ReadOperation, ReadConsistency> read(String text) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("must be OPERATION=LEVEL, was '" + text + "'");
        }
        ReadOperation op = ReadOperation.parse(text.substring(0, eq));
        String level = text.substring(eq + 1).strip();
        try {
            return Map.entry(op, ReadConsistency.valueOf(level.toUpperCase(Locale.ROOT).replace('-', '_')));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("for " + op.key() + ": the level must be stale, leader-lease or "
                    + "linearizable, was '" + level + "'");
        }
    }
}
