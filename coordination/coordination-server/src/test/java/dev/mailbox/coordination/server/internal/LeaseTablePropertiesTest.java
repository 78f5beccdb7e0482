package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Random logs: replay is deterministic, snapshots are faithful, and fencing always holds. */
class LeaseTablePropertiesTest {

    private static final List<String> MAILBOXES = List.of("a@n1", "a@n2", "b@n1");
    private static final List<String> RUNNERS = List.of("r1", "r2", "r3");

    @Property(tries = 300, seed = "20261121")
    void replayAndSnapshotsAreDeterministic(@ForAll("logs") List<Command> log, @ForAll @IntRange(min = 0, max = 60) int cut)
            throws Exception {
        LeaseTable first = new LeaseTable();
        LeaseTable second = new LeaseTable();
        LeaseTable restored = null;
        int at = Math.min(cut, log.size());
        for (int i = 0; i < log.size(); i++) {
            if (i == at) {
                restored = LeaseTable.readFrom(new ByteArrayInputStream(LeaseTableTest.bytes(first)));
            }
            Outcome o1 = first.apply(i + 1, 1, log.get(i));
            Outcome o2 = second.apply(i + 1, 1, log.get(i));
            assertThat(o2).isEqualTo(o1);
            if (restored != null) {
                assertThat(restored.apply(i + 1, 1, log.get(i))).isEqualTo(o1);
            }
        }
        if (restored == null) {
            restored = LeaseTable.readFrom(new ByteArrayInputStream(LeaseTableTest.bytes(first)));
        }
        assertThat(LeaseTableTest.bytes(second)).isEqualTo(LeaseTableTest.bytes(first));
        assertThat(LeaseTableTest.bytes(restored)).isEqualTo(LeaseTableTest.bytes(first));
    }

    @Property(tries = 300, seed = "20261121")
    void fencing(@ForAll("logs") List<Command> log) {
        LeaseTable table = new LeaseTable();
        Map<String, Long> lastEpoch = new HashMap<>();
        for (int i = 0; i < log.size(); i++) {
            Command c = log.get(i);
            Lease before = c instanceof Command.Acquire a ? table.get(a.mailboxId()) : null;
            Lease current = mailboxOf(c) == null ? null : table.get(mailboxOf(c));
            Outcome o = table.apply(i + 1, 1, c);
            if (c instanceof Command.Acquire a && o.isOk() && o.lease().leaseId() == i + 1) {
                // a new grant: nobody else held the mailbox, and the epoch grew
                assertThat(before == null || !before.state().isLive()).as("granted over a live lease").isTrue();
                assertThat(o.lease().epoch()).isGreaterThan(lastEpoch.getOrDefault(a.mailboxId(), 0L));
            }
            if (c instanceof Command.Release r) {
                boolean names = current != null && current.leaseId() == r.leaseId() && current.epoch() == r.epoch();
                boolean accepted = names && (current.state() == LeaseState.ACTIVE || current.state() == LeaseState.RELEASED);
                assertThat(o.isOk()).as("release accepted iff it names the current lease and epoch, active or "
                        + "already released (a retry)").isEqualTo(accepted);
                if (o.isOk()) {
                    assertThat(o.lease().state()).isEqualTo(LeaseState.RELEASED);
                }
            }
            for (Lease l : table.leases()) {
                lastEpoch.merge(l.mailboxId(), l.epoch(), Math::max);
            }
        }
    }

    private static String mailboxOf(Command c) {
        if (c instanceof Command.Acquire a) {
            return a.mailboxId();
        } else if (c instanceof Command.Release r) {
            return r.mailboxId();
        } else if (c instanceof Command.Expire e) {
            return e.mailboxId();
        } else if (c instanceof Command.Revoke r) {
            return r.mailboxId();
        } else if (c instanceof Command.Reclaim r) {
            return r.mailboxId();
        }
        return null;
    }

    @Provide
    Arbitrary<List<Command>> logs() {
        Arbitrary<String> mailbox = Arbitraries.of(MAILBOXES);
        Arbitrary<Long> time = Arbitraries.longs().between(0, 100_000);
        Arbitrary<Long> small = Arbitraries.longs().between(1, 40);
        Arbitrary<Command> acquire = Combinators.combine(mailbox, Arbitraries.of(RUNNERS), time)
                .as((m, r, t) -> new Command.Acquire(m, r, "node", "addr", 0, t));
        Arbitrary<Command> release = Combinators.combine(mailbox, small, Arbitraries.longs().between(1, 6), time)
                .as(Command.Release::new);
        Arbitrary<Command> expire = Combinators.combine(mailbox, small, Arbitraries.longs().between(1, 6),
                Arbitraries.longs().between(1, 2), time).as(Command.Expire::new);
        Arbitrary<Command> revoke = Combinators.combine(mailbox, time).as(Command.Revoke::new);
        Arbitrary<Command> reclaim = Combinators.combine(mailbox, time).as(Command.Reclaim::new);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, acquire), net.jqwik.api.Tuple.of(4, release), net.jqwik.api.Tuple.of(2, expire),
                net.jqwik.api.Tuple.of(1, revoke), net.jqwik.api.Tuple.of(1, reclaim))
                .list().ofMinSize(1).ofMaxSize(60).map(ArrayList::new);
    }
}
