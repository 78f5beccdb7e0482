package dev.mailbox.coordination.server.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.internal.Protos;
import dev.mailbox.coordination.proto.state.LeaseList;
import dev.mailbox.coordination.proto.state.Outcomes;
import dev.mailbox.coordination.proto.state.Policy;
import dev.mailbox.coordination.proto.state.Query;
import dev.mailbox.coordination.proto.state.Renew;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.jspecify.annotations.Nullable;

/**
 * The Ratis state machine around a {@link LeaseTable}.
 *
 * <p>Writes: the leader stamps its clock into each command as it starts the transaction, so that
 * applying never reads a clock. Reads (get, list) are answered from the table. Renewals are reads
 * too: Ratis sends them to the leader, which checks them against the table and pushes the lease's
 * deadline back in memory, with no log write; the node's sweeper proposes an {@link Command.Expire}
 * for a lease whose deadline passes. A node that becomes leader first gives every active lease a full
 * TTL plus grace from that moment, so a change of leader never expires a lease early.
 */
public final class LeaseStateMachine extends BaseStateMachine {

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Deadlines deadlines = new Deadlines();
    private final RouteHub routes = new RouteHub();
    private LeaseTable table = new LeaseTable(); // guarded by lock

    private volatile @Nullable RaftServer server;
    private final Health health;
    private final RaftEvents events;

    /**
     * @param health told when Ratis reports that this node's log can no longer be written, and of an
     *               {@link Error} while applying a command
     */
    public LeaseStateMachine(Health health) {
        this(health, RaftEvents.NONE);
    }

    /**
     * @param health told when Ratis reports that this node's log can no longer be written, and of an
     *               {@link Error} while applying a command
     * @param events told of leader changes, writes applied on the leader and snapshots
     */
    public LeaseStateMachine(Health health, RaftEvents events) {
        this.health = health;
        this.events = events;
    }

    @Override
    public void notifyLeaderChanged(org.apache.ratis.protocol.RaftGroupMemberId member,
                                    org.apache.ratis.protocol.RaftPeerId newLeaderId) {
        if (newLeaderId != null) { // Ratis may say "no leader" too: that is no change of leader yet
            events.leaderChanged(newLeaderId.toString());
        }
    }

    @Override
    public void notifyLogFailed(Throwable cause, org.apache.ratis.proto.RaftProtos.LogEntryProto failedEntry) {
        health.logFailed(cause);
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        // the life cycle matters: Ratis pauses the state machine before it installs a snapshot from the leader
        // and requires it PAUSED before reinitialize(); BaseStateMachine never leaves NEW, and a follower
        // installing a snapshot then closed its division ("terminated executor" on every later append)
        getLifeCycle().startAndTransition(() -> {
            super.initialize(server, groupId, raftStorage);
            this.server = server;
            storage.init(raftStorage);
            load(storage.getLatestSnapshot());
        }, IOException.class);
    }

