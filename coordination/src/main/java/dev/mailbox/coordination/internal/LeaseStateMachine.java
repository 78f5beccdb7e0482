package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
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

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        this.server = server;
        storage.init(raftStorage);
        load(storage.getLatestSnapshot());
    }

    @Override
    public void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot());
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
        LeaseTable loaded;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file.toPath()))) {
            loaded = LeaseTable.readFrom(in);
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
    }

    @Override
    public long takeSnapshot() throws IOException {
        lock.readLock().lock();
        try {
            TermIndex last = getLastAppliedTermIndex();
            if (last == null || last.getIndex() < 0) {
                return -1;
            }
            File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
            File tmp = new File(file.getParentFile(), file.getName() + ".tmp");
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp.toPath()))) {
                table.writeTo(out);
            }
            Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
            storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
            return last.getIndex();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        Command command;
        try {
            command = Command.decode(request.getMessage().getContent().toByteArray());
        } catch (IllegalArgumentException e) {
            throw new IOException("not a lease command: " + e.getMessage(), e);
        }
        byte[] stamped = command.stamped(System.currentTimeMillis()).encode();
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request)
                .setLogData(ByteString.copyFrom(stamped)).build();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        Command command = Command.decode(entry.getStateMachineLogEntry().getLogData().toByteArray());
        Outcome outcome;
        lock.writeLock().lock();
        try {
            outcome = table.apply(entry.getIndex(), entry.getTerm(), command);
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            LeaseTable.RouteChange change = table.lastRouteChange();
            if (change != null) {
                routes.publish(change);
            }
            Lease lease = outcome.lease();
            if (outcome.isOk() && lease != null) {
                if (lease.state() == LeaseState.ACTIVE) {
                    deadlines.track(lease, table.policy(lease.namespace()).grace().toMillis(), System.nanoTime());
                } else {
                    deadlines.forget(lease.mailboxId(), lease.leaseId());
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(Wire.encode(outcome))));
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        Wire.Read read;
        try {
            read = Wire.decodeRead(request.getContent().toByteArray());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        byte[] answer;
        lock.readLock().lock();
        try {
            if (read instanceof Wire.Read.Get g) {
                Lease l = table.get(g.mailboxId());
                answer = Wire.encode(l == null ? Outcome.notFound(g.mailboxId()) : Outcome.ok(l));
            } else if (read instanceof Wire.Read.ListLeases l) {
                List<Lease> out = new ArrayList<>();
                for (Lease lease : table.leases()) {
                    if (l.namespace().isEmpty() || lease.namespace().equals(l.namespace())) {
                        out.add(lease);
                    }
                }
                answer = Wire.encode(out);
            } else if (read instanceof Wire.Read.Policy p) {
                answer = Wire.encode(table.policy(p.namespace()));
            } else if (read instanceof Wire.Read.View v) {
                answer = Views.answer(v, table);
            } else {
                if (!isLeader()) {
                    // only the leader's deadlines count; a renewal anywhere else would be lost
                    return CompletableFuture.failedFuture(new IllegalStateException(
                            "renewals are served by the leader only"));
                }
                long now = System.nanoTime();
                if (read instanceof Wire.Read.RenewBatch batch) {
                    List<Outcome> outcomes = new ArrayList<>(batch.renewals().size());
                    for (Wire.Read.Renew r : batch.renewals()) {
                        outcomes.add(renew(r, now));
                    }
                    answer = Wire.encodeOutcomes(outcomes);
                } else {
                    answer = Wire.encode(renew((Wire.Read.Renew) read, now));
                }
            }
        } finally {
            lock.readLock().unlock();
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(answer)));
    }

    /** Checks one renewal against the table and pushes its deadline back. Holds the read lock. */
    private Outcome renew(Wire.Read.Renew r, long now) {
        Outcome o = table.checkRenew(r.mailboxId(), r.leaseId(), r.epoch());
        if (o.isOk() && !deadlines.renew(r.mailboxId(), r.leaseId(), now)) {
            o = Outcome.refused(o.lease(), "lease " + r.leaseId() + " of mailbox '" + r.mailboxId() + "' is expiring");
        }
        return o;
    }

    private boolean isLeader() {
        RaftServer s = server;
        try {
            return s != null && s.getDivision(getGroupId()).getInfo().isLeader();
        } catch (IOException e) {
            return false;
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
            return routes.subscribe(fromRevision, table, sink);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** @return how many routing table watchers this node serves */
    public int routeWatchers() {
        return routes.watchers();
    }

    /**
     * @return a copy of the table, for tests and status
     */
    public LeaseTable snapshotTable() {
        lock.readLock().lock();
        try {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            table.writeTo(out);
            return LeaseTable.readFrom(new java.io.ByteArrayInputStream(out.toByteArray()));
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
     */
    static final class Deadlines {
        private static final class Tracked {
            final long leaseId;
            final long epoch;
            final long windowNanos;
            long deadline; // guarded by this
            boolean expiring; // guarded by this

            Tracked(long leaseId, long epoch, long windowNanos, long deadline) {
                this.leaseId = leaseId;
                this.epoch = epoch;
                this.windowNanos = windowNanos;
                this.deadline = deadline;
            }

            synchronized boolean renew(long now) {
                if (expiring) {
                    return false;
                }
                deadline = Math.max(deadline, now + windowNanos);
                return true;
            }

            synchronized boolean markIfDue(long now) {
                if (expiring || now - deadline <= 0) {
                    return false;
                }
                expiring = true;
                return true;
            }

            synchronized void retry() {
                expiring = false;
            }
        }

        private final ConcurrentHashMap<String, Tracked> byMailbox = new ConcurrentHashMap<>();

        void track(Lease l, long graceMillis, long now) {
            Tracked t = byMailbox.get(l.mailboxId());
            if (t != null && t.leaseId == l.leaseId() && t.epoch == l.epoch()) {
                t.renew(now); // the same runner acquiring again counts as a renewal
                return;
            }
            long window = TimeUnit.MILLISECONDS.toNanos(l.ttlMillis() + graceMillis);
            byMailbox.put(l.mailboxId(), new Tracked(l.leaseId(), l.epoch(), window, now + window));
        }

        void forget(String mailboxId, long leaseId) {
            byMailbox.computeIfPresent(mailboxId, (k, t) -> t.leaseId == leaseId ? null : t);
        }

        boolean renew(String mailboxId, long leaseId, long now) {
            Tracked t = byMailbox.get(mailboxId);
            return t != null && t.leaseId == leaseId && t.renew(now);
        }

        void resetAll(LeaseTable table, long now) {
            byMailbox.clear();
            for (Lease l : table.leases()) {
                if (l.state() == LeaseState.ACTIVE) {
                    long window = TimeUnit.MILLISECONDS.toNanos(l.ttlMillis()
                            + table.policy(l.namespace()).grace().toMillis());
                    byMailbox.put(l.mailboxId(), new Tracked(l.leaseId(), l.epoch(), window, now + window));
                }
            }
        }

        List<Command.Expire> due(long now, long term) {
            List<Command.Expire> out = new ArrayList<>();
            byMailbox.forEach((mailbox, t) -> {
                if (t.markIfDue(now)) {
                    out.add(new Command.Expire(mailbox, t.leaseId, t.epoch, term, 0));
                }
            });
            return out;
        }

        void retry(String mailboxId, long leaseId) {
            Tracked t = byMailbox.get(mailboxId);
            if (t != null && t.leaseId == leaseId) {
                t.retry();
            }
        }
    }
}
