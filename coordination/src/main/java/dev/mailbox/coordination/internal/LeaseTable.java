package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.Route;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The replicated lease state: a deterministic function of the commands applied to it, in log order.
 *
 * <p>It never reads a clock or a random source and iterates only sorted maps, so replicas that apply
 * the same log hold equal tables, and a snapshot written by one and read by another compares equal
 * byte for byte. Renewals do not pass through it: the leader keeps renewal deadlines in memory and
 * proposes an {@link Command.Expire} when one passes (see the coordinator); this table only checks
 * that a renewal names the current lease and epoch.
 *
 * <p>Not thread-safe: the state machine applies one command at a time and guards reads.
 */
public final class LeaseTable {

    /** Number of partitions mailboxes are spread over. */
    public static final int PARTITIONS = PartitionMap.PARTITIONS;
    /** How many terminal leases are kept, oldest dropped first. */
    public static final int HISTORY_LIMIT = 10_000;
    private static final int SNAPSHOT_VERSION = 3;
    private static final int MAX_ID_LENGTH = 512;
    private static final Pattern NAMESPACE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    /**
     * A change to the routing table made by the last command applied.
     *
     * @param revision  the log index that made it
     * @param mailboxId the mailbox
     * @param route     its route now, or null if it has none
     */
    public record RouteChange(long revision, String mailboxId, @Nullable Route route) {
    }

    private final TreeMap<String, Lease> current = new TreeMap<>();
    private final ArrayDeque<Lease> history = new ArrayDeque<>();
    private final TreeMap<String, LeasePolicy> policies = new TreeMap<>();
    /** The request id of the acquire that made each live lease's current epoch. */
    private final TreeMap<String, String> requestIds = new TreeMap<>();
    /** Registered nodes; whether each is up is its registration lease's state. */
    private final TreeMap<String, NodeInfo> nodes = new TreeMap<>();
    private final TreeMap<String, NamespaceInfo> namespaces = new TreeMap<>();
    private long appliedIndex;
    private long time;
    /** The log index of the last command that changed a route. */
    private long routesRevision;
    private @Nullable RouteChange lastRouteChange; // not replicated state: what the last apply changed

    /**
     * Applies one committed command.
     *
     * @param index   the command's log index (becomes the lease id of a grant)
     * @param term    the term of the log entry that carries it
     * @param command the command
     * @return what it came to; a refusal changes nothing but the applied index and time
     */
    public Outcome apply(long index, long term, Command command) {
        if (index <= appliedIndex) {
            throw new IllegalStateException("log index " + index + " applied after " + appliedIndex);
        }
        appliedIndex = index;
        time = Math.max(time, command.now()); // a new leader's clock may be behind the old one's
        lastRouteChange = null;
        String mailbox = mailboxOf(command);
        Route before = mailbox == null ? null : route(mailbox);
        Outcome outcome = applyCommand(index, term, command);
        if (mailbox != null) {
            Route after = route(mailbox);
            if (!Objects.equals(before, after)) {
                routesRevision = index;
                lastRouteChange = new RouteChange(index, mailbox, after);
            }
        }
        return outcome;
    }

    private static @Nullable String mailboxOf(Command command) {
        if (command instanceof Command.Acquire a) {
            return a.mailboxId();
        } else if (command instanceof Command.Release r) {
            return r.mailboxId();
        } else if (command instanceof Command.Expire e) {
            return e.mailboxId();
        } else if (command instanceof Command.Revoke r) {
            return r.mailboxId();
        } else if (command instanceof Command.Reclaim r) {
            return r.mailboxId();
        }
        return null;
    }

