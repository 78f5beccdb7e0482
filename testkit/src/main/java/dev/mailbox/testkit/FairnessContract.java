package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The kit's fairness group: {@link Mailbox}'s "Fair standard mailboxes" rule, exactly at the thresholds of
 * {@link Limits#isNoisyTenant}, on every backend whose standard mailboxes declare
 * {@link dev.mailbox.api.MailboxCapabilities#fairness()}. Tests that compare a noisy tenant's older message with
 * a quiet one's newer message also need {@link dev.mailbox.api.MailboxCapabilities#visibilityOrder()}, since
 * without a noisy tenant that is what decides.
 */
abstract class FairnessContract extends ContractGroup {

    FairnessContract(MailboxContract kit) {
        super(kit);
    }

    private Mailbox<String> fair() {
        Mailbox<String> m = standardMailbox("fair");
        Assumptions.assumeTrue(m.capabilities().fairness(), () -> kit.getClass().getSimpleName()
                + "'s standard mailboxes do not declare MailboxCapabilities.fairness(), so the fairness tests are skipped");
        return m;
    }

    private Mailbox<String> fairInOrder() {
        Mailbox<String> m = fair();
        Assumptions.assumeTrue(m.capabilities().visibilityOrder(), "this test compares with visibility order");
        return m;
    }

    /** Sends {@code n} messages of {@code tenant} (null: without group id), named {@code prefix0..}. */
    private static void send(Mailbox<String> m, String tenant, String prefix, int n) {
        for (int from = 0; from < n; from += Limits.MAX_BATCH) {
            List<String> batch = IntStream.range(from, Math.min(n, from + Limits.MAX_BATCH)).mapToObj(i -> prefix + i).toList();
            if (tenant == null) {
                m.sendBatch(batch);
            } else {
                m.sendBatch(batch, group(tenant));
            }
        }
    }

    /** Puts {@code n} messages in flight, checking they are the ones expected. */
    private List<Message<String>> take(Mailbox<String> m, int n, String prefix) {
        List<Message<String>> got = receiveAll(m, n, LONG);
        assertThat(got).as("messages put in flight").hasSize(n);
        assertThat(got).allSatisfy(x -> assertThat(x.body()).startsWith(prefix));
        return got;
    }

    @Test
    @DisplayName("a noisy tenant's older messages wait while a quiet tenant's newer one is delivered")
    void fairQuietFirst() {
        Mailbox<String> m = fair();
        send(m, "noisy", "n", Limits.NOISY_TENANT_MIN_IN_FLIGHT + 10);
        take(m, Limits.NOISY_TENANT_MIN_IN_FLIGHT, "n");
        m.send("q0", group("quiet"));

        Message<String> got = receiveOne(m);
        assertThat(got.body()).isEqualTo("q0");
        assertThat(got.groupId()).isEqualTo("quiet");
    }

    @Test
    @DisplayName("when only noisy tenants have visible messages, a receive returns theirs: no throughput is lost")
    void fairNoThroughputLost() {
        Mailbox<String> m = fair();
        send(m, "noisy", "n", Limits.NOISY_TENANT_MIN_IN_FLIGHT + 10);
        take(m, Limits.NOISY_TENANT_MIN_IN_FLIGHT, "n");

        List<Message<String>> rest = receiveAll(m, 10, LONG);
        assertThat(rest).hasSize(10);
        assertThat(rest).allSatisfy(x -> assertThat(x.groupId()).isEqualTo("noisy"));
        assertCount(m, Limits.NOISY_TENANT_MIN_IN_FLIGHT + 10);
    }

    @Test
    @DisplayName("a tenant is not noisy below the minimum in flight, and is from the minimum on")
    void fairMinimumInFlight() {
        Mailbox<String> m = fairInOrder();
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        send(m, "a", "a", min + 1);
        take(m, min - 1, "a");
        m.send("q0", group("quiet"));

        assertThat(receiveOne(m).body()).as("%d in flight: not noisy, so its older message first", min - 1)
                .isEqualTo("a" + (min - 1));
        assertThat(receiveOne(m).body()).as("%d in flight, all of them: noisy", min).isEqualTo("q0");
        assertThat(receiveOne(m).body()).isEqualTo("a" + min);
    }

    @Test
    @DisplayName("a tenant is not noisy at 10 % of the messages in flight or less, and is above")
    void fairShareOfInFlight() {
        Mailbox<String> m = fairInOrder();
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        send(m, "a", "a", min);
        take(m, min, "a");
        // others: messages without a group id, each a tenant of its own; a's 30 are then 30 of 300, exactly 10 %
        int others = min * 100 / Limits.NOISY_TENANT_MIN_SHARE_PERCENT - min;
        send(m, null, "x", others);
        take(m, others, "x");
        m.sendBatch(List.of("a-next", "a-last"), group("a"));
        m.send("q0", group("quiet"));

        assertThat(receiveOne(m).body()).as("30 of 300 in flight, exactly 10 %%: not noisy").isEqualTo("a-next");
        assertThat(receiveOne(m).body()).as("31 of 301 in flight: noisy").isEqualTo("q0");
    }

    @Test
    @DisplayName("fairness never makes a receive come back emptier: the quiet tenants' messages, then the noisy tenant's fill it up")
    void fairReceiveFilledUp() {
        Mailbox<String> m = fair();
        Assumptions.assumeTrue(m.capabilities().exactCount(), "only an exact backend promises full receives");
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        send(m, "noisy", "n", min + 20);
        take(m, min, "n");
        m.sendBatch(List.of("q0", "q1"), group("quiet"));

        List<Message<String>> got = receive(m, 10, LONG);
        assertThat(bodies(got)).hasSize(10).contains("q0", "q1");
        assertThat(got).filteredOn(x -> "noisy".equals(x.groupId())).hasSize(8);
    }

    @Test
    @DisplayName("among noisy tenants, the one with the fewest in flight goes first; quiet tenants before both")
    void fairLeastNoisyFirst() {
        Mailbox<String> m = fairInOrder();
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        send(m, "a", "a", min + 10);
        take(m, min + 10, "a");
        send(m, "b", "b", min + 1);
        take(m, min + 1, "b");
        m.send("a-late", group("a"));
        m.send("b-late", group("b"));
        m.send("c0", group("c"));

        List<String> order = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            order.add(receiveOne(m).body());
        }
        assertThat(order).containsExactly("c0", "b-late", "a-late");
    }

    @Test
    @DisplayName("a noisy tenant whose in-flight messages drop below the rule is served in order again")
    void fairQuietAgain() {
        Mailbox<String> m = fairInOrder();
        int min = Limits.NOISY_TENANT_MIN_IN_FLIGHT;
        send(m, "a", "a", min + 1);
        List<Message<String>> inFlight = take(m, min, "a");
        m.sendBatch(List.of("q0", "q1"), group("quiet"));
        assertThat(receiveOne(m).body()).isEqualTo("q0");

        inFlight.get(0).acknowledge();
        assertThat(receiveOne(m).body()).as("a has %d in flight: quiet again", min - 1).isEqualTo("a" + min);
        assertThat(receiveOne(m).body()).isEqualTo("q1");
    }

    @Test
    @DisplayName("messages without a group id are each a tenant of their own, never a noisy one")
    void fairNoGroupIsOwnTenant() {
        Mailbox<String> m = fairInOrder();
        send(m, null, "x", Limits.NOISY_TENANT_MIN_IN_FLIGHT + 10);
        take(m, Limits.NOISY_TENANT_MIN_IN_FLIGHT + 9, "x");
        m.send("q0", group("quiet"));

        Message<String> next = receiveOne(m);
        assertThat(next.body()).isEqualTo("x" + (Limits.NOISY_TENANT_MIN_IN_FLIGHT + 9));
        assertThat(next.groupId()).isNull();
    }

    @Test
    @DisplayName("a standard mailbox returns the tenant as the group id, and no sequence number")
    void fairGroupIdReturned() {
        Mailbox<String> m = fair();
        m.send("t", group("tenant-1"));
        Message<String> got = receiveOne(m);
        assertThat(got.groupId()).isEqualTo("tenant-1");
        assertThat(got.sequenceNumber()).isNull();
    }
}
