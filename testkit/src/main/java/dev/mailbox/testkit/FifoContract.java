package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The kit's FIFO group: every rule of {@link Mailbox}'s "FIFO mailboxes", on every backend whose mailbox made
 * from a spec with {@link FifoOptions} declares {@link dev.mailbox.api.MailboxCapabilities#fifo()} (elsewhere
 * each test is skipped, saying so), ending with a model-checked property test ({@link FifoModelCheck}).
 */
abstract class FifoContract extends ContractGroup {

    FifoContract(MailboxContract kit) {
        super(kit);
    }

    private Mailbox<String> fifo() {
        return fifoMailbox(FifoOptions.defaults());
    }

    @Test
    @DisplayName("a FIFO mailbox says so, and claims neither fairness nor visibility order; a standard one is not FIFO")
    void fifoDeclared() {
        Mailbox<String> m = fifo();
        assertThat(m.capabilities().fairness()).isFalse();
        assertThat(m.capabilities().visibilityOrder()).isFalse();
        assertThat(standardMailbox("standard").capabilities().fifo()).isFalse();
    }

    @Test
    @DisplayName("a send without a group id is refused, naming the rule, and stores nothing")
    void fifoRefusesNoGroup() {
        Mailbox<String> m = fifo();
        assertThatThrownBy(() -> m.send("x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(m.name()).hasMessageContaining("group id");
        assertThatThrownBy(() -> m.sendBatch(List.of("x", "y"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group id");
        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withDeduplicationId("d")))
                .isInstanceOf(IllegalArgumentException.class);
        assertCount(m, 0);
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("a send with a per-message delay is refused, naming the rule, and stores nothing")
    void fifoRefusesDelay() {
        Mailbox<String> m = fifo();
        assertThatThrownBy(() -> m.send("x", group("a").withDelay(tick()))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(m.name()).hasMessageContaining("delay");
        assertThatThrownBy(() -> m.sendBatch(List.of("x"), group("a").withDelay(tick())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
        assertCount(m, 0);
        m.send("now", group("a").withDelay(Duration.ZERO));
        assertThat(receiveOne(m).body()).isEqualTo("now");
    }

    @Test
    @DisplayName("within a group messages arrive in send order, with their group id and growing sequence numbers")
    void fifoSendOrder() {
        Mailbox<String> m = fifo();
        Map<String, List<String>> sent = new LinkedHashMap<>();
        for (int i = 0; i < 18; i++) {
            String g = "g" + (i % 3);
            String body = g + ":" + i;
            m.send(body, group(g));
            sent.computeIfAbsent(g, k -> new ArrayList<>()).add(body);
        }

        Map<String, List<String>> got = new LinkedHashMap<>();
        Map<String, BigInteger> lastSequence = new LinkedHashMap<>();
        for (int i = 0; i < 18; i++) {
            Message<String> msg = receiveOne(m);
            String g = msg.body().substring(0, msg.body().indexOf(':'));
            assertThat(msg.groupId()).isEqualTo(g);
            assertThat(msg.sequenceNumber()).as("sequence number of %s", msg.body()).isNotNull().matches("[0-9]{1,40}");
            BigInteger seq = new BigInteger(msg.sequenceNumber());
            BigInteger before = lastSequence.put(g, seq);
            if (before != null) {
                assertThat(seq).as("sequence number of %s after the group's previous one", msg.body())
                        .isGreaterThan(before);
            }
            got.computeIfAbsent(g, k -> new ArrayList<>()).add(msg.body());
            msg.acknowledge();
        }
        assertThat(got).isEqualTo(sent);
    }

    @Test
    @DisplayName("while a message of a group is in flight, no later one of the group is delivered, to anyone; other groups are")
    void fifoOneInFlight() {
        MailboxSpec<String> spec = MailboxSpec.of(MailboxContract.uniqueName("fifo"), MailboxContract.TEXT)
                .withFifo(FifoOptions.defaults());
        Mailbox<String> m = assumeFifo(newMailbox(spec));
        Optional<Mailbox<String>> other = kit.secondObjectIfAny(spec);
        m.send("a1", group("a"));
        m.send("a2", group("a"));

        Message<String> a1 = receiveOne(m);
        assertThat(a1.body()).isEqualTo("a1");
        assertNothingVisible(m);
        other.ifPresent(ContractGroup::assertNothingVisible);

        m.send("b1", group("b"));
        assertThat(bodies(receive(other.orElse(m), 10, LONG))).containsExactly("b1");
        assertNothingVisible(m);

        a1.acknowledge();
        Message<String> a2 = receiveOne(other.orElse(m));
        assertThat(a2.body()).isEqualTo("a2");
        assertThat(a2.deliveryCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("one receive may return a run of one group, in order; the rest of the group waits for all of it")
    void fifoBatchRun() {
        Mailbox<String> m = fifo();
        List<String> sent = IntStream.rangeClosed(1, 5).mapToObj(i -> "a" + i).toList();
        m.sendBatch(sent, group("a"));

        List<String> got = new ArrayList<>();
        while (got.size() < sent.size()) {
            List<Message<String>> run = receive(m, 10, LONG);
            assertThat(run).as("a run after %s", got).isNotEmpty();
            got.addAll(bodies(run));
            assertThat(got).as("runs so far").isEqualTo(sent.subList(0, got.size()));
            if (got.size() < sent.size()) {
                assertNothingVisible(m);
            }
            for (Message<String> msg : run.subList(0, run.size() - 1)) {
                msg.acknowledge();
                if (got.size() < sent.size()) {
                    assertNothingVisible(m); // the last of the run is still in flight
                }
            }
            run.get(run.size() - 1).acknowledge();
        }
    }

    @Test
    @DisplayName("a batch sent to a group keeps its order, and a sequence number stays the same across deliveries")
    void fifoBatchSendOrder() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("b1", "b2", "b3", "b4"), group("b"));
        Message<String> first = receiveOne(m);
        assertThat(first.body()).isEqualTo("b1");
        first.nack();
        Message<String> again = receiveOne(m);
        assertThat(again.body()).isEqualTo("b1");
        assertThat(again.sequenceNumber()).isEqualTo(first.sequenceNumber());
        again.acknowledge();

        List<String> rest = new ArrayList<>();
        BigInteger last = new BigInteger(first.sequenceNumber());
        for (int i = 0; i < 3; i++) {
            Message<String> msg = receiveOne(m);
            rest.add(msg.body());
            BigInteger seq = new BigInteger(msg.sequenceNumber());
            assertThat(seq).isGreaterThan(last);
            last = seq;
            msg.acknowledge();
        }
        assertThat(rest).containsExactly("b2", "b3", "b4");
    }

    @Test
    @DisplayName("a nacked message goes back to the head of its group, before the group's later messages")
    void fifoNackToHead() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2", "a3"), group("a"));
        Message<String> a1 = receiveOne(m);
        a1.nack();

        Message<String> again = receiveOne(m);
        assertThat(again.body()).isEqualTo("a1");
        assertThat(again.deliveryCount()).isEqualTo(2);
    }

    @Test
    @DisplayName("a nacked head of a run waits for the rest of the run (where the mailbox holds runs), then comes before the group's later messages")
    void fifoNackInRun() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2", "a3", "a4"), group("a"));
        List<Message<String>> run = receive(m, 3, LONG);
        assertThat(bodies(run)).isEqualTo(List.of("a1", "a2", "a3").subList(0, run.size()));

        run.get(0).nack();
        if (run.size() > 1) {
            if (m.capabilities().holdsRuns()) {
                assertNothingVisible(m); // the rest of the run is still in flight
            } else {
                // the group waits for its head only: a1 again, and nothing after it while the run is in flight
                List<Message<String>> again = receive(m, 10, LONG);
                assertThat(bodies(again)).containsExactly("a1");
                assertThat(again.get(0).deliveryCount()).isEqualTo(2);
                assertNothingVisible(m);
                again.get(0).nack();
            }
            run.subList(1, run.size()).forEach(Message::acknowledge);
        }

        Message<String> next = receiveOne(m);
        assertThat(next.body()).isEqualTo("a1");
        assertThat(next.deliveryCount()).isEqualTo(run.size() > 1 && !m.capabilities().holdsRuns() ? 3 : 2);
    }

    @Test
    @DisplayName("a nack inside a run: the group waits for the rest of the run, acknowledged in any order, then delivers the nacked message first")
    void fifoNackInsideRun() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2", "a3", "a4"), group("a"));
        List<Message<String>> run = receive(m, 3, LONG);
        assertThat(bodies(run)).isEqualTo(List.of("a1", "a2", "a3").subList(0, run.size()));
        Message<String> nacked = run.get(run.size() > 1 ? 1 : 0); // the middle one where the run has one

        nacked.nack();
        List<Message<String>> rest = new ArrayList<>(run);
        rest.remove(nacked);
        for (int i = rest.size() - 1; i >= 0; i--) { // the last first
            assertNothingVisible(m); // the run is not settled: the nacked message waits, and so does a4
            rest.get(i).acknowledge();
        }

        Message<String> next = receiveOne(m);
        assertThat(next.body()).isEqualTo(nacked.body());
        assertThat(next.deliveryCount()).isEqualTo(2);
    }

    @Test
    @DisplayName("messages of a run nacked one after the other come back in send order, ahead of the group's later ones")
    void fifoNackWholeRun() {
        Mailbox<String> m = fifo();
        List<String> sent = List.of("a1", "a2", "a3", "a4");
        m.sendBatch(sent, group("a"));
        List<Message<String>> run = receive(m, 3, LONG);
        run.forEach(Message::nack); // in send order: each goes back ahead of the group's later messages

        List<String> got = new ArrayList<>();
        while (got.size() < sent.size()) {
            List<Message<String>> next = receive(m, 10, LONG);
            assertThat(next).as("a run after %s", got).isNotEmpty();
            got.addAll(bodies(next));
            next.forEach(Message::acknowledge);
        }
        assertThat(got).isEqualTo(sent);
    }

    @Test
    @DisplayName("extending one message of a run keeps its group blocked while the rest of the run lapses; the rest comes back after it, in order")
    void fifoExtendOneOfRun() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2", "a3"), group("a"));
        // on a manual clock the rest of the run lapses as time passes; in real time, where a tick may pass before the
        // extension is made, it is ended at once instead (extendVisibility(ZERO) is a lapse)
        boolean manual = kit.hasManualClock();
        List<Message<String>> run = receive(m, 3, manual ? tick() : LONG);
        assertThat(bodies(run)).isEqualTo(List.of("a1", "a2", "a3").subList(0, run.size()));
        run.get(0).extendVisibility(LONG);
        if (manual) {
            kit.elapse(tick());
        } else {
            run.subList(1, run.size()).forEach(x -> x.extendVisibility(Duration.ZERO));
        }

        // a2 and a3, where the run had them, are back in their group, behind a1, which is still in flight
        assertNothingVisible(m);
        run.get(0).acknowledge();

        for (int i = 2; i <= 3; i++) {
            Message<String> next = receiveOne(m);
            assertThat(next.body()).isEqualTo("a" + i);
            assertThat(next.deliveryCount()).isEqualTo(i <= run.size() ? 2 : 1);
            next.acknowledge();
        }
        assertCount(m, 0);
    }

    @Test
    @DisplayName("a message whose visibility timeout ends goes back to the head of its group")
    void fifoLapseToHead() {
        Mailbox<String> m = fifo();
        m.send("a1", group("a"));
        m.send("a2", group("a"));
        receiveOne(m, tick());
        kit.elapse(tick());

        Message<String> again = receiveOne(m);
        assertThat(again.body()).isEqualTo("a1");
        assertThat(again.deliveryCount()).isEqualTo(2);
    }

    @Test
    @DisplayName("a nack with a timeout holds its group for that long, and only its group")
    void fifoNackTimeoutHoldsGroup() {
        Mailbox<String> m = fifo();
        m.send("a1", group("a"));
        m.send("a2", group("a"));
        Message<String> a1 = receiveOne(m);
        m.send("b1", group("b"));
        a1.nack(ticks(3));

        assertThat(bodies(receive(m, 10, LONG))).containsExactly("b1");
        kit.elapse(tick());
        assertNothingVisible(m);
        kit.elapse(ticks(2));
        Message<String> again = receiveOne(m);
        assertThat(again.body()).isEqualTo("a1");
        assertThat(again.deliveryCount()).isEqualTo(2);
    }

    @Test
    @DisplayName("groups never wait for each other: a group with a message in flight holds back only itself")
    void fifoGroupsIndependent() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2", "a3"), group("a"));
        Message<String> a1 = receiveOne(m);
        assertThat(a1.body()).isEqualTo("a1");
        m.sendBatch(List.of("b1", "b2", "b3"), group("b"));
        m.sendBatch(List.of("c1", "c2"), group("c"));

        List<String> got = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Message<String> msg = receiveOne(m);
            got.add(msg.body());
            msg.acknowledge();
        }
        assertThat(got).containsExactlyInAnyOrder("b1", "b2", "b3", "c1", "c2");
        assertThat(got.stream().filter(b -> b.startsWith("b")).toList()).containsExactly("b1", "b2", "b3");
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("dead-lettering the head unblocks its group; the dead letter keeps its id and group in a FIFO mailbox")
    void fifoDeadLetterUnblocks() {
        Mailbox<String> dlq = fifo();
        Mailbox<String> m = newMailbox(MailboxSpec.of(MailboxContract.uniqueName("fifo-redrive"), MailboxContract.TEXT)
                .withFifo(FifoOptions.defaults()).withRedrivePolicy(RedrivePolicy.of(1, dlq)));
        String id = m.send("a1", group("a"));
        m.send("a2", group("a"));
        receiveOne(m).nack();

        Message<String> a2 = receiveOne(m);
        assertThat(a2.body()).as("a1 was dead-lettered").isEqualTo("a2");
        Message<String> dead = receiveOne(dlq);
        assertThat(dead.body()).isEqualTo("a1");
        assertThat(dead.id()).isEqualTo(id);
        assertThat(dead.groupId()).isEqualTo("a");
        assertCount(m, 1);
        assertCount(dlq, 1);
    }

    @Test
    @DisplayName("dead-lettering the head does not let its group skip a message that waits out a nack timeout")
    void fifoDeadLetterDoesNotSkipWaiting() {
        Mailbox<String> dlq = fifo();
        Mailbox<String> m = newMailbox(MailboxSpec.of(MailboxContract.uniqueName("fifo-redrive"), MailboxContract.TEXT)
                .withFifo(FifoOptions.defaults()).withRedrivePolicy(RedrivePolicy.of(1, dlq)));
        m.sendBatch(List.of("a1", "a2", "a3"), group("a"));
        List<Message<String>> run = receive(m, 2, LONG);
        if (run.size() < 2) {
            return; // runs of one: a2 cannot be nacked while a1 is back in the group, so there is nothing to skip
        }
        run.get(1).nack(LONG); // a2 waits, still its group's (the group waits for it)
        run.get(0).nack(); // a1 has used its one receive: the next receive may move it

        assertNothingVisible(m); // whether or not this moved a1, a3 must not overtake a2
        assertNothingVisible(m);
    }

    @Test
    @DisplayName("messages of a group dead-lettered one after the other arrive in the FIFO dead-letter mailbox in send order")
    void fifoDeadLettersKeepOrder() {
        Mailbox<String> dlq = fifo();
        Mailbox<String> m = newMailbox(MailboxSpec.of(MailboxContract.uniqueName("fifo-redrive"), MailboxContract.TEXT)
                .withFifo(FifoOptions.defaults()).withRedrivePolicy(RedrivePolicy.of(1, dlq)));
        List<String> sent = List.of("a1", "a2", "a3", "a4");
        m.sendBatch(sent, group("a"));
        int delivered = 0;
        List<Message<String>> run;
        while (delivered < sent.size() && !(run = receive(m, 10, LONG)).isEmpty()) {
            delivered += run.size();
            run.forEach(Message::nack); // each used its one receive: the next receive moves it
        }
        assertThat(delivered).as("each message delivered once").isEqualTo(sent.size());
        for (int i = 0; i < sent.size(); i++) {
            assertNothingVisible(m); // these receives move what is left (a backend may move one per receive)
        }

        List<String> dead = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            Message<String> x = receiveOne(dlq);
            assertThat(x.groupId()).isEqualTo("a");
            dead.add(x.body());
            x.acknowledge();
        }
        assertThat(dead).isEqualTo(sent);
        assertCount(m, 0);
    }

    @Test
    @DisplayName("the dead-letter mailbox of a FIFO mailbox must be FIFO, and a standard one's standard")
    void fifoDeadLetterKindMustMatch() {
        Mailbox<String> fifoDlq = fifo();
        Mailbox<String> standardDlq = standardMailbox("dlq");
        assertThatThrownBy(() -> newMailbox(MailboxSpec.of(MailboxContract.uniqueName("fifo"), MailboxContract.TEXT)
                .withFifo(FifoOptions.defaults()).withRedrivePolicy(RedrivePolicy.of(2, standardDlq))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FIFO");
        assertThatThrownBy(() -> newMailbox(MailboxSpec.of(MailboxContract.uniqueName("standard"), MailboxContract.TEXT)
                .withRedrivePolicy(RedrivePolicy.of(2, fifoDlq))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("standard");
    }

    @Test
    @DisplayName("deduplication ids are remembered across the whole mailbox by default")
    void fifoDeduplicationMailboxScope() {
        Mailbox<String> m = fifo();
        String first = m.send("x", group("a").withDeduplicationId("d1"));
        assertThat(m.send("y", group("b").withDeduplicationId("d1"))).isEqualTo(first);
        assertThat(m.send("z", group("a").withDeduplicationId("d2"))).isNotEqualTo(first);
        assertCount(m, 2);
    }

    @Test
    @DisplayName("with the group scope a deduplication id is remembered per group")
    void fifoDeduplicationGroupScope() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults().withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP));
        String a = m.send("x", group("a").withDeduplicationId("d1"));
        String b = m.send("y", group("b").withDeduplicationId("d1"));
        assertThat(b).isNotEqualTo(a);
        assertThat(m.send("z", group("a").withDeduplicationId("d1"))).isEqualTo(a);
        assertCount(m, 2);
        assertThat(List.of(receiveOne(m).groupId(), receiveOne(m).groupId())).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    @DisplayName("content-based deduplication drops a repeated body, an explicit id wins, and a batch may repeat itself")
    void fifoContentBasedDeduplication() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults().withContentBasedDeduplication(true));
        String same = m.send("same", group("a"));
        assertThat(m.send("same", group("b"))).as("same body, other group, mailbox scope").isEqualTo(same);
        assertThat(m.send("same", group("a").withAttribute("k", "v"))).as("attributes are not content").isEqualTo(same);
        assertThat(m.send("other", group("a"))).isNotEqualTo(same);
        assertThat(m.send("same", group("a").withDeduplicationId("explicit"))).isNotEqualTo(same);
        assertCount(m, 3);

        List<String> ids = m.sendBatch(List.of("p", "p", "q"), group("c"));
        assertThat(ids.get(1)).isEqualTo(ids.get(0));
        assertThat(ids.get(2)).isNotEqualTo(ids.get(0));
        assertCount(m, 5);
    }

    @Test
    @DisplayName("content-based deduplication in the group scope tells groups apart")
    void fifoContentBasedGroupScope() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults().withContentBasedDeduplication(true)
                .withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP));
        String a = m.send("same", group("a"));
        assertThat(m.send("same", group("b"))).isNotEqualTo(a);
        assertThat(m.send("same", group("a"))).isEqualTo(a);
        assertCount(m, 2);
    }

    @Test
    @DisplayName("without content-based deduplication equal bodies without ids are both stored")
    void fifoNoContentDeduplicationByDefault() {
        Mailbox<String> m = fifo();
        assertThat(m.send("same", group("a"))).isNotEqualTo(m.send("same", group("a")));
        assertCount(m, 2);
    }

    @Test
    @DisplayName("a repeated body is stored again once the five-minute deduplication window has passed (without a"
            + " manual clock: remembered across real time)")
    void fifoDeduplicationWindow() {
        Mailbox<String> m = fifoMailbox(FifoOptions.defaults().withContentBasedDeduplication(true));
        String first = m.send("same", group("a"));
        if (!kit.hasManualClock()) {
            // five minutes of real time per backend is too long: only the window's first ticks, as the standard
            // mailboxes' window test does without a manual clock
            for (int i = 0; i < 2; i++) {
                kit.elapse(tick());
                assertThat(m.send("same", group("a"))).as("after %d ticks", i + 1).isEqualTo(first);
            }
            assertCount(m, 1);
            return;
        }
        kit.elapse(Limits.DEDUPLICATION_WINDOW.minus(tick()));
        assertThat(m.send("same", group("a"))).isEqualTo(first);
        kit.elapse(tick());
        assertThat(m.send("same", group("a"))).isNotEqualTo(first);
        assertCount(m, 2);
    }

    @Test
    @DisplayName("counts include in-flight messages; purge deletes everything, stales handles and unblocks groups")
    void fifoPurgeAndCount() {
        Mailbox<String> m = fifo();
        m.sendBatch(List.of("a1", "a2"), group("a"));
        m.send("b1", group("b"));
        Message<String> first = receiveOne(m);
        assertCount(m, 3);

        long purged = m.purge();
        if (m.capabilities().exactCount()) {
            assertThat(purged).isEqualTo(3);
        }
        assertCount(m, 0);
        assertThatThrownBy(first::nack).isInstanceOf(ReceiptHandleExpiredException.class);
        m.send("later", group(first.groupId()));
        assertThat(receiveOne(m).body()).isEqualTo("later");
    }

    @Test
    @DisplayName("a standard mailbox gives no sequence numbers, as SQS")
    void fifoStandardHasNoSequenceNumber() {
        fifo(); // only where the backend has FIFO mailboxes: elsewhere sequence numbers do not exist at all
        Mailbox<String> standard = standardMailbox("standard");
        standard.send("x", group("a"));
        assertThat(receiveOne(standard).sequenceNumber()).isNull();
    }

    @Test
    @DisplayName("concurrent producers and consumers that acknowledge, nack or lapse parts of runs: every message acknowledged once, each group in send order, never held by two consumers at once")
    void fifoConcurrentConsumers() throws Exception {
        Mailbox<String> m = fifo();
        int groups = 6;
        int perGroup = Integer.getInteger("mailbox.tck.fifoConcurrentPerGroup", 40); // more for a longer stress run
        int consumers = 4;
        // per group: how many were acknowledged (all earlier ones, in order) and which consumer holds the group
        int[] done = new int[groups];
        int[] holder = new int[groups];
        java.util.Arrays.fill(holder, -1);
        Object guard = new Object();
        List<String> problems = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger remaining = new java.util.concurrent.atomic.AtomicInteger(groups * perGroup);
        Duration wait = kit.patience().isZero() ? Duration.ofSeconds(60) : Duration.ofSeconds(1);
        boolean holdsRuns = m.capabilities().holdsRuns();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            int me = c;
            java.util.Random random = new java.util.Random(31 + c);
            threads.add(new Thread(() -> {
                while (remaining.get() > 0 && problems.isEmpty()) {
                    List<Message<String>> got;
                    try {
                        got = m.receive(visibility(LONG).withMaxMessages(10).withWaitTime(wait));
                    } catch (dev.mailbox.api.MailboxClosedException closed) {
                        return;
                    } catch (RuntimeException e) {
                        problems.add("consumer " + me + ": receive threw " + e);
                        return;
                    }
                    Map<Integer, List<Message<String>>> runs = new LinkedHashMap<>();
                    for (Message<String> msg : got) {
                        String g = msg.groupId();
                        if (g == null || !msg.body().startsWith(g + ":")) {
                            problems.add(msg.body() + " came with group id " + g);
                            return;
                        }
                        runs.computeIfAbsent(Integer.parseInt(g.substring(1)), k -> new ArrayList<>()).add(msg);
                    }
                    runs.forEach((g, run) -> settle(me, g, run, holdsRuns, random, done, holder, guard, problems,
                            remaining));
                }
            }, "tck-fifo-consumer-" + c));
        }
        for (int p = 0; p < 2; p++) {
            int producer = p;
            java.util.Random random = new java.util.Random(7 + p);
            threads.add(new Thread(() -> {
                int[] next = new int[groups];
                int left = groups / 2 * perGroup;
                while (left > 0) {
                    int g = producer + 2 * random.nextInt(groups / 2);
                    int n = Math.min(1 + random.nextInt(5), perGroup - next[g]);
                    if (n == 0) {
                        continue;
                    }
                    List<String> batch = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        batch.add("g" + g + ":" + next[g]++);
                    }
                    if (n == 1) {
                        m.send(batch.get(0), group("g" + g));
                    } else {
                        m.sendBatch(batch, group("g" + g));
                    }
                    left -= n;
                }
            }, "tck-fifo-producer-" + p));
        }
        threads.forEach(Thread::start);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (remaining.get() > 0 && problems.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        m.close(); // wakes consumers waiting for messages that will not come
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(30).toMillis());
            assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
        }
        assertThat(problems).isEmpty();
        assertThat(remaining.get()).as("messages not acknowledged; per group done %s", java.util.Arrays.toString(done))
                .isZero();
        for (int g = 0; g < groups; g++) {
            assertThat(done[g]).as("acknowledged of group g%d", g).isEqualTo(perGroup);
        }
    }

    /**
     * One consumer's part of {@link #fifoConcurrentConsumers}: checks that the run of group {@code g} it received
     * continues where the group's acknowledged messages end and that nobody else holds the group, then acknowledges
     * a random prefix in order and nacks (or lapses) the rest in a random order, letting go of the group before the last
     * call. On a backend that does not {@link dev.mailbox.api.MailboxCapabilities#holdsRuns hold runs} (the group is
     * held only while its first unsettled message is in flight) the rest is nacked from the last back to the first, so
     * the group is not free while any of the run is still in flight, and the test checks the same rules there.
     */
    private static void settle(int me, int g, List<Message<String>> run, boolean holdsRuns, java.util.Random random,
                               int[] done, int[] holder, Object guard, List<String> problems,
                               java.util.concurrent.atomic.AtomicInteger remaining) {
        synchronized (guard) {
            if (holder[g] != -1) {
                problems.add("group g" + g + " delivered to consumer " + me + " while consumer " + holder[g] + " holds " + "it");
            }
            for (int i = 0; i < run.size(); i++) {
                String expected = "g" + g + ":" + (done[g] + i);
                if (!run.get(i).body().equals(expected)) {
                    problems.add("group g" + g + " delivered " + bodies(run) + ", expected a run from g" + g + ":" + done[g]);
                    break;
                }
            }
            holder[g] = me;
        }
        int acks = random.nextInt(4) == 0 ? random.nextInt(run.size()) : run.size();
        List<Runnable> calls = new ArrayList<>();
        for (Message<String> msg : run.subList(0, acks)) {
            calls.add(() -> {
                synchronized (guard) {
                    done[g]++;
                }
                msg.acknowledge();
                remaining.decrementAndGet();
            });
        }
        List<Message<String>> nacks = new ArrayList<>(run.subList(acks, run.size()));
        if (holdsRuns) {
            java.util.Collections.shuffle(nacks, random);
        } else {
            java.util.Collections.reverse(nacks);
        }
        // a nack, or ending the visibility at once (a lapse): either way the message goes back to its group's head
        nacks.forEach(msg -> calls.add(random.nextBoolean() ? msg::nack : () -> msg.extendVisibility(Duration.ZERO)));
        try {
            for (int i = 0; i < calls.size(); i++) {
                if (i == calls.size() - 1) {
                    synchronized (guard) {
                        holder[g] = -1; // the group is free once this call returns; nobody can take it before
                    }
                }
                calls.get(i).run();
            }
        } catch (RuntimeException e) {
            problems.add("consumer " + me + " settling " + bodies(run) + ": " + e);
        }
    }

    @Test
    @DisplayName("random histories of sends, receives by several consumers, acks, nacks, lapses and redrives keep per-group order and one run in flight per group (model-checked)")
    void fifoModelChecked() {
        Set<String> kinds = new HashSet<>();
        fifo();
        FifoModelCheck.run(this, kinds);
        assertThat(kinds).as("operations the histories exercised").contains("send", "receive", "ack", "nack",
                "lapse", "dead-letter");
    }
}