    private Outcome applyCommand(long index, long term, Command command) {
        if (command instanceof Command.Acquire a) {
            return acquire(index, a);
        } else if (command instanceof Command.Release r) {
            return end(r.mailboxId(), r.leaseId(), r.epoch(), LeaseState.RELEASED);
        } else if (command instanceof Command.Expire e) {
            if (e.term() != term) {
                // proposed by a leader that has since been replaced: its deadlines no longer count
                return Outcome.refused(current.get(e.mailboxId()), "expiry of lease " + e.leaseId() + " decided in term "
                        + e.term() + " but committed in term " + term);
            }
            return end(e.mailboxId(), e.leaseId(), e.epoch(), LeaseState.EXPIRED);
        } else if (command instanceof Command.Revoke r) {
            return revoke(r.mailboxId());
        } else if (command instanceof Command.Reclaim r) {
            return reclaim(r.mailboxId());
        } else if (command instanceof Command.SetPolicy p) {
            return setPolicy(p);
        } else if (command instanceof Command.RegisterNode n) {
            return registerNode(index, n);
        } else if (command instanceof Command.CreateNamespace c) {
            return createNamespace(c);
        }
        throw new IllegalArgumentException("unknown command " + command);
    }

    private Outcome acquire(long index, Command.Acquire a) {
        String bad = firstInvalid(a.mailboxId(), a.runnerId(), a.nodeId(), a.address());
        if (bad != null) {
            return Outcome.invalid(bad);
        }
        long ttl = a.ttlMillis();
        if (ttl == 0) {
            ttl = policy(namespaceOf(a.mailboxId())).ttl().toMillis();
        } else if (ttl < LeasePolicy.MIN_TTL.toMillis() || ttl > LeasePolicy.MAX_TTL.toMillis()) {
            return Outcome.invalid("ttl must be between " + LeasePolicy.MIN_TTL + " and " + LeasePolicy.MAX_TTL
                    + ", was " + Duration.ofMillis(ttl));
        }
        Lease held = current.get(a.mailboxId());
        if (held != null && held.state().isLive()) {
            if (held.state() == LeaseState.ACTIVE && held.runnerId().equals(a.runnerId())) {
                if (!a.requestId().isEmpty() && a.requestId().equals(requestIds.get(a.mailboxId()))) {
                    return Outcome.ok(held); // the same call, retried: exactly the same answer
                }
                // the same runner again (a retry, or after a reconnect): it keeps the lease, under a new
                // epoch, so whatever its earlier incarnation still has in flight (a release, a write
                // fenced with the old epoch) is refused when it lands
                Lease again = new Lease(held.leaseId(), held.mailboxId(), held.runnerId(), a.nodeId(), a.address(),
                        held.partition(), held.epoch() + 1, LeaseState.ACTIVE, ttl, held.grantedAtMillis(), 0);
                current.put(a.mailboxId(), again);
                requestIds.put(a.mailboxId(), a.requestId());
                return Outcome.ok(again);
            }
            return Outcome.refused(held, "mailbox '" + a.mailboxId() + "' is held by runner '" + held.runnerId()
                    + "' (lease " + held.leaseId() + ", epoch " + held.epoch() + ", " + held.state() + ")");
        }
        long epoch = held == null ? 1 : held.epoch() + 1;
        Lease lease = new Lease(index, a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), partition(a.mailboxId()),
                epoch, LeaseState.ACTIVE, ttl, time, 0);
        if (held != null) {
            archive(held);
        }
        current.put(a.mailboxId(), lease);
        requestIds.put(a.mailboxId(), a.requestId());
        return Outcome.ok(lease);
    }

    private Outcome end(String mailboxId, long leaseId, long epoch, LeaseState to) {
        Lease held = current.get(mailboxId);
        if (held != null && held.leaseId() == leaseId && held.epoch() == epoch && held.state() == to) {
            return Outcome.ok(held); // a retried release (or expiry) that already took effect
        }
        Outcome stale = checkCurrent(mailboxId, leaseId, epoch, held);
        if (stale != null) {
            return stale;
        }
        Lease ended = copy(held, to, held.epoch(), time);
        current.put(mailboxId, ended);
        requestIds.remove(mailboxId);
        return Outcome.ok(ended);
    }

    private Outcome revoke(String mailboxId) {
        Lease held = current.get(mailboxId);
        if (held == null) {
            return Outcome.notFound(mailboxId);
        }
        if (held.state() == LeaseState.REVOKING) {
            return Outcome.ok(held);
        }
        if (held.state() != LeaseState.ACTIVE) {
            return Outcome.refused(held, "lease " + held.leaseId() + " of mailbox '" + mailboxId + "' is already "
                    + held.state() + "; there is nothing to revoke");
        }
        Lease revoking = copy(held, LeaseState.REVOKING, held.epoch() + 1, 0);
        current.put(mailboxId, revoking);
        requestIds.remove(mailboxId);
        return Outcome.ok(revoking);
    }

    private Outcome reclaim(String mailboxId) {
        Lease held = current.get(mailboxId);
        if (held == null) {
            return Outcome.notFound(mailboxId);
        }
        if (held.state() == LeaseState.REVOKED) {
            return Outcome.ok(held);
        }
        if (held.state() != LeaseState.REVOKING) {
            return Outcome.refused(held, "lease " + held.leaseId() + " of mailbox '" + mailboxId + "' is "
                    + held.state() + "; only a revoking lease can be reclaimed");
        }
        Lease revoked = copy(held, LeaseState.REVOKED, held.epoch(), time);
        current.put(mailboxId, revoked);
        return Outcome.ok(revoked);
    }

    private Outcome registerNode(long index, Command.RegisterNode n) {
        if (n.nodeId().isBlank() || n.nodeId().contains("@") || n.nodeId().length() > MAX_ID_LENGTH) {
            return Outcome.invalid("node id must be non-blank, without '@', at most " + MAX_ID_LENGTH
                    + " characters, was '" + n.nodeId() + "'");
        }
        NodeInfo info = new NodeInfo(n.nodeId(), n.address(), n.region(), n.version(), n.capabilities(), n.labels(),
                false, time);
        Outcome o = acquire(index, new Command.Acquire(info.leaseMailboxId(), n.nodeId(), n.nodeId(), n.address(),
                n.ttlMillis(), n.requestId(), n.now()));
        if (o.isOk()) {
            nodes.put(n.nodeId(), info);
        }
        return o;
    }

    private Outcome createNamespace(Command.CreateNamespace c) {
        String bad = namespaceProblem(c.name());
        if (bad != null) {
            return Outcome.invalid(bad);
        }
        if (namespaces.containsKey(c.name())) {
            return Outcome.exists("namespace '" + c.name() + "' already exists");
        }
        LeasePolicy policy = LeasePolicy.DEFAULT;
        if (c.ttlMillis() != 0 || c.heartbeatMillis() != 0 || c.graceMillis() != 0) {
            try {
                policy = new LeasePolicy(Duration.ofMillis(c.ttlMillis()), Duration.ofMillis(c.heartbeatMillis()),
                        Duration.ofMillis(c.graceMillis()));
            } catch (IllegalArgumentException e) {
                return Outcome.invalid(e.getMessage());
            }
        }
        namespaces.put(c.name(), new NamespaceInfo(c.name(), partition(c.name()), null, policy, c.labels(), time));
        policies.put(c.name(), policy);
        return Outcome.ok();
    }

    /**
     * @param name a proposed namespace name
     * @return why it cannot be one, or null
     */
    public static @Nullable String namespaceProblem(String name) {
        return NAMESPACE_NAME.matcher(name).matches() ? null
                : "namespace name must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit,"
                        + " was '" + name + "'";
    }

    private Outcome setPolicy(Command.SetPolicy p) {
        if (p.namespace().isBlank() || p.namespace().contains("@")) {
            return Outcome.invalid("namespace must be non-blank and without '@', was '" + p.namespace() + "'");
        }
        try {
            policies.put(p.namespace(), new LeasePolicy(Duration.ofMillis(p.ttlMillis()),
                    Duration.ofMillis(p.heartbeatMillis()), Duration.ofMillis(p.graceMillis())));
        } catch (IllegalArgumentException e) {
            return Outcome.invalid(e.getMessage());
        }
        return Outcome.ok();
    }

    /**
     * Whether a renewal names the mailbox's current, active lease. Reads only.
     *
     * @param mailboxId the mailbox
     * @param leaseId   the lease id the holder was granted
     * @param epoch     the epoch the holder was granted
     * @return OK with the lease, or why not
     */
    public Outcome checkRenew(String mailboxId, long leaseId, long epoch) {
        Lease held = current.get(mailboxId);
        Outcome stale = checkCurrent(mailboxId, leaseId, epoch, held);
        return stale != null ? stale : Outcome.ok(held);
    }

    /** Null if (leaseId, epoch) is the current active lease, else the refusal. */
    private static @Nullable Outcome checkCurrent(String mailboxId, long leaseId, long epoch, @Nullable Lease held) {
        if (held == null) {
            return Outcome.notFound(mailboxId);
        }
        if (held.leaseId() != leaseId) {
            return Outcome.refused(held, "lease " + leaseId + " is not the current lease of mailbox '" + mailboxId
                    + "' (lease " + held.leaseId() + " is)");
        }
        if (held.epoch() != epoch) {
            return Outcome.refused(held, "stale epoch " + epoch + " for lease " + leaseId + " of mailbox '" + mailboxId
                    + "': the current epoch is " + held.epoch() + " (" + held.state() + ")");
        }
        if (held.state() != LeaseState.ACTIVE) {
            return Outcome.refused(held, "lease " + leaseId + " of mailbox '" + mailboxId + "' is " + held.state());
        }
        return null;
    }

    /**
     * @param mailboxId a mailbox
     * @return its latest lease (live or terminal), or null if it never had one
     */
    public @Nullable Lease get(String mailboxId) {
        return current.get(mailboxId);
    }

    /**
     * @return every mailbox's latest lease, by mailbox id
     */
    public List<Lease> leases() {
        return List.copyOf(current.values());
    }

    /**
     * @return terminal leases that were replaced by a later grant, oldest first (at most
     *         {@link #HISTORY_LIMIT})
     */
    public List<Lease> history() {
        return List.copyOf(history);
    }

    /**
     * @param namespace a namespace
     * @return its policy, or {@link LeasePolicy#DEFAULT}
     */
    public LeasePolicy policy(String namespace) {
        return policies.getOrDefault(namespace, LeasePolicy.DEFAULT);
    }

    /**
     * @return the policies set explicitly, by namespace
     */
    public Map<String, LeasePolicy> policies() {
        return Collections.unmodifiableMap(new TreeMap<>(policies));
    }

    /**
     * @param mailboxId a mailbox
     * @return its route (from its active lease), or null; registration leases have none
     */
    public @Nullable Route route(String mailboxId) {
        Lease l = current.get(mailboxId);
        return l == null || l.state() != LeaseState.ACTIVE || l.namespace().equals(NodeInfo.NAMESPACE) ? null
                : Route.of(l);
    }

    /** @return the routing table: a route per mailbox with an active lease, by mailbox id */
    public List<Route> routes() {
        List<Route> out = new ArrayList<>();
        for (Lease l : current.values()) {
            if (l.state() == LeaseState.ACTIVE && !l.namespace().equals(NodeInfo.NAMESPACE)) {
                out.add(Route.of(l));
            }
        }
        return out;
    }

    /** @return the log index of the last change to the routing table */
    public long routesRevision() {
        return routesRevision;
    }

    /** @return the route change the last applied command made, or null */
    public @Nullable RouteChange lastRouteChange() {
        return lastRouteChange;
    }

    /** @return every registered node, by id, with whether it is up */
    public List<NodeInfo> nodes() {
        List<NodeInfo> out = new ArrayList<>(nodes.size());
        for (NodeInfo n : nodes.values()) {
            Lease l = current.get(n.leaseMailboxId());
            boolean up = l != null && l.state() == LeaseState.ACTIVE;
            out.add(new NodeInfo(n.id(), up ? l.address() : n.address(), n.region(), n.version(), n.capabilities(),
                    n.labels(), up, n.registeredAtMillis()));
        }
        return out;
    }

    /** @return the partition map over the nodes that are up */
    public PartitionMap partitionMap() {
        return PartitionMap.of(nodes().stream().filter(NodeInfo::up).map(NodeInfo::id).toList());
    }

    /**
     * @param name a namespace
     * @return it, with its current owner, or null if it was never created
     */
    public @Nullable NamespaceInfo namespace(String name) {
        NamespaceInfo n = namespaces.get(name);
        return n == null ? null : withOwner(n, partitionMap());
    }

    /** @return every namespace, by name, with its current owner */
    public List<NamespaceInfo> namespaces() {
        PartitionMap map = partitionMap();
        return namespaces.values().stream().map(n -> withOwner(n, map)).toList();
    }

    private static NamespaceInfo withOwner(NamespaceInfo n, PartitionMap map) {
        return new NamespaceInfo(n.name(), n.partition(), map.ownerOf(n.partition()), n.policy(), n.labels(),
                n.createdAtMillis());
    }

    /** @return the index of the last command applied */
    public long appliedIndex() {
        return appliedIndex;
    }

    /** @return the latest leader time seen in the log (epoch millis) */
    public long time() {
        return time;
    }

    /**
     * @param mailboxId a mailbox id
     * @return {@code crc32(mailboxId) % 256}
     */
    public static int partition(String mailboxId) {
        return PartitionMap.partition(mailboxId);
    }

    /**
     * @param mailboxId {@code namespace@node}, or a bare name
     * @return the namespace (a bare name is its own)
     */
    public static String namespaceOf(String mailboxId) {
        int at = mailboxId.indexOf('@');
        return at < 0 ? mailboxId : mailboxId.substring(0, at);
    }

    /** Why an acquire's ids are malformed, or null. */
    static @Nullable String firstInvalid(String mailboxId, String runnerId, String nodeId, String address) {
        int at = mailboxId.indexOf('@');
        if (at == 0 || at == mailboxId.length() - 1 || (at > 0 && mailboxId.indexOf('@', at + 1) >= 0)) {
            return "mailbox id must be 'namespace@node' or a name without '@', was '" + mailboxId + "'";
        }
        for (String[] field : new String[][] {{"mailbox id", mailboxId}, {"runner id", runnerId},
                {"node id", nodeId}, {"address", address}}) {
            if (field[1].isBlank()) {
                return field[0] + " must not be blank";
            }
            if (field[1].length() > MAX_ID_LENGTH) {
                return field[0] + " must be at most " + MAX_ID_LENGTH + " characters, was " + field[1].length();
            }
        }
        return null;
    }

    private void archive(Lease ended) {
        history.addLast(ended);
        if (history.size() > HISTORY_LIMIT) {
            history.removeFirst();
        }
    }

    private static Lease copy(Lease l, LeaseState state, long epoch, long endedAt) {
        return new Lease(l.leaseId(), l.mailboxId(), l.runnerId(), l.nodeId(), l.address(), l.partition(), epoch,
                state, l.ttlMillis(), l.grantedAtMillis(), endedAt);
    }

    // --- snapshots ---------------------------------------------------------------------------------

    /**
     * Writes the whole table. Equal tables write equal bytes.
     *
     * @param out where to
     * @throws IOException if writing fails
     */
    public void writeTo(OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(out);
        data.writeInt(SNAPSHOT_VERSION);
        data.writeLong(appliedIndex);
        data.writeLong(time);
        data.writeInt(policies.size());
        for (Map.Entry<String, LeasePolicy> e : policies.entrySet()) {
            data.writeUTF(e.getKey());
            data.writeLong(e.getValue().ttl().toMillis());
            data.writeLong(e.getValue().heartbeatInterval().toMillis());
            data.writeLong(e.getValue().grace().toMillis());
        }
        data.writeInt(current.size());
        for (Lease l : current.values()) {
            writeLease(data, l);
        }
        data.writeInt(history.size());
        for (Lease l : history) {
            writeLease(data, l);
        }
        data.writeInt(requestIds.size());
        for (Map.Entry<String, String> e : requestIds.entrySet()) {
            data.writeUTF(e.getKey());
            data.writeUTF(e.getValue());
        }
        data.writeLong(routesRevision);
        data.writeInt(nodes.size());
        for (NodeInfo n : nodes.values()) {
            data.writeUTF(n.id());
            data.writeUTF(n.address());
            data.writeUTF(n.region());
            data.writeUTF(n.version());
            data.writeInt(n.capabilities().size());
            for (String c : n.capabilities()) {
                data.writeUTF(c);
            }
            writeMap(data, n.labels());
            data.writeLong(n.registeredAtMillis());
        }
        data.writeInt(namespaces.size());
        for (NamespaceInfo n : namespaces.values()) {
            data.writeUTF(n.name());
            data.writeLong(n.policy().ttl().toMillis());
            data.writeLong(n.policy().heartbeatInterval().toMillis());
            data.writeLong(n.policy().grace().toMillis());
            writeMap(data, n.labels());
            data.writeLong(n.createdAtMillis());
        }
        data.flush();
    }

    /**
     * Reads a table written by {@link #writeTo}.
     *
     * @param in where from
     * @return the table
     * @throws IOException if reading fails or the data is not a snapshot this version can read
     */
    public static LeaseTable readFrom(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        int version = data.readInt();
        if (version != SNAPSHOT_VERSION) {
            throw new IOException("lease snapshot version " + version + " is not " + SNAPSHOT_VERSION);
        }
        LeaseTable t = new LeaseTable();
        t.appliedIndex = data.readLong();
        t.time = data.readLong();
        int policies = data.readInt();
        for (int i = 0; i < policies; i++) {
            t.policies.put(data.readUTF(), new LeasePolicy(Duration.ofMillis(data.readLong()),
                    Duration.ofMillis(data.readLong()), Duration.ofMillis(data.readLong())));
        }
        int leases = data.readInt();
        for (int i = 0; i < leases; i++) {
            Lease l = readLease(data);
            t.current.put(l.mailboxId(), l);
        }
        int history = data.readInt();
        List<Lease> past = new ArrayList<>(history);
        for (int i = 0; i < history; i++) {
            past.add(readLease(data));
        }
        t.history.addAll(past);
        int ids = data.readInt();
        for (int i = 0; i < ids; i++) {
            t.requestIds.put(data.readUTF(), data.readUTF());
        }
        t.routesRevision = data.readLong();
        int nodes = data.readInt();
        for (int i = 0; i < nodes; i++) {
            String id = data.readUTF();
            String address = data.readUTF();
            String region = data.readUTF();
            String software = data.readUTF();
            int caps = data.readInt();
            List<String> capabilities = new ArrayList<>(caps);
            for (int k = 0; k < caps; k++) {
                capabilities.add(data.readUTF());
            }
            Map<String, String> labels = readMap(data);
            t.nodes.put(id, new NodeInfo(id, address, region, software, capabilities, labels, false, data.readLong()));
        }
        int namespaces = data.readInt();
        for (int i = 0; i < namespaces; i++) {
            String name = data.readUTF();
            LeasePolicy policy = new LeasePolicy(Duration.ofMillis(data.readLong()), Duration.ofMillis(data.readLong()),
                    Duration.ofMillis(data.readLong()));
            Map<String, String> labels = readMap(data);
            t.namespaces.put(name, new NamespaceInfo(name, partition(name), null, policy, labels, data.readLong()));
        }
        return t;
    }

    private static void writeMap(DataOutputStream out, Map<String, String> map) throws IOException {
        TreeMap<String, String> sorted = new TreeMap<>(map);
        out.writeInt(sorted.size());
        for (Map.Entry<String, String> e : sorted.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    private static Map<String, String> readMap(DataInputStream in) throws IOException {
        int n = in.readInt();
        TreeMap<String, String> map = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            map.put(in.readUTF(), in.readUTF());
        }
        return map;
    }

    static void writeLease(DataOutputStream out, Lease l) throws IOException {
        out.writeLong(l.leaseId());
        out.writeUTF(l.mailboxId());
        out.writeUTF(l.runnerId());
        out.writeUTF(l.nodeId());
        out.writeUTF(l.address());
        out.writeLong(l.epoch());
        out.writeByte(l.state().ordinal());
        out.writeLong(l.ttlMillis());
        out.writeLong(l.grantedAtMillis());
        out.writeLong(l.endedAtMillis());
    }

    static Lease readLease(DataInputStream in) throws IOException {
        long id = in.readLong();
        String mailbox = in.readUTF();
        String runner = in.readUTF();
        String node = in.readUTF();
        String address = in.readUTF();
        long epoch = in.readLong();
        LeaseState state = LeaseState.values()[in.readByte()];
        return new Lease(id, mailbox, runner, node, address, partition(mailbox), epoch, state, in.readLong(),
                in.readLong(), in.readLong());
    }
}
