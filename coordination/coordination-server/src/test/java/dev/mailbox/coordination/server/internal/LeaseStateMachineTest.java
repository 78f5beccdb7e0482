package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.LeaseState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The state machine around the lease table, driven entry by entry (no Ratis server): what the leader's
 * in-memory renewal deadlines add to the table's answers.
 */
class LeaseStateMachineTest {

    private static final Health HEALTHY = new Health() {
        @Override
        public void logFailed(Throwable cause) {
        }

        @Override
        public void fatal(Throwable cause) {
        }

        @Override
        public @Nullable String fault() {
            return null;
        }

        @Override
        public long appliedIndex() {
            return 0;
        }

        @Override
        public long commitIndex() {
            return 0;
        }
    };

    @Test
    @DisplayName("a retried acquire that lands after the leader decided to expire the lease is not answered OK: "
            + "the expiry lands next, and another runner is granted the mailbox while the first believes it holds it")
    void retriedAcquireOfAnExpiringLeaseIsRefused() throws Exception {
        LeaseStateMachine sm = new LeaseStateMachine(HEALTHY);
        Command.Acquire first = new Command.Acquire("race@m1", "r1", "node-a", "127.0.0.1:9", 1_000, "call-1", 1_000);
        Outcome granted = apply(sm, 1, 1, first);
        assertThat(granted.isOk()).isTrue();

        // the TTL plus grace passes without a renewal: the leader's sweeper decides the expiry, and proposes it
        List<Command.Expire> due = sm.dueExpiries(System.nanoTime() + TimeUnit.SECONDS.toNanos(60), 1);
        assertThat(due).hasSize(1);

        // the runner's client retries its acquire (the first answer was lost) with the same request id; it is
        // committed just before the expiry
        Outcome retried = apply(sm, 2, 1, first);
        Outcome expired = apply(sm, 3, 1, due.get(0));
        assertThat(expired.isOk()).as("the expiry decided before the retry applies").isTrue();
        assertThat(expired.lease().state()).isEqualTo(LeaseState.EXPIRED);
        Outcome other = apply(sm, 4, 1, new Command.Acquire("race@m1", "r2", "node-b", "127.0.0.1:9", 1_000,
                "call-2", 2_000));
        assertThat(other.isOk()).as("another runner takes the expired mailbox").isTrue();

        // so the retried acquire must not have been answered as a grant: its caller would count the lease as
        // held for a whole TTL from when it sent the retry, while r2 holds it
        assertThat(retried.isOk()).as("the retried acquire's answer: " + retried).isFalse();
        assertThat(retried.code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
    }

    @Test
    @DisplayName("an expiry this node decided as leader of an earlier term, that never went through, does not refuse "
            + "renewals once it leads again; in the term it was decided in, it does")
    void staleExpiryDecisionDoesNotRefuseRenewals() {
        LeaseTable table = new LeaseTable();
        Outcome granted = table.apply(1, 1, new Command.Acquire("ns@m1", "r1", "node-a", "127.0.0.1:9", 1_000, 1_000));
        dev.mailbox.coordination.Lease lease = granted.lease();
        LeaseStateMachine.Deadlines deadlines = new LeaseStateMachine.Deadlines();
        long t0 = System.nanoTime();
        deadlines.track(lease, 0, t0);

        // leader of term 3: the deadline passes, it decides the expiry, then loses leadership before it commits
        long late = t0 + TimeUnit.SECONDS.toNanos(5);
        assertThat(deadlines.due(late, 3)).hasSize(1);
        assertThat(deadlines.renew(lease, 0, late, 3)).as("in the term that decided the expiry").isFalse();

        // leader again in term 5, before its reset on taking over: the decision of term 3 no longer counts (its
        // expiry was applied, and the table refuses the renewal, or it is gone for good)
        assertThat(deadlines.renew(lease, 0, late, 5)).as("in a later term").isTrue();
        assertThat(deadlines.due(late + TimeUnit.MILLISECONDS.toNanos(500), 5)).as("renewed a full TTL").isEmpty();
    }

    @Test
    @DisplayName("a reset for a new leader keeps every active lease's entry (refreshed in place) and drops the rest")
    void resetRefreshesInPlace() {
        LeaseTable table = new LeaseTable();
        Outcome a = table.apply(1, 1, new Command.Acquire("ns@a", "r1", "node-a", "127.0.0.1:9", 1_000, 1_000));
        Outcome b = table.apply(2, 1, new Command.Acquire("ns@b", "r2", "node-a", "127.0.0.1:9", 1_000, 1_000));
        LeaseStateMachine.Deadlines deadlines = new LeaseStateMachine.Deadlines();
        long t0 = System.nanoTime();
        deadlines.track(a.lease(), 0, t0);
        deadlines.track(b.lease(), 0, t0);
        table.apply(3, 1, new Command.Release("ns@b", b.lease().leaseId(), b.lease().epoch(), 1_000));
        long later = t0 + TimeUnit.SECONDS.toNanos(10);
        assertThat(deadlines.due(later, 2)).hasSize(2); // decided as leader of term 2

        deadlines.resetAll(table, later); // leader of term 4
        assertThat(deadlines.size()).as("the released lease's entry is dropped").isEqualTo(1);
        assertThat(deadlines.due(later + TimeUnit.MILLISECONDS.toNanos(900), 4)).as("a full TTL from the reset")
                .isEmpty();
        assertThat(deadlines.renew(a.lease(), 0, later, 4)).isTrue();
    }

    @Test
    @DisplayName("a sweep that skips scanning until a deadline may be due still finds a lease granted meanwhile with a "
            + "shorter window, and an expiry that did not go through")
    void sweepsSkipOnlyWhatCannotBeDue() {
        LeaseTable table = new LeaseTable();
        Outcome lng = table.apply(1, 1, new Command.Acquire("ns@long", "r1", "node-a", "127.0.0.1:9", 60_000, 1_000));
        Outcome shrt = table.apply(2, 1, new Command.Acquire("ns@short", "r2", "node-a", "127.0.0.1:9", 1_000, 1_000));
        LeaseStateMachine.Deadlines deadlines = new LeaseStateMachine.Deadlines();
        long t0 = System.nanoTime();
        deadlines.track(lng.lease(), 0, t0);
        // a scan (the clock is the caller's): nothing due for a while, so sweeps skip scanning until then
        assertThat(deadlines.due(t0 + TimeUnit.SECONDS.toNanos(10), 1)).isEmpty();

        // an entry with an earlier deadline than that: the next sweep past it finds it
        deadlines.track(shrt.lease(), 0, t0 + TimeUnit.MILLISECONDS.toNanos(100));
        long past = t0 + TimeUnit.MILLISECONDS.toNanos(1_200);
        assertThat(deadlines.due(past, 1)).extracting(Command.Expire::mailboxId).containsExactly("ns@short");
        assertThat(deadlines.due(past, 1)).as("decided once per term").isEmpty();

        // the expiry did not go through: the next sweep decides it again
        deadlines.retry("ns@short", shrt.lease().leaseId());
        assertThat(deadlines.due(past, 1)).extracting(Command.Expire::mailboxId).containsExactly("ns@short");
        assertThat(deadlines.due(t0 + TimeUnit.SECONDS.toNanos(61), 1)).extracting(Command.Expire::mailboxId)
                .containsExactly("ns@long");
    }

    private static Outcome apply(LeaseStateMachine sm, long index, long term, Command command) throws Exception {
        LogEntryProto entry = LogEntryProto.newBuilder().setIndex(index).setTerm(term)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
                        .setLogData(ByteString.copyFrom(StateCodec.encode(command))))
                .build();
        TransactionContext trx = TransactionContext.newBuilder().setServerRole(RaftPeerRole.FOLLOWER)
                .setStateMachine(sm).setLogEntry(entry).build();
        return Outcome.parse(sm.applyTransaction(trx).get().getContent().toByteArray());
    }
}
