package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.Route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.LeaseState;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Lease semantics of the replicated table, one command at a time. */
class LeaseTableTest {

    private final LeaseTable table = new LeaseTable();
    private long index;

    private Outcome apply(Command c) {
        return table.apply(++index, 1, c);
    }

    private Lease acquire(String mailbox, String runner) {
        Outcome o = apply(new Command.Acquire(mailbox, runner, "node-1", "10.0.0.1:7000", 0, 1_000 + index));
        assertThat(o.isOk()).as(o.message()).isTrue();
        return o.lease();
    }

    @Test
    @DisplayName("a grant gets the log index as its id, epoch 1, the namespace's TTL and its partition")
    void grant() {
        Lease l = acquire("orders@n1", "runner-a");
        assertThat(l.leaseId()).isEqualTo(1);
        assertThat(l.epoch()).isEqualTo(1);
        assertThat(l.state()).isEqualTo(LeaseState.ACTIVE);
        assertThat(l.ttlMillis()).isEqualTo(LeasePolicy.DEFAULT.ttl().toMillis());
        assertThat(l.partition()).isEqualTo(dev.mailbox.coordination.PartitionMap.partition("orders@n1")).isBetween(0, 255);
        assertThat(l.namespace()).isEqualTo("orders");
        assertThat(l.grantedAtMillis()).isEqualTo(1_000);
        assertThat(table.get("orders@n1")).isEqualTo(l);
    }

    @Test
    @DisplayName("a live lease denies other runners; the same runner re-acquiring keeps its lease under a new epoch")
    void exclusiveAndIdempotent() {
        Lease l = acquire("orders@n1", "runner-a");
        Outcome other = apply(new Command.Acquire("orders@n1", "runner-b", "node-2", "x:1", 0, 5_000));
        assertThat(other.code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(other.message()).contains("held by runner 'runner-a'").contains("epoch 1");
        Outcome again = apply(new Command.Acquire("orders@n1", "runner-a", "node-1", "10.0.0.1:7000", 0, 6_000));
        assertThat(again.isOk()).isTrue();
        assertThat(again.lease().leaseId()).isEqualTo(l.leaseId());
        assertThat(again.lease().epoch()).isEqualTo(l.epoch() + 1);
        assertThat(apply(new Command.Release("orders@n1", l.leaseId(), l.epoch(), 7_000)).message())
                .as("the earlier incarnation's release, landing late").contains("stale epoch 1");
        assertThat(table.get("orders@n1")).isEqualTo(again.lease());
    }

    @Test
    @DisplayName("a runner id is only a name: without the holder's secret, the same runner id is another runner")
    void holderSecret() {
        String mine = "a".repeat(64);
        String theirs = "b".repeat(64);
        Outcome first = apply(new Command.Acquire("secret@n1", "runner-a", "node-1", "10.0.0.1:7000", 0, "c1", mine,
                1_000));
        assertThat(first.isOk()).isTrue();
        for (String claim : new String[] {theirs, ""}) {
            Outcome impostor = apply(new Command.Acquire("secret@n1", "runner-a", "node-9", "10.9.9.9:7000", 0, "c2",
                    claim, 2_000));
            assertThat(impostor.code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
            assertThat(impostor.message()).contains("without that holder's secret")
                    .contains("another process running as 'runner-a'");
        }
        assertThat(table.get("secret@n1")).as("nothing changed: same epoch, same address").isEqualTo(first.lease());
        assertThat(table.route("secret@n1").address()).isEqualTo("10.0.0.1:7000");
        Outcome again = apply(new Command.Acquire("secret@n1", "runner-a", "node-1", "10.0.0.1:7000", 0, "c3", mine,
                3_000));
        assertThat(again.lease().epoch()).as("the holder itself re-acquires under a new epoch")
                .isEqualTo(first.lease().epoch() + 1);
        // once released, the secret goes with the lease: anyone may take the mailbox
        apply(new Command.Release("secret@n1", again.lease().leaseId(), again.lease().epoch(), 4_000));
        assertThat(apply(new Command.Acquire("secret@n1", "runner-a", "node-9", "10.9.9.9:7000", 0, "c4", theirs,
                5_000)).isOk()).isTrue();
        assertThat(apply(new Command.Acquire("x@n1", "r", "n", "a:1", 0, "c5", "not-hex", 6_000)).message())
                .contains("64 hex digits");
    }

    @Test
    @DisplayName("a retried acquire (same request id) gets exactly the same lease; a new call gets a new epoch")
    void retriedAcquire() {
        Outcome first = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-1", 1_000));
        Outcome retry = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-1", 1_100));
        assertThat(retry).isEqualTo(first);
        Outcome next = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-2", 1_200));
        assertThat(next.lease().epoch()).isEqualTo(first.lease().epoch() + 1);
        Outcome lateRetry = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-1", 1_300));
        assertThat(lateRetry.code()).as("a late copy of the earlier call (format 5 on)")
                .isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(lateRetry.message()).contains("late copy").contains("request call-1").contains("epoch 2");
        assertThat(table.get("retry@n1")).as("nothing changed: the newer incarnation keeps its epoch")
                .isEqualTo(next.lease());
        Outcome third = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-3", 1_400));
        assertThat(third.lease().epoch()).as("a new call still gets a new epoch").isEqualTo(3);
        for (String old : List.of("call-1", "call-2")) {
            assertThat(apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, old, 1_500)).code())
                    .as("every earlier call of this holding is remembered: " + old)
                    .isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        }
        Lease held = table.get("retry@n1");
        apply(new Command.Release("retry@n1", held.leaseId(), held.epoch(), 1_600));
        Outcome fresh = apply(new Command.Acquire("retry@n1", "runner-a", "n", "a:1", 0, "call-1", 1_700));
        assertThat(fresh.isOk()).as("a released lease forgets them: the mailbox is granted anew").isTrue();
    }

