package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.PartitionMap;
import dev.mailbox.coordination.Route;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
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
    /**
     * Per live lease, the request ids of its runner's earlier acquires of it, newest first (format 5 on): a
     * late copy of one of them (a write forwarded or retried after a newer acquire was answered) is refused,
     * where it would otherwise raise the epoch and fence the runner's newer incarnation.
     */
    private final TreeMap<String, List<String>> superseded = new TreeMap<>();
    /**
     * Per live lease, the sequence of the acquire that made its current epoch, where it gave one (format 6
     * on): an acquire by the same holder with a lower sequence is an earlier call that landed late. Format 5
     * cannot tell such a call when it was never granted (its caller gave up on it and made a new one), and
     * that call would raise the epoch and fence the newer one.
     */
    private final TreeMap<String, Long> sequences = new TreeMap<>();
    /** How many earlier request ids a lease remembers. */
    static final int MAX_SUPERSEDED = 8;
    /** The format of the entry being applied; not replicated state. */
    private int entryFormat = StateCodec.FORMAT;
    /** The holder secret hash of each live lease whose holder has one (format 2 on). */
    private final TreeMap<String, String> secretHashes = new TreeMap<>();
    /** Registered nodes; whether each is up is its registration lease's state. */
    private final TreeMap<String, NodeInfo> nodes = new TreeMap<>();
    private final TreeMap<String, NamespaceInfo> namespaces = new TreeMap<>();
    /** Queue records (format 4 on), by name. */
    private final TreeMap<String, dev.mailbox.coordination.QueueInfo> queues = new TreeMap<>();
    /** A backup being imported in chunks (format 7), or null; not counted as state until its last chunk. */
    private @Nullable ImportStaging staging;
    /** The import that made this state (format 7): a retried chunk of it is answered as done. */
    private String lastImportId = "";
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
        return apply(index, term, command, true);
    }

    /**
     * Applies one committed command.
     *
     * @param index    the command's log index (becomes the lease id of a grant)
     * @param term     the term of the log entry that carries it
     * @param command  the command
     * @param validate whether to hold the command to {@link CoordinationLimits}. True for every entry of
     *                 the current format. False only for format-0 entries: the control plane of the version
     *                 that wrote them checked everything its state machine checked before proposing them, and
     *                 today's rules are stricter, so checking them again could refuse on replay what was
     *                 acknowledged when it was written; replicas must reach the state the old code reached
     * @return what it came to; a refusal changes nothing but the applied index and time
     */
    public Outcome apply(long index, long term, Command command, boolean validate) {
        return apply(index, term, command, validate ? StateCodec.FORMAT : 0);
    }

    /**
     * Applies one committed command as the format of its entry says (see {@link #apply(long, long, Command,
     * boolean)} for what format 0 changes; format 5 on, a late copy of a runner's earlier acquire is refused).
     *
     * @param index   the command's log index
     * @param term    the term of the log entry that carries it
     * @param command the command
     * @param format  the format its entry was written in
     * @return what it came to; a refusal changes nothing but the applied index and time
     */
    public Outcome apply(long index, long term, Command command, int format) {
        boolean validate = format > 0;
        entryFormat = format;
        if (index <= appliedIndex) {
            throw new IllegalStateException("log index " + index + " applied after " + appliedIndex);
        }
        appliedIndex = index;
        time = Math.max(time, command.now()); // a new leader's clock may be behind the old one's
        lastRouteChange = null;
        String mailbox = mailboxOf(command);
        Route before = mailbox == null ? null : route(mailbox);
        String bad = validate ? problem(command) : null;
        Outcome outcome = bad != null ? Outcome.invalid(bad) : applyCommand(index, term, command);
        if (staging != null && !(command instanceof Command.ImportChunk) && !isEmpty()) {
            staging = null; // the cluster holds state now: the import in progress could never complete
        }
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
        } else if (command instanceof Command.Restore r) {
            return restore(index, r);
        } else if (command instanceof Command.CreateQueue c) {
            return createQueue(c);
        } else if (command instanceof Command.UpdateQueue u) {
            return updateQueue(u);
        } else if (command instanceof Command.DeleteQueue d) {
            dev.mailbox.coordination.QueueInfo gone = queues.remove(d.name());
            return gone == null ? Outcome.noQueue(d.name()) : Outcome.ok(gone, false);
        } else if (command instanceof Command.ImportChunk c) {
            return importChunk(index, c);
        }
        throw new IllegalArgumentException("unknown command " + command);
    }

    /**
     * Holds a command to the rules the client and the control plane hold it to ({@link CoordinationLimits}),
     * checked in the order a client meets them (the values it builds first, a {@code LeaseHolder} or a
     * {@code LeasePolicy}, before the call's own arguments), so all three name the same problem first.
     * Expiries come from the leader's own sweeper and carry nothing a caller chose.
     *
     * @param command a command
     * @return why it is refused, or null
     */
    static @Nullable String problem(Command command) {
        if (command instanceof Command.Acquire a) {
            // the order a client meets them in: its LeaseHolder is checked when built, before the call
            String bad = CoordinationLimits.holderProblem(a.runnerId(), a.nodeId(), a.address());
            if (bad == null) {
                bad = CoordinationLimits.mailboxIdProblem(a.mailboxId());
            }
            if (bad == null) {
                bad = CoordinationLimits.requestedTtlProblem(a.ttlMillis());
            }
            if (bad == null) {
                bad = CoordinationLimits.requestIdProblem(a.requestId());
            }
            return bad != null || a.secretHash().isEmpty() || a.secretHash().matches("[0-9a-f]{64}") ? bad
                    : "holder secret hash must be 64 hex digits, was " + a.secretHash().length() + " characters";
        } else if (command instanceof Command.Release r) {
            return CoordinationLimits.leaseRefProblem(r.mailboxId(), r.leaseId(), r.epoch());
        } else if (command instanceof Command.Revoke r) {
            return CoordinationLimits.mailboxIdProblem(r.mailboxId());
        } else if (command instanceof Command.Reclaim r) {
            return CoordinationLimits.mailboxIdProblem(r.mailboxId());
        } else if (command instanceof Command.SetPolicy p) {
            String bad = CoordinationLimits.policyProblem(p.ttlMillis(), p.heartbeatMillis(), p.graceMillis());
            return bad != null ? bad : CoordinationLimits.namespaceProblem(p.namespace());
        } else if (command instanceof Command.RegisterNode n) {
            String bad = CoordinationLimits.nodeProblem(n.nodeId(), n.address(), n.region(), n.version(),
                    n.capabilities(), n.labels());
            if (bad == null) {
                bad = CoordinationLimits.requestedTtlProblem(n.ttlMillis());
            }
            return bad != null ? bad : CoordinationLimits.requestIdProblem(n.requestId());
        } else if (command instanceof Command.CreateNamespace c) {
            String bad = null;
            if (c.ttlMillis() != 0 || c.heartbeatMillis() != 0 || c.graceMillis() != 0) {
                bad = CoordinationLimits.policyProblem(c.ttlMillis(), c.heartbeatMillis(), c.graceMillis());
            }
            if (bad == null) {
                bad = CoordinationLimits.namespaceProblem(c.name());
            }
            return bad != null ? bad : CoordinationLimits.labelsProblem(c.labels());
        } else if (command instanceof Command.Restore r) {
            return r.snapshot().isEmpty() ? "an exported state must not be empty" : null;
        } else if (command instanceof Command.CreateQueue c) {
            dev.mailbox.coordination.QueueInfo q = c.queue();
            return CoordinationLimits.queueRecordProblem(q.name(), q.attributes(), q.tags(), q.createdAtMillis(),
                    q.lastModifiedAtMillis());
        } else if (command instanceof Command.UpdateQueue u) {
            return CoordinationLimits.queueChangeProblem(u.name(), u.setAttributes(), u.removedAttributes(), u.setTags(),
                    u.removedTags(), u.modifiedAtMillis());
        } else if (command instanceof Command.DeleteQueue d) {
            return CoordinationLimits.queueNameProblem(d.name());
        } else if (command instanceof Command.ImportChunk c) {
            return CoordinationLimits.importChunkProblem(c.importId(), c.offset(), c.data().size(), c.crc32c(),
                    crc32c(c.data()));
        }
        return null;
    }

    /** @return the CRC-32C of the bytes */
    static int crc32c(com.google.protobuf.ByteString data) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        data.asReadOnlyByteBufferList().forEach(crc::update);
        return (int) crc.getValue();
    }

    private Outcome acquire(long index, Command.Acquire a) {
        long ttl = a.ttlMillis();
        if (ttl == 0) {
            ttl = policy(CoordinationLimits.namespaceOf(a.mailboxId())).ttl().toMillis();
        }
        Lease held = current.get(a.mailboxId());
        if (held != null && held.state().isLive()) {
            boolean sameRunner = held.state() == LeaseState.ACTIVE && held.runnerId().equals(a.runnerId());
            String heldSecret = secretHashes.getOrDefault(a.mailboxId(), "");
            if (sameRunner && !heldSecret.equals(a.secretHash())) {
                // a runner id is only a name: without the holder's secret this is another runner
                return Outcome.refused(held, "mailbox '" + a.mailboxId() + "' is held by runner '" + held.runnerId()
                        + "' (lease " + held.leaseId() + ", epoch " + held.epoch() + "); this acquire names the same "
                        + "runner id without that holder's secret: is another process running as '"
                        + a.runnerId() + "'?");
            }
            if (sameRunner) {
                if (!a.requestId().isEmpty() && a.requestId().equals(requestIds.get(a.mailboxId()))) {
                    return Outcome.ok(held); // the same call, retried: exactly the same answer
                }
                List<String> earlier = superseded.getOrDefault(a.mailboxId(), List.of());
                if (entryFormat >= 5 && !a.requestId().isEmpty() && earlier.contains(a.requestId())) {
                    return lateCopy(held, a, "request " + a.requestId(), "");
                }
                long made = sequences.getOrDefault(a.mailboxId(), 0L);
                if (entryFormat >= 6 && a.sequence() != 0 && Long.compareUnsigned(a.sequence(), made) < 0) {
                    return lateCopy(held, a, "request " + a.requestId() + ", call " + a.sequence(),
                            ", in a later call (" + made + ";");
                }
                if (entryFormat >= 5) {
                    String before = requestIds.getOrDefault(a.mailboxId(), "");
                    if (!before.isEmpty()) {
                        List<String> kept = new ArrayList<>(MAX_SUPERSEDED);
                        kept.add(before);
                        earlier.stream().limit(MAX_SUPERSEDED - 1).forEach(kept::add);
                        superseded.put(a.mailboxId(), List.copyOf(kept));
                    }
                }
                // the same runner again (a retry, or after a reconnect): it keeps the lease, under a new
                // epoch, so whatever its earlier incarnation still has in flight (a release, a write
                // fenced with the old epoch) is refused when it lands
                Lease again = new Lease(held.leaseId(), held.mailboxId(), held.runnerId(), a.nodeId(), a.address(),
                        held.partition(), held.epoch() + 1, LeaseState.ACTIVE, ttl, held.grantedAtMillis(), 0);
                current.put(a.mailboxId(), again);
                requestIds.put(a.mailboxId(), a.requestId());
                rememberSequence(a);
                return Outcome.ok(again);
            }
            return Outcome.refused(held, "mailbox '" + a.mailboxId() + "' is held by runner '" + held.runnerId()
                    + "' (lease " + held.leaseId() + ", epoch " + held.epoch() + ", " + held.state() + ")");
        }
        long epoch = held == null ? 1 : held.epoch() + 1;
        Lease lease = new Lease(index, a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), PartitionMap.partition(a.mailboxId()),
                epoch, LeaseState.ACTIVE, ttl, time, 0);
        if (held != null) {
            archive(held);
        }
        current.put(a.mailboxId(), lease);
        requestIds.put(a.mailboxId(), a.requestId());
        superseded.remove(a.mailboxId());
        rememberSequence(a);
        if (a.secretHash().isEmpty()) {
            secretHashes.remove(a.mailboxId());
        } else {
            secretHashes.put(a.mailboxId(), a.secretHash());
        }
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
        forgetHolder(mailboxId);
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
        forgetHolder(mailboxId);
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
        NodeInfo info = new NodeInfo(n.nodeId(), n.address(), n.region(), n.version(), n.capabilities(), n.labels(),
                false, time);
        Outcome o = acquire(index, new Command.Acquire(info.leaseMailboxId(), n.nodeId(), n.nodeId(), n.address(),
                n.ttlMillis(), n.requestId(), n.now()));
        if (o.isOk()) {
            nodes.put(n.nodeId(), info);
        }
        return o;
    }

    /** @return whether this table holds nothing an import could overwrite */
    public boolean isEmpty() {
        return current.isEmpty() && history.isEmpty() && policies.isEmpty() && nodes.isEmpty() && namespaces.isEmpty()
                && queues.isEmpty();
    }

    private Outcome createQueue(Command.CreateQueue c) {
        dev.mailbox.coordination.QueueInfo existing = queues.get(c.queue().name());
        if (existing != null) {
            return Outcome.ok(existing, false); // create-if-absent: the record there wins, and every caller gets it
        }
        if (queues.size() >= CoordinationLimits.MAX_QUEUES) {
            return Outcome.refused(null, "the cluster holds " + queues.size() + " queues, the most it may ("
                    + CoordinationLimits.MAX_QUEUES + "); delete one first");
        }
        dev.mailbox.coordination.QueueInfo q = c.queue();
        long created = q.createdAtMillis() != 0 ? q.createdAtMillis() : time;
        long modified = q.lastModifiedAtMillis() != 0 ? q.lastModifiedAtMillis() : created;
        dev.mailbox.coordination.QueueInfo stored = new dev.mailbox.coordination.QueueInfo(q.name(), q.attributes(),
                q.tags(), created, modified);
        queues.put(q.name(), stored);
        return Outcome.ok(stored, true);
    }

    /**
     * Applies a change to the record as it is now: concurrent changes of one queue, each one command, never lose
     * each other. A change that would take the record past a limit (more tags than allowed, say) is refused whole.
     */
    private Outcome updateQueue(Command.UpdateQueue u) {
        dev.mailbox.coordination.QueueInfo q = queues.get(u.name());
        if (q == null) {
            return Outcome.noQueue(u.name());
        }
        TreeMap<String, String> attributes = new TreeMap<>(q.attributes());
        attributes.putAll(u.setAttributes());
        attributes.keySet().removeAll(u.removedAttributes());
        TreeMap<String, String> tags = new TreeMap<>(q.tags());
        tags.putAll(u.setTags());
        tags.keySet().removeAll(u.removedTags());
        String bad = CoordinationLimits.queueAttributesProblem(attributes);
        if (bad == null) {
            bad = CoordinationLimits.queueTagsProblem(tags);
        }
        if (bad != null) {
            return Outcome.refused(null, "queue '" + u.name() + "' after this change: " + bad);
        }
        boolean attributesChanged = !u.setAttributes().isEmpty() || !u.removedAttributes().isEmpty();
        long modified = !attributesChanged ? q.lastModifiedAtMillis()
                : u.modifiedAtMillis() != 0 ? u.modifiedAtMillis() : time;
        dev.mailbox.coordination.QueueInfo changed = new dev.mailbox.coordination.QueueInfo(q.name(), attributes, tags,
                q.createdAtMillis(), modified);
        queues.put(q.name(), changed);
        return Outcome.ok(changed, false);
    }

    /**
     * @param name a queue name
     * @return its record, or null
     */
    public dev.mailbox.coordination.@Nullable QueueInfo queue(String name) {
        return queues.get(name);
    }

    /**
     * @param prefix a name prefix, possibly empty
     * @param after  only names greater than this one, or empty
     * @param limit  the most names to return
     * @return queue names with the prefix after {@code after}, ascending
     */
    public List<String> queueNames(String prefix, String after, int limit) {
        // names with a prefix are contiguous in sorted order: start at the later of the prefix and `after`
        boolean fromPrefix = after.compareTo(prefix) < 0;
        List<String> out = new ArrayList<>();
        for (String name : queues.tailMap(fromPrefix ? prefix : after, fromPrefix).keySet()) {
            if (!name.startsWith(prefix) || out.size() >= limit) {
                break;
            }
            out.add(name);
        }
        return out;
    }

    /** @return every queue record, by name */
    public List<dev.mailbox.coordination.QueueInfo> queues() {
        return List.copyOf(queues.values());
    }

    /**
     * Takes on an exported table. Epochs, lease ids and history carry over as they were (fencing never goes
     * back); this table's position stays its own: the applied index and the routes revision become this
     * entry's index, the time the later of the two.
     */
    private Outcome restore(long index, Command.Restore r) {
        if (!isEmpty()) {
            return Outcome.refused(null, "the cluster already holds state (" + namespaces.size() + " namespace(s), "
                    + current.size() + " lease(s), " + nodes.size() + " node(s), " + queues.size() + " queue(s)): a backup is imported only into a "
                    + "new, empty cluster");
        }
        LeaseTable imported;
        try {
            imported = readFrom(r.snapshot().newInput());
        } catch (IOException e) {
            return Outcome.invalid("not a coordinator snapshot this version reads: " + e.getMessage());
        }
        takeOver(index, imported);
        return Outcome.ok();
    }

    /**
     * Applies one chunk of a backup being imported (format 7). The chunks of one file (its import id) are applied
     * in order into a staged table; one at an offset already applied changes nothing (a retry, or a resumed import
     * finding where it got to), one past it changes nothing either, and each answer says where the next chunk
     * starts. A chunk at offset 0 of another file replaces the import in progress. The last chunk makes the staged
     * state this table's, as {@link #restore} does a whole file, if the table still holds nothing.
     */
    private Outcome importChunk(long index, Command.ImportChunk c) {
        String id = c.importId().substring(0, 12);
        if (c.importId().equals(lastImportId)) {
            return Outcome.imported(0, summary(this)); // the import that made this state: a retry of its last chunk
        }
        if (!isEmpty()) {
            staging = null;
            return Outcome.refused(null, "the cluster already holds state (" + namespaces.size() + " namespace(s), "
                    + current.size() + " lease(s), " + nodes.size() + " node(s), " + queues.size() + " queue(s)): a "
                    + "backup is imported only into a new, empty cluster");
        }
        ImportStaging s = staging;
        if (s == null || !s.importId().equals(c.importId())) {
            if (c.offset() != 0) {
                return Outcome.refused(null, "import " + id + " is not in progress" + (s == null ? "" : " (import "
                        + s.importId().substring(0, 12) + " replaced it)") + ": start it again from its beginning");
            }
            s = new ImportStaging(c.importId()); // replaces any other: the last importer wins
            staging = s;
        }
        long received = s.received();
        if (c.offset() != received) {
            if (c.offset() < received && c.offset() + c.data().size() > received) {
                return Outcome.invalid("a chunk of import " + id + " at offset " + c.offset() + " overlaps what it has ("
                        + received + " bytes): chunks start where the last one ended");
            }
            return Outcome.importAt(received); // already applied, or a gap: go on from what the import has
        }
        try {
            s.feed(c.data().toByteArray());
        } catch (IOException e) {
            staging = null;
            return Outcome.invalid("not a backup this coordinator reads: " + e.getMessage() + " (import " + id
                    + " dropped)");
        }
        if (!c.last()) {
            return Outcome.importAt(s.received());
        }
        if (!s.ended()) {
            staging = null;
            return Outcome.invalid("the backup ends at " + s.received() + " bytes without its end record: it is "
                    + "truncated (import " + id + " dropped)");
        }
        LeaseTable imported = s.staged();
        takeOver(index, imported);
        staging = null;
        lastImportId = c.importId();
        return Outcome.imported(s.received(), summary(this));
    }

    /** What a state holds, as an import reports it. */
    private static dev.mailbox.coordination.proto.ImportStateReply summary(LeaseTable t) {
        return dev.mailbox.coordination.proto.ImportStateReply.newBuilder().setNamespaces(t.namespaces.size())
                .setLeases((int) t.current.values().stream()
                        .filter(l -> !l.namespace().equals(CoordinationLimits.NODES_NAMESPACE)).count())
                .setNodes(t.nodes.size()).setQueues(t.queues.size()).build();
    }

    /** Takes on an imported state; this table's position stays its own (see {@link #restore}). */
    private void takeOver(long index, LeaseTable imported) {
        current.putAll(imported.current);
        history.addAll(imported.history);
        policies.putAll(imported.policies);
        requestIds.putAll(imported.requestIds);
        superseded.putAll(imported.superseded);
        sequences.putAll(imported.sequences);
        secretHashes.putAll(imported.secretHashes);
        nodes.putAll(imported.nodes);
        namespaces.putAll(imported.namespaces);
        queues.putAll(imported.queues);
        time = Math.max(time, imported.time);
        routesRevision = index;
    }

    /** @return the backup being imported, or null */
    @Nullable ImportStaging staging() {
        return staging;
    }

    /** @return the id of the import that made this state, or "" */
    String lastImportId() {
        return lastImportId;
    }

    void restoreStaging(ImportStaging staging) {
        this.staging = staging;
    }

    void restoreLastImportId(String id) {
        this.lastImportId = id;
    }

    private Outcome createNamespace(Command.CreateNamespace c) {
        if (namespaces.containsKey(c.name())) {
            return Outcome.exists("namespace '" + c.name() + "' already exists");
        }
        LeasePolicy policy = LeasePolicy.DEFAULT;
        if (c.ttlMillis() != 0 || c.heartbeatMillis() != 0 || c.graceMillis() != 0) {
            try {
                policy = LeasePolicy.ofMillis(c.ttlMillis(), c.heartbeatMillis(), c.graceMillis());
            } catch (IllegalArgumentException e) {
                return Outcome.invalid(e.getMessage()); // only a format-0 entry gets here unchecked
            }
        }
        namespaces.put(c.name(), new NamespaceInfo(c.name(), PartitionMap.partition(c.name()), null, policy, c.labels(), time));
        policies.put(c.name(), policy);
        return Outcome.ok();
    }

    private Outcome setPolicy(Command.SetPolicy p) {
        try {
            policies.put(p.namespace(), LeasePolicy.ofMillis(p.ttlMillis(), p.heartbeatMillis(), p.graceMillis()));
        } catch (IllegalArgumentException e) {
            return Outcome.invalid(e.getMessage()); // only a format-0 entry gets here unchecked
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
        return l == null || l.state() != LeaseState.ACTIVE || l.namespace().equals(CoordinationLimits.NODES_NAMESPACE) ? null
                : Route.of(l);
    }

    /** @return the routing table: a route per mailbox with an active lease, by mailbox id */
    public List<Route> routes() {
        List<Route> out = new ArrayList<>();
        for (Lease l : current.values()) {
            if (l.state() == LeaseState.ACTIVE && !l.namespace().equals(CoordinationLimits.NODES_NAMESPACE)) {
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
     * Writes the whole table in the current snapshot format (see {@link StateCodec}). Equal tables write
     * equal bytes.
     *
     * @param out where to
     * @throws IOException if writing fails
     */
    public void writeTo(OutputStream out) throws IOException {
        StateCodec.writeSnapshot(this, out);
    }

    /**
     * Writes the state as a backup: the snapshot format, without an import in progress, with the SHA-256 of its
     * bytes in its end record.
     *
     * @param out where to
     * @throws IOException if writing fails
     */
    public void writeExport(OutputStream out) throws IOException {
        StateCodec.writeExport(this, out);
    }

    /**
     * Reads a snapshot of any format this coordinator reads.
     *
     * @param in where from
     * @return the table
     * @throws IOException if reading fails, or the data is not a snapshot this version can read
     */
    public static LeaseTable readFrom(InputStream in) throws IOException {
        return StateCodec.readSnapshot(in);
    }

    /** @return the request ids of live leases' current epochs, by mailbox id */
    Map<String, String> requestIds() {
        return Collections.unmodifiableMap(requestIds);
    }

    /** @return the holder secret hashes of live leases, by mailbox id */
    Map<String, String> secretHashes() {
        return Collections.unmodifiableMap(secretHashes);
    }

    /** @return the nodes as registered (without whether they are up), by id */
    List<NodeInfo> registeredNodes() {
        return List.copyOf(nodes.values());
    }

    /** @return the namespaces as created (without owners), by name */
    List<NamespaceInfo> storedNamespaces() {
        return List.copyOf(namespaces.values());
    }

    // what snapshot readers restore, in the order they were written

    void restorePolicy(String namespace, LeasePolicy policy) {
        policies.put(namespace, policy);
    }

    void restoreLease(Lease lease) {
        current.put(lease.mailboxId(), lease);
    }

    void restoreHistory(Lease lease) {
        history.addLast(lease);
    }

    void restoreRequestId(String mailboxId, String requestId, List<String> earlier, long sequence) {
        requestIds.put(mailboxId, requestId);
        if (!earlier.isEmpty()) {
            superseded.put(mailboxId, List.copyOf(earlier));
        }
        if (sequence != 0) {
            sequences.put(mailboxId, sequence);
        }
    }

    /**
     * @param mailboxId a mailbox
     * @return the sequence of the acquire that made its live lease's current epoch, or 0 (format 6 on)
     */
    long sequence(String mailboxId) {
        return sequences.getOrDefault(mailboxId, 0L);
    }

    /**
     * Refuses a same-holder acquire that an acquire made after it has overtaken.
     *
     * @param call  how the late call is known (its request id, and its sequence where that told)
     * @param later how the later call is named before the lease, ending with an opening of the parenthesis
     */
    private static Outcome lateCopy(Lease held, Command.Acquire a, String call, String later) {
        return Outcome.refused(held, "a late copy of an earlier acquire of mailbox '" + a.mailboxId() + "' by runner '"
                + a.runnerId() + "' (" + call + "): the runner has acquired it again since" + (later.isEmpty() ? " ("
                : later + " ") + "lease " + held.leaseId() + ", epoch " + held.epoch() + "); nothing changed");
    }

    /** The lease is no longer live: what tied it to its holder's calls and secret goes with it. */
    private void forgetHolder(String mailboxId) {
        requestIds.remove(mailboxId);
        superseded.remove(mailboxId);
        sequences.remove(mailboxId);
        secretHashes.remove(mailboxId);
    }

    /** The acquire just granted made the current epoch: later, only calls made after it may raise it. */
    private void rememberSequence(Command.Acquire a) {
        if (entryFormat >= 6 && a.sequence() != 0) {
            sequences.put(a.mailboxId(), a.sequence());
        } else {
            sequences.remove(a.mailboxId()); // a call that gave none cannot be ordered against the next
        }
    }

    /**
     * @param mailboxId a mailbox
     * @return the request ids of its runner's earlier acquires of its live lease, newest first (format 5 on)
     */
    List<String> superseded(String mailboxId) {
        return superseded.getOrDefault(mailboxId, List.of());
    }

    void restoreSecretHash(String mailboxId, String sha256) {
        secretHashes.put(mailboxId, sha256);
    }

    void restoreNode(NodeInfo node) {
        nodes.put(node.id(), new NodeInfo(node.id(), node.address(), node.region(), node.version(),
                node.capabilities(), node.labels(), false, node.registeredAtMillis()));
    }

    void restoreNamespace(NamespaceInfo namespace) {
        namespaces.put(namespace.name(), namespace);
    }

    void restoreQueue(dev.mailbox.coordination.QueueInfo queue) {
        queues.put(queue.name(), queue);
    }

    void restorePosition(long appliedIndex, long time, long routesRevision) {
        this.appliedIndex = appliedIndex;
        this.time = time;
        this.routesRevision = routesRevision;
    }
}