    /** Ratis calls it before installing a snapshot, once per chunk: idempotent. */
    @Override
    public synchronized void pause() {
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    /** Snapshots installed from the leader since this state machine started (Ratis reinitializes after each). */
    private final java.util.concurrent.atomic.AtomicLong installed = new java.util.concurrent.atomic.AtomicLong();

    /** @return how many snapshots this node installed from the leader since it started */
    public long snapshotsInstalled() {
        return installed.get();
    }

    @Override
    public synchronized void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot()); // not getLatestSnapshot(): that one is cached from before the install
        installed.incrementAndGet();
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    private void load(@Nullable SingleFileSnapshotInfo snapshot) throws IOException {
        if (snapshot == null) {
            return;
        }
        File file = snapshot.getFile().getPath().toFile();
        verify(file);
        LeaseTable loaded;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file.toPath()))) {
            loaded = LeaseTable.readFrom(in);
        } catch (IOException e) {
            throw new IOException("snapshot " + file + " cannot be read: " + e.getMessage() + RECOVERY, e);
        }
        lock.writeLock().lock();
        try {
            table = loaded;
            setLastAppliedTermIndex(snapshot.getTermIndex());
            deadlines.resetAll(table, System.nanoTime());
            routes.resync(table);
        } finally {
            lock.writeLock().unlock();
        }
        wakeWaiters();
    }

    /**
     * How an operator gets a node past a snapshot or a log segment it cannot load (docs/how-to/operate-coordinators.md;
     * docs/operations-hardening.md).
     */
    public static final String RECOVERY = ". The node does not start on it: remove this member from the cluster "
            + "(mailboxctl cluster remove-member), empty its data dir, start it as a joining member and add it back "
            + "(mailboxctl cluster add-member); it then copies the leader's state. Or empty its data dir and start it "
            + "with --initial-cluster-state replace, which does both";

    /**
     * Checks a snapshot against the MD5 written beside it when it was taken: a snapshot edited or damaged
     * on disk could still parse, and a replica that loaded it would then apply the log to the wrong state.
     */
    static void verify(File file) throws IOException {
        File md5File = MD5FileUtil.getDigestFileForFile(file);
        if (!md5File.isFile()) {
            throw new IOException("snapshot " + file + " has no " + md5File.getName() + " beside it, so it cannot be "
                    + "checked" + RECOVERY);
        }
        MD5Hash expected = MD5FileUtil.readStoredMd5ForFile(file);
        MD5Hash actual = MD5FileUtil.computeMd5ForFile(file);
        if (!actual.equals(expected)) {
            throw new IOException("snapshot " + file + " is corrupt: its MD5 is " + actual + " but "
                    + md5File.getName() + " says " + expected + RECOVERY);
        }
    }

    /**
     * One snapshot at a time: Ratis' automatic snapshot and an operator's (or a test's) explicit one may
     * come at once, and at the same applied index they would write, checksum and rename the same files.
     */
    private final Object snapshotting = new Object();

    @Override
    public long takeSnapshot() throws IOException {
        synchronized (snapshotting) {
            long start = System.nanoTime();
            try {
                return takeSnapshotAlone(start);
            } catch (IOException | RuntimeException e) {
                events.snapshotFailed(e);
                throw e;
            }
        }
    }

    /** @return the log index of the latest snapshot on disk, or -1 if there is none */
    public long snapshotIndex() {
        SingleFileSnapshotInfo latest = storage.getLatestSnapshot();
        return latest == null ? -1 : latest.getIndex();
    }

    private long takeSnapshotAlone(long start) throws IOException {
        lock.readLock().lock();
        try {
            TermIndex last = getLastAppliedTermIndex();
            if (last == null || last.getIndex() < 0) {
                return -1;
            }
            File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
            SingleFileSnapshotInfo latest = storage.getLatestSnapshot();
            if (latest != null && latest.getTermIndex().equals(last) && file.isFile()) {
                return last.getIndex(); // taken already, at this very index
            }
            PrivateFiles.directory(file.getParentFile().toPath());
            File tmp = new File(file.getParentFile(), file.getName() + ".tmp");
            MD5Hash md5;
            try {
                try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(tmp.toPath(),
                        java.util.Set.of(java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE,
                                java.nio.file.StandardOpenOption.TRUNCATE_EXISTING), PrivateFiles.file());
                     OutputStream out = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel))) {
                    table.writeTo(out);
                    out.flush();
                    channel.force(true); // durable before it gets the name a restart loads
                }
                // the checksum first: a snapshot file under its final name always has one
                md5 = MD5FileUtil.computeMd5ForFile(tmp);
                MD5FileUtil.saveMD5File(file, md5);
                PrivateFiles.restrictFile(MD5FileUtil.getDigestFileForFile(file).toPath());
                Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException | RuntimeException e) {
                // a full disk must not also be left holding half a snapshot
                Files.deleteIfExists(tmp.toPath());
                throw e;
            }
            storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
            events.snapshotTaken(last.getIndex(), System.nanoTime() - start);
            return last.getIndex();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        Command command;
        try {
            command = StateCodec.decode(request.getMessage().getContent().toByteArray()).command();
        } catch (IllegalArgumentException e) {
            throw new IOException("not a lease command: " + e.getMessage(), e);
        }
        byte[] stamped = StateCodec.encode(command.stamped(System.currentTimeMillis()));
        // only the leader starts transactions: the time it took the request, for the commit latency
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request)
                .setLogData(ByteString.copyFrom(stamped)).setStateMachineContext(new Started(System.nanoTime()))
                .build();
    }

    /** When the leader took a write (the context of a transaction it started). */
    private record Started(long nanos) {
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        try {
            return apply(trx);
        } catch (Error e) {
            // out of memory half-way through a command: this replica's table can no longer be trusted
            health.fatal(e);
            throw e;
        }
    }

    private CompletableFuture<Message> apply(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        // an entry this coordinator cannot read stops it here, loudly: skipping it would fork the replicas
        StateCodec.Entry decoded = StateCodec.decode(entry.getStateMachineLogEntry().getLogData().toByteArray());
        Outcome outcome;
        lock.writeLock().lock();
        try {
            outcome = table.apply(entry.getIndex(), entry.getTerm(), decoded.command(), decoded.format());
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            LeaseTable.RouteChange change = table.lastRouteChange();
            if (change != null) {
                routes.publish(change);
            }
            // an import's last chunk answers with the file's size (> 0); a retried one, answered as done, with 0
            boolean imported = decoded.command() instanceof Command.ImportChunk && outcome.imported() != null
                    && outcome.nextOffset() > 0;
            if ((decoded.command() instanceof Command.Restore && outcome.isOk()) || imported) {
                // a whole table arrived: leases get a full TTL from now, watchers a fresh snapshot
                deadlines.resetAll(table, System.nanoTime());
                routes.resync(table);
            }
            Lease lease = outcome.lease();
            if (outcome.isOk() && lease != null) {
                if (lease.state() == LeaseState.ACTIVE) {
                    if (!deadlines.track(lease, table.policy(lease.namespace()).grace().toMillis(), System.nanoTime())) {
                        // a retried acquire of the lease as it was granted, landing after this leader decided to
                        // expire it: the expiry lands next, so answering OK would have the caller count the lease
                        // as held for a TTL while the mailbox is free to be granted to another runner. Only the
                        // answer changes (the table is the same on every replica); the caller may acquire again
                        outcome = Outcome.refused(lease, "lease " + lease.leaseId() + " of mailbox '"
                                + lease.mailboxId() + "' (epoch " + lease.epoch() + ") is expiring: it was not "
                                + "renewed within its TTL plus grace; acquire it again once it has expired");
                    }
                } else {
                    deadlines.forget(lease.mailboxId(), lease.leaseId());
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
        wakeWaiters();
        if (trx.getStateMachineContext() instanceof Started started) { // on the leader that took it
            events.committed(System.nanoTime() - started.nanos());
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(outcome.toProto().toByteArray())));
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        Query query;
        try {
            query = Query.parseFrom(request.getContent().toByteArray());
        } catch (InvalidProtocolBufferException e) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("unreadable query: " + e.getMessage(), e));
        }
        LeadershipCheck check = leadershipCheck;
        // a leader read or renewal that Ratis let through on a lapsed lease (its read index may skip the
        // heartbeat round: see MailboxLeaseProbe) is served only once a majority confirms this node leads
        boolean confirm = query.getConfirmLeadership() || leadsWithoutLease();
        if (isRenewal(query)) {
            // a renewal reads no replicated state that a write could still be changing (see renewals()): it needs
            // this node to lead, not to have applied what it committed, so it never waits behind writes
            CompletableFuture<byte[]> renewed = confirm && check != null
                    ? check.confirmLeading().thenCompose(v -> renewals(query))
                    : renewals(query);
            return renewed.thenApply(bytes -> Message.valueOf(ByteString.copyFrom(bytes)));
        }
        CompletableFuture<byte[]> answer = confirm && check != null
                ? check.confirm(() -> {
                    TermIndex last = getLastAppliedTermIndex();
                    return last == null ? -1 : last.getIndex();
                }).thenCompose(v -> answer(query, true))
                : answer(query, true);
        return answer.thenApply(bytes -> Message.valueOf(ByteString.copyFrom(bytes)));
    }

    /** Whether this node leads while its Raft leader lease does not hold (only a leader's lease matters). */
    private boolean leadsWithoutLease() {
        RaftServer.Division division = division();
        return division != null && division.getInfo().isLeader()
                && !org.apache.ratis.server.impl.MailboxLeaseProbe.holds(division);
    }

    private volatile @org.jspecify.annotations.Nullable LeadershipCheck leadershipCheck;

    /**
     * @param check how a query that asks for it confirms that this node still leads (see {@link LeadershipCheck});
     *              without one, such queries are answered like any other leader read
     */
    public void useLeadershipCheck(LeadershipCheck check) {
        this.leadershipCheck = check;
    }

    /**
     * Answers a read from what this node has applied.
     *
     * @param query     the read
     * @param renewHere whether a renewal may be served (only through Ratis, which sends them to the leader)
     * @return the answer's bytes
     */
    public CompletableFuture<byte[]> answer(Query query, boolean renewHere) {
        if (isRenewal(query)) {
            // only the leader's deadlines count; a renewal anywhere else would be lost
            return renewHere ? renewals(query) : CompletableFuture.failedFuture(new IllegalStateException(
                    "renewals are served by the leader only"));
        }
        com.google.protobuf.MessageLite answer;
        lock.readLock().lock();
        try {
            switch (query.getQueryCase()) {
                case GET_LEASE -> {
                    String mailbox = query.getGetLease().getMailboxId();
                    Lease l = table.get(mailbox);
                    answer = (l == null ? Outcome.notFound(mailbox) : Outcome.ok(l)).toProto();
                }
                case LIST_LEASES -> {
                    String namespace = query.getListLeases().getNamespace();
                    LeaseList.Builder b = LeaseList.newBuilder();
                    for (Lease lease : table.leases()) {
                        if (namespace.isEmpty() || lease.namespace().equals(namespace)) {
                            b.addLeases(Protos.toProto(lease));
                        }
                    }
                    answer = b.build();
                }
                case GET_POLICY -> {
                    LeasePolicy p = table.policy(query.getGetPolicy().getNamespace());
                    answer = Policy.newBuilder().setTtlMillis(p.ttl().toMillis())
                            .setHeartbeatMillis(p.heartbeatInterval().toMillis()).setGraceMillis(p.grace().toMillis())
                            .build();
                }
                case VIEW -> answer = Views.answer(query.getView(), table);
                default -> {
                    return CompletableFuture.failedFuture(new IllegalArgumentException(
                            "a query this coordinator does not know; it was sent by a newer one"));
                }
            }
        } finally {
            lock.readLock().unlock();
        }
        return CompletableFuture.completedFuture(answer.toByteArray());
    }

    /**
     * How a renewal that reached a node which does not lead (or not yet: see {@link #renewals}) fails: the message
     * starts with it, and the control plane answers it as UNAVAILABLE (the caller retries at the leader).
     */
    public static final String NOT_LEADING = "this node does not lead";

    private static boolean isRenewal(Query query) {
        return query.getQueryCase() == Query.QueryCase.RENEW || query.getQueryCase() == Query.QueryCase.RENEW_BATCH;
    }

    /**
     * Serves renewals on the leader. A renewal of the current lease (the hot path, tens of thousands a second) is
     * answered from the in-memory deadlines alone, without the table's lock: a snapshot being written, an export
     * or a burst of writes being applied never holds it up (issue 33: renewals that queued behind writes let
     * leases of runners that renewed on time expire). The deadlines track every active lease as the log is
     * applied, under the write lock, so a renewal they answer OK names a lease the table holds as active, as of
     * the entries applied; one a write still being applied ends (a release, a revocation) is ordered before that
     * write, whose caller has not been answered yet. Anything else (a lease the deadlines do not hold as given: a
     * stale id or epoch, a lease that ended) is checked against the table under its read lock, as before.
     *
     * <p>Across a change of leader that ordering needs more: the old leader answered writes once it had applied
     * them, and a new leader may not have applied them yet (a release, a new grant), so its deadlines would accept
     * the renewal of a lease released before the change, and its table refuse one granted before it. So a leader
     * serves renewals only once it has applied an entry of its own term (the one Ratis appends on election), hence
     * every entry of earlier terms; until then they are UNAVAILABLE and the caller retries. Ratis 3.1 refuses
     * requests to a leader that has not applied that entry anyway ("not ready"); this does not rely on it.
     */
    private CompletableFuture<byte[]> renewals(Query query) {
        if (!isLeader()) {
            // Ratis sent it here as to the leader, and leadership moved since (a hand-over): the caller's retry
            // finds the new leader, so this is UNAVAILABLE, never a refusal
            return CompletableFuture.failedFuture(new IllegalStateException(NOT_LEADING));
        }
        long now = System.nanoTime();
        long term = currentTerm();
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || applied.getTerm() < term) {
            return CompletableFuture.failedFuture(new IllegalStateException(NOT_LEADING
                    + " yet: it has not applied its predecessor's last writes"));
        }
        if (query.hasRenew()) {
            Outcome o = deadlines.renewCurrent(query.getRenew(), now, term);
            if (o == null) {
                lock.readLock().lock();
                try {
                    o = renew(query.getRenew(), now, term);
                } finally {
                    lock.readLock().unlock();
                }
            }
            return CompletableFuture.completedFuture(o.toProto().toByteArray());
        }
        List<Renew> asked = query.getRenewBatch().getRenewalsList();
        Outcome[] outcomes = new Outcome[asked.size()];
        boolean missed = false;
        for (int i = 0; i < outcomes.length; i++) {
            outcomes[i] = deadlines.renewCurrent(asked.get(i), now, term);
            missed |= outcomes[i] == null;
        }
        if (missed) {
            lock.readLock().lock();
            try {
                for (int i = 0; i < outcomes.length; i++) {
                    if (outcomes[i] == null) {
                        outcomes[i] = renew(asked.get(i), now, term);
                    }
                }
            } finally {
                lock.readLock().unlock();
            }
        }
        Outcomes.Builder b = Outcomes.newBuilder();
        for (Outcome o : outcomes) {
            b.addOutcomes(o.toProto());
        }
        return CompletableFuture.completedFuture(b.build().toByteArray());
    }

    /**
     * Checks one renewal against the table and pushes its deadline back. Holds the read lock.
     *
     * @param term the term this node leads in
     */
    private Outcome renew(Renew r, long now, long term) {
        Outcome o = table.checkRenew(r.getMailboxId(), r.getLeaseId(), r.getEpoch());
        if (o.isOk() && !deadlines.renew(o.lease(), table.policy(o.lease().namespace()).grace().toMillis(), now, term)) {
            o = Outcome.refused(o.lease(), "lease " + r.getLeaseId() + " of mailbox '" + r.getMailboxId()
                    + "' is expiring");
        }
        return o;
    }

    /** @return the index of the last entry in this node's log, or -1 */
    private long lastLogIndex() {
        RaftServer.Division division = division();
        if (division == null) {
            return -1;
        }
        TermIndex last = division.getRaftLog().getLastEntryTermIndex();
        return last == null ? -1 : last.getIndex();
    }

    /** @return the term as this node sees it, or -1 without a division */
    private long currentTerm() {
        RaftServer.Division division = division();
        return division == null ? -1 : division.getInfo().getCurrentTerm();
    }

    private boolean isLeader() {
        RaftServer.Division division = division();
        return division != null && division.getInfo().isLeader();
    }

    /** @return this node's member of the group, or null before the server is set or once it is gone */
    private RaftServer.@org.jspecify.annotations.Nullable Division division() {
        RaftServer s = server;
        try {
            return s == null ? null : s.getDivision(getGroupId());
        } catch (IOException e) {
            return null;
        }
    }

    /** Gives every active lease a full TTL plus grace from now; called when this node becomes leader. */
    public void resetDeadlines() {
        lock.readLock().lock();
        try {
            deadlines.resetAll(table, System.nanoTime());
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * @param mailboxId a mailbox
     * @param leaseId   its lease
     * @param nowNanos  {@link System#nanoTime()}
     * @return how long until that lease's deadline, in milliseconds (0 once due), or -1 if this node tracks no
     *         deadline for it (deadlines are the leader's: elsewhere they are not kept up to date)
     */
    public long millisLeft(String mailboxId, long leaseId, long nowNanos) {
        return deadlines.millisLeft(mailboxId, leaseId, nowNanos);
    }

    /**
     * Leases whose deadline has passed and that are not being expired already; marks them so.
     *
     * @param nowNanos the time
     * @param term     the term this node leads in
     * @return the expiries to propose, each stamped with that term
     */
    public List<Command.Expire> dueExpiries(long nowNanos, long term) {
        return deadlines.due(nowNanos, term);
    }

    /** Lets a lease be proposed for expiry again (its expire did not go through). */
    public void expiryFailed(String mailboxId, long leaseId) {
        deadlines.retry(mailboxId, leaseId);
    }

    /**
     * Runs a read against the table as this node has applied it.
     *
     * @param read the read; must not keep the table
     * @param <R>  its answer
     * @return the answer
     */
    public <R> R readTable(java.util.function.Function<LeaseTable, R> read) {
        lock.readLock().lock();
        try {
            return read.apply(table);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Adds a routing table watcher (see {@link RouteHub#subscribe}).
     *
     * @param fromRevision the last revision the watcher saw, or 0
     * @param sink         where its events go; called with this state machine's lock held
     * @return removes the watcher
     */
    public Runnable watchRoutes(long fromRevision, RouteHub.Sink sink) {
        lock.readLock().lock();
        try {
            return routes.subscribe(fromRevision, lastLogIndex(), table, sink);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Ends every routing table watch: this state machine stops being the node's (the node stopped serving
     * or restarts its Raft server), and the watchers must resume elsewhere or later.
     *
     * @param why what the watchers are told
     */
    public void endWatches(String why) {
        lock.readLock().lock();
        try {
            routes.endAll(why);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** @return how many routing table watchers this node serves */
    public int routeWatchers() {
        return routes.watchers();
    }

    /**
     * @return a copy of the table, for tests
     */
    public LeaseTable snapshotTable() {
        byte[] bytes = snapshotBytes();
        try {
            return LeaseTable.readFrom(new java.io.ByteArrayInputStream(bytes));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** @return a fingerprint of the state this node has applied (computed as it is written: no copy of the state) */
    public StateDigest digest() {
        lock.readLock().lock();
        try {
            long index = table.appliedIndex();
            java.security.MessageDigest sha = SnapshotParser.sha256();
            try (OutputStream out = new BufferedOutputStream(new java.security.DigestOutputStream(
                    OutputStream.nullOutputStream(), sha), 1 << 16)) {
                table.writeTo(out);
            }
            return new StateDigest(index, java.util.HexFormat.of().formatHex(sha.digest()));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // writing to nowhere does not fail
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * A state written for a backup: its file, open for reading and already unlinked (nothing is left behind
     * however the export ends), how large it is and the log index it is as of.
     *
     * @param channel      the file, to read from the start
     * @param size         its size
     * @param appliedIndex the index of the last command in it
     */
    public record ExportFile(java.nio.channels.FileChannel channel, long size, long appliedIndex) {
    }

    /**
     * Writes the state as a backup (the snapshot format with the SHA-256 of its bytes in its end record) into a new
     * {@code 0600} file in {@code dir}, under the read lock as a snapshot is: applying waits meanwhile, as it does for
     * a snapshot. Memory: a write buffer, whatever the state's size.
     *
     * @param dir where to put the file
     * @return the file
     * @throws IOException if it cannot be written
     */
    public ExportFile export(java.nio.file.Path dir) throws IOException {
        PrivateFiles.directory(dir);
        java.nio.file.Path tmp = Files.createTempFile(dir, "export-", ".tmp", PrivateFiles.file());
        try {
            long index;
            lock.readLock().lock();
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16)) {
                table.writeExport(out);
                index = table.appliedIndex();
            } finally {
                lock.readLock().unlock();
            }
            java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(tmp,
                    java.nio.file.StandardOpenOption.READ);
            long size = channel.size();
            Files.deleteIfExists(tmp); // readable while open; gone with the export, or with the process
            return new ExportFile(channel, size, index);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
    }

    /** Calls waiting for this node to apply an index, by index. Guarded by itself. */
    private final java.util.TreeMap<Long, List<CompletableFuture<Void>>> waiters = new java.util.TreeMap<>();

    /**
     * @param index a command's log index (as a table's {@code appliedIndex} counts it)
     * @return completes once this node has applied that index (at once if it has)
     */
    public CompletableFuture<Void> awaitApplied(long index) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (waiters) {
            waiters.computeIfAbsent(index, k -> new ArrayList<>()).add(f);
        }
        wakeWaiters();
        return f;
    }

    private void wakeWaiters() {
        List<CompletableFuture<Void>> due = new ArrayList<>();
        synchronized (waiters) {
            if (waiters.isEmpty()) {
                return;
            }
            long applied = readTable(LeaseTable::appliedIndex);
            var head = waiters.headMap(applied, true);
            head.values().forEach(due::addAll);
            head.clear();
        }
        due.forEach(f -> f.complete(null));
    }

    private byte[] snapshotBytes() {
        lock.readLock().lock();
        try {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            table.writeTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * In-memory renewal deadlines; meaningful on the leader only. A renewal and the sweeper's decision
     * to expire are atomic per lease, so a renewal that was answered OK is never followed by the
     * expiry of the deadline it replaced.
     *
     * <p>Every replica tracks every active lease as it applies the log (followers too, so a follower that
     * becomes leader has an entry for each), and an entry is only ever replaced or refreshed in place, never
     * missing while its lease is active: a renewal that finds no entry would be refused, and a new leader must
     * never refuse a renewal that the old one would have accepted (issue 30, finding 0: the reset on a change of
     * leader used to empty the map and fill it again while renewals were being served).
     */
    static final class Deadlines {
        private static final class Tracked {
            final long leaseId;
            final long epoch;
            final long windowNanos;
            /** The lease as the table holds it (active, this id and epoch), for answering a renewal without it. */
            volatile Lease lease;
            long deadline; // guarded by this
            /** The term in which this node decided to expire the lease, or -1. Guarded by this. */
            long expiringInTerm = -1;

            Tracked(Lease lease, long windowNanos, long deadline) {
                this.leaseId = lease.leaseId();
                this.epoch = lease.epoch();
                this.lease = lease;
                this.windowNanos = windowNanos;
                this.deadline = deadline;
            }

            /**
             * @param term the term the renewal is served in
             * @return false if this leader, in this term, has decided to expire the lease
             */
            synchronized boolean renew(long now, long term) {
                if (expiringInTerm >= 0 && expiringInTerm == term) {
                    return false;
                }
                // a decision of an earlier term: by the time this node leads again, an expiry proposed then has been
                // applied (and the table refused this renewal) or is gone for good, so it no longer counts
                expiringInTerm = -1;
                deadline = Math.max(deadline, now + windowNanos);
                return true;
            }

            /** A full window from {@code now}, never shortening one that a renewal just set; no decision kept. */
            synchronized void reset(long now) {
                expiringInTerm = -1;
                deadline = Math.max(deadline, now + windowNanos);
            }

            synchronized boolean markIfDue(long now, long term) {
                if (expiringInTerm == term || now - deadline <= 0) {
                    return false;
                }
                expiringInTerm = term;
                return true;
            }

            synchronized boolean isExpiring() {
                return expiringInTerm >= 0;
            }

            /** @return the deadline, unless this node decided in {@code term} to expire the lease (then null) */
            synchronized @Nullable Long deadlineUnlessExpiring(long term) {
                return expiringInTerm == term ? null : deadline;
            }

            synchronized void retry() {
                expiringInTerm = -1;
            }
        }

        private final ConcurrentHashMap<String, Tracked> byMailbox = new ConcurrentHashMap<>();

        /**
         * Never later than the earliest deadline a sweep could find due (nanoTime): a sweep before it finds nothing
         * and skips the scan. Scanning every deadline on every sweep (20 a second) cost the leader a share of its
         * CPU at 100,000 leases (issue 33); now a sweep scans when a deadline may have come, and at least every
         * {@link #MAX_SKIP_NANOS}. Deadlines only move later (renewals, resets), except for a new entry and an
         * expiry that did not go through, which lower this bound.
         */
        private final java.util.concurrent.atomic.AtomicLong earliest =
                new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
        private static final long MAX_SKIP_NANOS = TimeUnit.SECONDS.toNanos(1);

        private void lower(long deadline) {
            earliest.accumulateAndGet(deadline, (current, d) -> d - current < 0 ? d : current);
        }

        /**
         * @return false if the lease, as it is, is being expired already (a retried acquire that returns it
         *         unchanged is then no renewal), else true
         */
        boolean track(Lease l, long graceMillis, long now) {
            Tracked t = byMailbox.get(l.mailboxId());
            if (t != null && t.leaseId == l.leaseId() && t.epoch == l.epoch()) {
                // the same runner acquiring again counts as a renewal, unless an expiry has been decided
                if (t.isExpiring()) {
                    return false;
                }
                t.lease = l;
                t.reset(now);
                return true;
            }
            long window = TimeUnit.MILLISECONDS.toNanos(l.ttlMillis() + graceMillis);
            byMailbox.put(l.mailboxId(), new Tracked(l, window, now + window));
            lower(now + window);
            return true;
        }

        /**
         * Renews a lease these deadlines hold as given, without the table.
         *
         * @return OK with the lease, a refusal if this leader has decided in this term to expire it, or null if
         *         no deadline matches the renewal's lease id and epoch (the table decides)
         */
        @Nullable Outcome renewCurrent(Renew r, long now, long term) {
            Tracked t = byMailbox.get(r.getMailboxId());
            if (t == null || t.leaseId != r.getLeaseId() || t.epoch != r.getEpoch()) {
                return null;
            }
            Lease l = t.lease;
            return t.renew(now, term) ? Outcome.ok(l) : Outcome.refused(l, "lease " + r.getLeaseId() + " of mailbox '"
                    + r.getMailboxId() + "' is expiring");
        }

        long millisLeft(String mailboxId, long leaseId, long now) {
            Tracked t = byMailbox.get(mailboxId);
            if (t == null || t.leaseId != leaseId) {
                return -1;
            }
            synchronized (t) {
                return Math.max(0, TimeUnit.NANOSECONDS.toMillis(t.deadline - now));
            }
        }

        void forget(String mailboxId, long leaseId) {
            byMailbox.computeIfPresent(mailboxId, (k, t) -> t.leaseId == leaseId ? null : t);
        }

        /**
         * Pushes an active lease's deadline back.
         *
         * @param l           the lease as the table holds it (active, the one the renewal names)
         * @param graceMillis its namespace's grace
         * @param term        the term the renewal is served in
         * @return false if this leader has decided, in this term, to expire it
         */
        boolean renew(Lease l, long graceMillis, long now, long term) {
            Tracked t = byMailbox.get(l.mailboxId());
            if (t == null || t.leaseId != l.leaseId() || t.epoch != l.epoch()) {
                // the table says the lease is active and this node has no deadline for it (it cannot happen while
                // every apply tracks what it grants): a deadline from now, rather than refusing a live lease
                long window = TimeUnit.MILLISECONDS.toNanos(l.ttlMillis() + graceMillis);
                t = byMailbox.merge(l.mailboxId(), new Tracked(l, window, now + window),
                        (old, fresh) -> old.leaseId == fresh.leaseId && old.epoch == fresh.epoch ? old : fresh);
                lower(now + window);
            }
            return t.renew(now, term);
        }

        /**
         * Gives every active lease of the table a full window from {@code now}, in place: each entry is refreshed
         * or replaced where it stands, and entries of leases no longer active are dropped afterwards, so a
         * renewal served meanwhile always finds its lease's entry. The caller holds the read lock (the table does
         * not change meanwhile).
         */
        void resetAll(LeaseTable table, long now) {
            java.util.HashSet<String> active = new java.util.HashSet<>();
            for (Lease l : table.leases()) {
                if (l.state() != LeaseState.ACTIVE) {
                    continue;
                }
                active.add(l.mailboxId());
                long window = TimeUnit.MILLISECONDS.toNanos(l.ttlMillis()
                        + table.policy(l.namespace()).grace().toMillis());
                byMailbox.compute(l.mailboxId(), (k, t) -> {
                    if (t != null && t.leaseId == l.leaseId() && t.epoch == l.epoch() && t.windowNanos == window) {
                        t.lease = l;
                        t.reset(now);
                        return t;
                    }
                    return new Tracked(l, window, now + window);
                });
                lower(now + window); // no later than its deadline now
            }
            byMailbox.keySet().retainAll(active);
        }

        List<Command.Expire> due(long now, long term) {
            long bound = earliest.get();
            if (now - bound < 0) {
                return List.of();
            }
            // a lowering that comes while this scan runs stays: it is only ever lowered from here on
            earliest.compareAndSet(bound, now + MAX_SKIP_NANOS);
            List<Command.Expire> out = new ArrayList<>();
            long[] next = {now + MAX_SKIP_NANOS};
            byMailbox.forEach((mailbox, t) -> {
                if (t.markIfDue(now, term)) {
                    out.add(new Command.Expire(mailbox, t.leaseId, t.epoch, term, 0));
                } else {
                    Long deadline = t.deadlineUnlessExpiring(term);
                    if (deadline != null && deadline - next[0] < 0) {
                        next[0] = deadline;
                    }
                }
            });
            lower(next[0]);
            return out;
        }

        void retry(String mailboxId, long leaseId) {
            Tracked t = byMailbox.get(mailboxId);
            if (t != null && t.leaseId == leaseId) {
                t.retry();
                lower(System.nanoTime()); // its deadline has passed: the next sweep looks again
            }
        }

        /** @return how many leases have a deadline (for tests) */
        int size() {
            return byMailbox.size();
        }
    }
}