    @Test
    @DisplayName("entries of format 4 and older keep their old meaning on replay: an old call's copy raises the epoch, "
            + "and nothing is remembered for it")
    void lateCopyBeforeFormat5() {
        Outcome first = table.apply(++index, 1, new Command.Acquire("old@n1", "runner-a", "n", "a:1", 0, "call-1",
                1_000), 4);
        Outcome next = table.apply(++index, 1, new Command.Acquire("old@n1", "runner-a", "n", "a:1", 0, "call-2",
                1_100), 4);
        assertThat(table.superseded("old@n1")).isEmpty();
        Outcome late = table.apply(++index, 1, new Command.Acquire("old@n1", "runner-a", "n", "a:1", 0, "call-1",
                1_200), 4);
        assertThat(late.lease().epoch()).isEqualTo(next.lease().epoch() + 1).isEqualTo(first.lease().epoch() + 2);
    }

    @Test
    @DisplayName("a snapshot keeps the earlier request ids, at most 8, newest first: a late copy is refused after a "
            + "restart too")
    void supersededInSnapshot() throws IOException {
        for (int i = 1; i <= 10; i++) {
            assertThat(apply(new Command.Acquire("snap@n1", "runner-a", "n", "a:1", 0, "call-" + i, 1_000 + i))
                    .isOk()).isTrue();
        }
        assertThat(table.superseded("snap@n1")).containsExactly("call-9", "call-8", "call-7", "call-6", "call-5",
                "call-4", "call-3", "call-2");
        byte[] bytes = bytes(table);
        LeaseTable restored = LeaseTable.readFrom(new ByteArrayInputStream(bytes));
        assertThat(bytes(restored)).isEqualTo(bytes);
        Command late = new Command.Acquire("snap@n1", "runner-a", "n", "a:1", 0, "call-4", 2_000);
        assertThat(restored.apply(index + 1, 1, late).code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        Command older = new Command.Acquire("snap@n1", "runner-a", "n", "a:1", 0, "call-1", 2_000);
        assertThat(restored.apply(index + 2, 1, older).lease().epoch()).as("beyond the 8 remembered").isEqualTo(11);
    }

    private static Command.Acquire call(String mailbox, String requestId, long sequence, long now) {
        return new Command.Acquire(mailbox, "runner-a", "n", "a:1", 0, requestId, "", sequence, now);
    }

    @Test
    @DisplayName("a late copy of a call that was never granted (its caller gave up and called again) is refused by its "
            + "sequence, changing nothing; later calls and retries of the granted call behave as before (format 6)")
    void lateCopyOfUngrantedCall() {
        Outcome first = apply(call("seq@n1", "call-1", 100, 1_000));
        // call-2 (sequence 200) was sent, its caller gave up on it, and call-3 (300) was granted first
        Outcome third = apply(call("seq@n1", "call-3", 300, 1_100));
        assertThat(third.lease().epoch()).isEqualTo(first.lease().epoch() + 1);
        Outcome late = apply(call("seq@n1", "call-2", 200, 1_200));
        assertThat(late.code()).as("call-2 was never granted, so only its sequence tells it is late")
                .isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(late.message()).contains("late copy").contains("request call-2, call 200").contains("(300; lease")
                .contains("epoch 2").contains("nothing changed");
        assertThat(table.get("seq@n1")).as("the newer call keeps its epoch").isEqualTo(third.lease());
        assertThat(apply(call("seq@n1", "call-3", 250, 1_300))).as("a retry of the granted call: the same answer")
                .isEqualTo(third);
        assertThat(apply(call("seq@n1", "call-4", 400, 1_400)).lease().epoch()).as("a later call: a new epoch")
                .isEqualTo(3);
        assertThat(apply(call("seq@n1", "call-5", 0, 1_500)).lease().epoch())
                .as("a call without a sequence (an older client) cannot be ordered: a new epoch, as before").isEqualTo(4);
        assertThat(table.sequence("seq@n1")).as("and it leaves nothing to order against").isZero();
        assertThat(apply(call("seq@n1", "call-6", 50, 1_600)).lease().epoch()).isEqualTo(5);
        Lease held = table.get("seq@n1");
        apply(new Command.Release("seq@n1", held.leaseId(), held.epoch(), 1_700));
        assertThat(table.sequence("seq@n1")).as("a lease that ended forgets its sequence").isZero();
        assertThat(apply(call("seq@n1", "call-7", 10, 1_800)).isOk()).as("granted anew").isTrue();
    }

    @Test
    @DisplayName("entries of format 5 and older ignore the sequence on replay: a late call raises the epoch, as it did")
    void sequenceBeforeFormat6() {
        table.apply(++index, 1, call("old6@n1", "call-1", 300, 1_000), 5);
        Outcome late = table.apply(++index, 1, call("old6@n1", "call-2", 200, 1_100), 5);
        assertThat(late.lease().epoch()).isEqualTo(2);
        assertThat(table.sequence("old6@n1")).isZero();
    }

    @Test
    @DisplayName("a snapshot keeps the sequence of the call that made each live epoch: a late copy is refused after a "
            + "restart too")
    void sequenceInSnapshot() throws IOException {
        apply(call("snap6@n1", "call-1", 100, 1_000));
        apply(call("snap6@n1", "call-3", 300, 1_100));
        byte[] bytes = bytes(table);
        LeaseTable restored = LeaseTable.readFrom(new ByteArrayInputStream(bytes));
        assertThat(bytes(restored)).isEqualTo(bytes);
        assertThat(restored.sequence("snap6@n1")).isEqualTo(300);
        assertThat(restored.apply(index + 1, 1, call("snap6@n1", "call-2", 200, 1_200)).code())
                .isEqualTo(Outcome.Code.FAILED_PRECONDITION);
    }

    @Test
    @DisplayName("release needs the current lease id and epoch; afterwards another runner gets epoch 2")
    void releaseAndRegrant() {
        Lease l = acquire("orders@n1", "runner-a");
        assertThat(apply(new Command.Release("orders@n1", l.leaseId() + 7, l.epoch(), 2_000)).message())
                .contains("is not the current lease");
        assertThat(apply(new Command.Release("orders@n1", l.leaseId(), l.epoch() + 1, 2_000)).message())
                .contains("stale epoch 2");
        assertThat(table.get("orders@n1").state()).as("refusals change nothing").isEqualTo(LeaseState.ACTIVE);

        Outcome released = apply(new Command.Release("orders@n1", l.leaseId(), l.epoch(), 3_000));
        assertThat(released.lease().state()).isEqualTo(LeaseState.RELEASED);
        assertThat(released.lease().endedAtMillis()).isEqualTo(3_000);
        assertThat(apply(new Command.Release("orders@n1", l.leaseId(), l.epoch(), 3_500)))
                .as("releasing twice (a retry) changes nothing and says OK").isEqualTo(released);

        Lease next = acquire("orders@n1", "runner-b");
        assertThat(apply(new Command.Release("orders@n1", l.leaseId(), l.epoch(), 3_600)).code())
                .as("releasing once the mailbox has moved on").isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(next.epoch()).isEqualTo(2);
        assertThat(next.leaseId()).isGreaterThan(l.leaseId());
        assertThat(table.history()).singleElement().satisfies(h -> assertThat(h.state()).isEqualTo(LeaseState.RELEASED));
        assertThat(table.checkRenew("orders@n1", l.leaseId(), l.epoch()).code())
                .as("the old holder is fenced off").isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(table.checkRenew("orders@n1", next.leaseId(), next.epoch()).isOk()).isTrue();
    }

    @Test
    @DisplayName("expiry applies only to the lease and epoch it names")
    void expiry() {
        Lease l = acquire("orders@n1", "runner-a");
        assertThat(apply(new Command.Expire("orders@n1", l.leaseId(), 9, 1, 4_000)).isOk()).isFalse();
        assertThat(apply(new Command.Expire("orders@n1", l.leaseId(), l.epoch(), 2, 4_000)).message())
                .as("an expiry decided by another term's leader").contains("decided in term 2 but committed in term 1");
        Outcome expired = apply(new Command.Expire("orders@n1", l.leaseId(), l.epoch(), 1, 4_000));
        assertThat(expired.lease().state()).isEqualTo(LeaseState.EXPIRED);
        assertThat(table.checkRenew("orders@n1", l.leaseId(), l.epoch()).message()).contains("EXPIRED");
        assertThat(acquire("orders@n1", "runner-b").epoch()).isEqualTo(2);
    }

    @Test
    @DisplayName("revoke bumps the epoch and fences the holder; the mailbox stays taken until reclaimed")
    void revokeAndReclaim() {
        Lease l = acquire("orders@n1", "runner-a");
        Outcome revoking = apply(new Command.Revoke("orders@n1", 2_000));
        assertThat(revoking.lease().state()).isEqualTo(LeaseState.REVOKING);
        assertThat(revoking.lease().epoch()).isEqualTo(2);
        assertThat(apply(new Command.Revoke("orders@n1", 2_100)).isOk()).as("revoke is idempotent").isTrue();
        assertThat(table.checkRenew("orders@n1", l.leaseId(), l.epoch()).message()).contains("stale epoch 1");
        assertThat(apply(new Command.Acquire("orders@n1", "runner-a", "n", "a:1", 0, 2_200)).code())
                .as("not even the old holder may take it back").isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(apply(new Command.Release("orders@n1", l.leaseId(), l.epoch(), 2_300)).isOk()).isFalse();

        Outcome revoked = apply(new Command.Reclaim("orders@n1", 3_000));
        assertThat(revoked.lease().state()).isEqualTo(LeaseState.REVOKED);
        assertThat(acquire("orders@n1", "runner-b").epoch()).as("later than the revoke's epoch").isEqualTo(3);
        assertThat(apply(new Command.Reclaim("orders@n1", 4_000)).code()).isEqualTo(Outcome.Code.FAILED_PRECONDITION);
        assertThat(apply(new Command.Revoke("nobody@n1", 4_000)).code()).isEqualTo(Outcome.Code.NOT_FOUND);
    }

    @Test
    @DisplayName("bad input is refused with a reason and changes nothing")
    void badInput() {
        for (Command c : List.of(
                new Command.Acquire("a@b@c", "r", "n", "a:1", 0, 1),
                new Command.Acquire("@n1", "r", "n", "a:1", 0, 1),
                new Command.Acquire("orders@", "r", "n", "a:1", 0, 1),
                new Command.Acquire("orders@n1", " ", "n", "a:1", 0, 1),
                new Command.Acquire("orders@n1", "r", "n", "", 0, 1),
                new Command.Acquire("orders@n1", "r", "n", "a:1", 999, 1),
                new Command.Acquire("orders@n1", "r", "n", "a:1", Duration.ofHours(1).toMillis(), 1),
                new Command.SetPolicy("", 10_000, 3_000, 1_000, 1),
                new Command.SetPolicy("orders", 10_000, 10_000, 1_000, 1))) {
            assertThat(apply(c).code()).as(c.toString()).isEqualTo(Outcome.Code.INVALID_ARGUMENT);
        }
        assertThat(table.leases()).isEmpty();
        assertThat(table.policies()).isEmpty();
        assertThat(apply(new Command.Release("orders@n1", 1, 1, 1)).code()).isEqualTo(Outcome.Code.NOT_FOUND);
    }

    @Test
    @DisplayName("a namespace's policy sets the TTL of its grants; an explicit TTL wins")
    void policies() {
        assertThat(apply(new Command.SetPolicy("fast", 2_000, 500, 500, 1)).isOk()).isTrue();
        assertThat(acquire("fast@n1", "r").ttlMillis()).isEqualTo(2_000);
        assertThat(acquire("slow@n1", "r").ttlMillis()).isEqualTo(10_000);
        assertThat(apply(new Command.Acquire("fast@n2", "r", "n", "a:1", 5_000, 1)).lease().ttlMillis()).isEqualTo(5_000);
        assertThat(table.policy("fast").heartbeatInterval()).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    @DisplayName("table time only moves forward, whatever the stamped clocks say; indexes must grow")
    void timeAndIndexes() {
        apply(new Command.Revoke("x@y", 5_000));
        apply(new Command.Revoke("x@y", 3_000)); // a new leader whose clock is behind
        assertThat(table.time()).isEqualTo(5_000);
        assertThatThrownBy(() -> table.apply(index, 1, new Command.Revoke("x@y", 1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("commands survive their byte form; garbage is refused")
    void commandCodec() {
        for (Command c : List.of(new Command.Acquire("a@b", "r", "n", "addr", 1_000, 42),
                new Command.Acquire("a@b", "r", "n", "addr", 0, "req", "c".repeat(64), 1_764_000_000_000_000L, 43),
                new Command.Release("a@b", 3, 4, 5),
                new Command.Expire("a@b", 3, 4, 2, 5), new Command.Revoke("a@b", 6), new Command.Reclaim("a@b", 7),
                new Command.SetPolicy("a", 2_000, 1_000, 0, 8),
                new Command.RegisterNode("n1", "h:1", "eu", "1.0", List.of("memory", "redis"),
                        new java.util.TreeMap<>(java.util.Map.of("k", "v")), 3_000, "req", 9),
                new Command.CreateNamespace("ns", 0, 0, 0, new java.util.TreeMap<>(java.util.Map.of("a", "b")), 10))) {
            StateCodec.Entry e = StateCodec.decode(StateCodec.encode(c));
            assertThat(e.command()).isEqualTo(c);
            assertThat(e.format()).isEqualTo(StateCodec.FORMAT);
        }
        assertThatThrownBy(() -> StateCodec.decode(new byte[] {99})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StateCodec.decode(new byte[] {1, 0})).hasMessageContaining("truncated format-0");
        assertThatThrownBy(() -> StateCodec.decode(new byte[0])).hasMessageContaining("empty");
    }

    @Test
    @DisplayName("a snapshot reads back to a table that writes the same bytes and behaves the same")
    void snapshot() throws IOException {
        apply(new Command.SetPolicy("fast", 2_000, 500, 500, 1));
        Lease a = acquire("orders@n1", "runner-a");
        acquire("orders@n2", "runner-b");
        apply(new Command.Release("orders@n1", a.leaseId(), a.epoch(), 9_000));
        acquire("orders@n1", "runner-c");
        apply(new Command.Revoke("orders@n2", 9_500));
        apply(new Command.RegisterNode("node-1", "h:1", "eu", "1.0", List.of("memory"),
                new java.util.TreeMap<>(java.util.Map.of("zone", "a")), 0, "r1", 9_600));
        apply(new Command.CreateNamespace("payments", 2_000, 500, 500, new java.util.TreeMap<>(), 9_700));

        byte[] bytes = bytes(table);
        LeaseTable restored = LeaseTable.readFrom(new ByteArrayInputStream(bytes));
        assertThat(bytes(restored)).isEqualTo(bytes);
        assertThat(restored.leases()).isEqualTo(table.leases());
        assertThat(restored.history()).isEqualTo(table.history());
        assertThat(restored.appliedIndex()).isEqualTo(table.appliedIndex());
        assertThat(restored.nodes()).isEqualTo(table.nodes());
        assertThat(restored.namespaces()).isEqualTo(table.namespaces());
        assertThat(restored.routes()).isEqualTo(table.routes());
        assertThat(restored.routesRevision()).isEqualTo(table.routesRevision());
        Command next = new Command.Acquire("orders@n3", "r", "n", "a:1", 0, 10_000);
        assertThat(restored.apply(index + 1, 1, next)).isEqualTo(table.apply(index + 1, 1, next));
    }

    @Test
    @DisplayName("routes follow active leases and carry the revision of their last change; node leases have none")
    void routes() {
        Lease a = acquire("orders@n1", "runner-a");
        assertThat(table.routes()).containsExactly(dev.mailbox.coordination.Route.of(a));
        assertThat(table.routesRevision()).isEqualTo(a.leaseId());
        assertThat(table.lastRouteChange().route()).isEqualTo(dev.mailbox.coordination.Route.of(a));

        apply(new Command.SetPolicy("other", 2_000, 500, 0, 1));
        assertThat(table.lastRouteChange()).as("a policy is no route change").isNull();
        assertThat(table.routesRevision()).isEqualTo(a.leaseId());

        Outcome refused = apply(new Command.Acquire("orders@n1", "runner-b", "n", "x:1", 0, 2));
        assertThat(refused.isOk()).isFalse();
        assertThat(table.lastRouteChange()).as("a refusal changes no route").isNull();

        apply(new Command.RegisterNode("node-1", "h:1", "", "", List.of(), new java.util.TreeMap<>(), 0, "", 3));
        assertThat(table.lastRouteChange()).isNull();
        assertThat(table.nodes()).singleElement().satisfies(n -> assertThat(n.up()).isTrue());
        assertThat(table.routes()).hasSize(1);

        apply(new Command.Revoke("orders@n1", 4));
        assertThat(table.routes()).isEmpty();
        assertThat(table.routesRevision()).isEqualTo(index);
        assertThat(table.lastRouteChange().route()).isNull();
        assertThat(table.lastRouteChange().mailboxId()).isEqualTo("orders@n1");
    }

    @Test
    @DisplayName("a node is up while its registration lease is active; a namespace is created once with its policy")
    void nodesAndNamespaces() {
        Outcome reg = apply(new Command.RegisterNode("node-1", "h:1", "eu", "1", List.of(), new java.util.TreeMap<>(),
                0, "r", 1));
        assertThat(reg.lease().mailboxId()).isEqualTo("_nodes@node-1");
        assertThat(table.partitionMap().nodes()).containsExactly("node-1");
        Lease l = reg.lease();
        apply(new Command.Expire(l.mailboxId(), l.leaseId(), l.epoch(), 1, 2));
        assertThat(table.nodes()).singleElement().satisfies(n -> assertThat(n.up()).isFalse());
        assertThat(table.partitionMap().nodes()).isEmpty();
        assertThat(apply(new Command.RegisterNode("bad@id", "h:1", "", "", List.of(), new java.util.TreeMap<>(), 0, "",
                3)).code()).isEqualTo(Outcome.Code.INVALID_ARGUMENT);

        assertThat(apply(new Command.CreateNamespace("pay", 2_000, 500, 100, new java.util.TreeMap<>(), 4)).isOk())
                .isTrue();
        assertThat(table.policy("pay").ttl().toMillis()).isEqualTo(2_000);
        Outcome again = apply(new Command.CreateNamespace("pay", 0, 0, 0, new java.util.TreeMap<>(), 5));
        assertThat(again.code()).isEqualTo(Outcome.Code.ALREADY_EXISTS);
        assertThat(table.policy("pay").ttl().toMillis()).as("unchanged by the refused create").isEqualTo(2_000);
        assertThat(apply(new Command.CreateNamespace("-bad", 0, 0, 0, new java.util.TreeMap<>(), 6)).code())
                .isEqualTo(Outcome.Code.INVALID_ARGUMENT);
        assertThat(apply(new Command.CreateNamespace("x", 500, 100, 0, new java.util.TreeMap<>(), 7)).code())
                .isEqualTo(Outcome.Code.INVALID_ARGUMENT);
        assertThat(table.namespaces()).extracting(dev.mailbox.coordination.NamespaceInfo::name).containsExactly("pay");
    }

    static byte[] bytes(LeaseTable t) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        t.writeTo(out);
        return out.toByteArray();
    }
}
