package dev.mailbox.testkit;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The FIFO group's property test: random histories of sends (single and batch, to three groups), receives
 * by several consumers (the mailbox and, where the backend has one, a second object on the same queue),
 * acknowledgements (through the message or by handle through any consumer, current, lapsed or superseded),
 * nacks (with and without a timeout), lapses (the manual clock moving past visibility timeouts, or
 * {@code extendVisibility(ZERO)} where there is no manual clock) and redrives (a redrive policy of two
 * receives into a FIFO dead-letter mailbox), run against the backend and a reference model side by side.
 *
 * <p>The model does not predict which group a receive serves (backends may choose); it checks that what the
 * backend did was allowed, after every step:
 * <ul>
 *   <li>every delivered message was the first of its group not yet deleted, or follows such messages that
 *       were delivered earlier in the same receive, or that had used up their receives (which the delivery
 *       proves were dead-lettered);</li>
 *   <li>no message was delivered while another of its group was in flight from an earlier receive (one run
 *       in flight per group), nor during its nack timeout, nor more often than the redrive policy allows;
 *       delivery counts and group ids are right. Where the mailbox does not declare
 *       {@link dev.mailbox.api.MailboxCapabilities#holdsRuns()}, the weaker rule: no message was delivered while
 *       an <em>earlier</em> one of its group was in flight from an earlier receive;</li>
 *   <li>a receive returns something whenever some group can deliver (other groups are never blocked);</li>
 *   <li>acknowledge, nack and extend succeed exactly when the rules say (late acknowledgement where
 *       declared), and the exact count agrees;</li>
 *   <li>at the end, the dead-letter mailbox holds exactly the dead-lettered messages, with their ids and
 *       groups, each group in send order.</li>
 * </ul>
 * A head that has used up its receives may or may not have been moved by a receive that did not deliver
 * from its group; the model keeps it as "maybe moved" until an acknowledgement, a later delivery of its
 * group or the final look at the dead-letter mailbox tells. Where the mailbox does not declare
 * {@link dev.mailbox.api.MailboxCapabilities#sharedDeliveryState()}, a nack by handle goes through the consumer
 * that received the delivery, since another would not know it was nacked.
 *
 * <p>{@value #DEFAULT_HISTORIES} histories by default (system property {@code mailbox.tck.fifoHistories}),
 * from seed {@value #DEFAULT_SEED} ({@code mailbox.tck.seed}). A failure is shrunk to a short history by
 * dropping steps while it still fails, and reported with the seed.
 */
final class FifoModelCheck {

    static final int DEFAULT_HISTORIES = 500;
    static final long DEFAULT_SEED = 31;
    /** Receives before a message is dead-lettered: small, so histories reach it often. */
    private static final int MAX_RECEIVES = 2;
    private static final String[] GROUPS = {"a", "b", "c"};
    private static final long FOREVER = Long.MAX_VALUE / 4;
    private static final int SHRINK_RUNS = 400;

    sealed interface Op permits Send, Receive, Ack, Nack, Extend, Advance {
    }

    /** Sends {@code count} messages (a batch when more than one) to group {@code group}. */
    record Send(int group, int count) implements Op {
    }

    record Receive(int consumer, int max, int visibilityTicks) implements Op {
    }

    /** Through the message's own method ({@code via} 0), or by handle through consumer {@code via - 1}. */
    record Ack(int pick, int via) implements Op {
    }

    record Nack(int pick, int timeoutTicks, int via) implements Op {
    }

    /** Zero ends the visibility at once: a lapse. */
    record Extend(int pick, int timeoutTicks) implements Op {
    }

    record Advance(int ticks) implements Op {
    }

    private FifoModelCheck() {
    }

    /**
     * Runs the histories on the group's kit, failing with a shrunk history if one breaks a rule.
     *
     * @param group the FIFO group of the kit
     * @param kinds filled with the kinds of step that happened, so the caller can check the histories
     *              reached them
     */
    static void run(ContractGroup group, Set<String> kinds) {
        int histories = Integer.getInteger("mailbox.tck.fifoHistories", DEFAULT_HISTORIES);
        long seed = Long.getLong("mailbox.tck.seed", DEFAULT_SEED);
        boolean manual = group.kit.hasManualClock();
        SplittableRandom random = new SplittableRandom(seed);
        for (int h = 0; h < histories; h++) {
            List<Op> ops = generate(random.split(), manual);
            String violation = new History(group, kinds).run(ops);
            if (violation != null) {
                throw shrunk(group, seed, h, ops, violation);
            }
        }
    }

    private static List<Op> generate(SplittableRandom r, boolean manual) {
        int length = 10 + r.nextInt(50);
        List<Op> ops = new ArrayList<>(length);
        int total = manual ? 25 : 22;
        for (int i = 0; i < length; i++) {
            int x = r.nextInt(total);
            if (x < 6) {
                ops.add(new Send(r.nextInt(GROUPS.length), r.nextInt(4) == 0 ? 2 + r.nextInt(2) : 1));
            } else if (x < 12) {
                ops.add(new Receive(r.nextInt(2), 1 + r.nextInt(4), 1 + r.nextInt(3)));
            } else if (x < 16) {
                ops.add(new Ack(r.nextInt(1000), r.nextInt(3)));
            } else if (x < 19) {
                ops.add(new Nack(r.nextInt(1000), r.nextInt(3) == 0 ? 1 + r.nextInt(2) : 0, r.nextInt(3)));
            } else if (x < 22) {
                ops.add(new Extend(r.nextInt(1000), r.nextInt(2) == 0 ? 0 : 1 + r.nextInt(3)));
            } else {
                ops.add(new Advance(1 + r.nextInt(3)));
            }
        }
        return ops;
    }

    /** Drops chunks of steps, then single steps, while the history still fails. */
    private static AssertionError shrunk(ContractGroup group, long seed, int index, List<Op> ops, String violation) {
        List<Op> best = ops;
        String why = violation;
        int runs = 0;
        for (int chunk = Math.max(1, best.size() / 2); chunk >= 1 && runs < SHRINK_RUNS; chunk /= 2) {
            boolean removed = true;
            while (removed && runs < SHRINK_RUNS) {
                removed = false;
                for (int from = 0; from + chunk <= best.size() && runs < SHRINK_RUNS; ) {
                    List<Op> candidate = new ArrayList<>(best.subList(0, from));
                    candidate.addAll(best.subList(from + chunk, best.size()));
                    runs++;
                    String v = new History(group, new java.util.HashSet<>()).run(candidate);
                    if (v != null) {
                        best = candidate;
                        why = v;
                        removed = true;
                    } else {
                        from += chunk;
                    }
                }
            }
            if (chunk == 1) {
                break;
            }
        }
        List<Op> shortest = best;
        return new AssertionError("FIFO model check failed on history " + index + " of seed " + seed
                + " (rerun with -Dmailbox.tck.seed=" + seed + "): " + why + "\nshrunk from " + ops.size() + " to "
                + shortest.size() + " steps:\n" + IntStream.range(0, shortest.size())
                .mapToObj(i -> "  " + i + ": " + shortest.get(i)).collect(Collectors.joining("\n")));
    }

    private enum State { VISIBLE, WAITING, IN_FLIGHT, DELETED, DEAD, MAYBE_DEAD }

    private static final class Msg {
        final int n;
        final int group;
        final String body;
        final String id;
        State state = State.VISIBLE;
        int deliveries;
        long due;
        boolean nacked;
        int receive;

        Msg(int n, int group, String id) {
            this.n = n;
            this.group = group;
            this.body = GROUPS[group] + ":" + n;
            this.id = id;
        }

        @Override
        public String toString() {
            return body + "[" + state + ", deliveries=" + deliveries + (nacked ? ", nacked" : "") + "]";
        }
    }

    /** One delivery, and the consumer (index into the consumers) that received it. */
    private record Delivery(Msg msg, int count, Message<String> real, int consumer) {
    }

    private enum Outcome { OK, STALE, EITHER }

    /** One history on fresh mailboxes, and its model. */
    private static final class History {
        private final ContractGroup group;
        private final MailboxContract kit;
        private final Set<String> kinds;
        private final boolean manual;
        private final List<List<Msg>> groups = new ArrayList<>();
        private final Map<String, Msg> byBody = new HashMap<>();
        private final List<Delivery> deliveries = new ArrayList<>();
        private final List<Mailbox<String>> consumers = new ArrayList<>();
        private Mailbox<String> m;
        private Mailbox<String> dlq;
        private long now;
        private int sent;
        private int receives;

        History(ContractGroup group, Set<String> kinds) {
            this.group = group;
            this.kit = group.kit;
            this.kinds = kinds;
            this.manual = kit.hasManualClock();
            for (int i = 0; i < GROUPS.length; i++) {
                groups.add(new ArrayList<>());
            }
        }

        /** @return the first rule the backend broke, or null */
        String run(List<Op> ops) {
            dlq = kit.newMailbox(MailboxSpec.of(MailboxContract.uniqueName("model-dlq"), MailboxContract.TEXT)
                    .withFifo(FifoOptions.defaults()));
            MailboxSpec<String> spec = MailboxSpec.of(MailboxContract.uniqueName("model"), MailboxContract.TEXT)
                    .withFifo(FifoOptions.defaults()).withRedrivePolicy(RedrivePolicy.of(MAX_RECEIVES, dlq));
            m = kit.newMailbox(spec);
            consumers.add(m);
            Optional<Mailbox<String>> second = kit.secondObjectIfAny(spec);
            second.ifPresent(consumers::add);
            try {
                for (int i = 0; i < ops.size(); i++) {
                    String v;
                    try {
                        v = step(ops.get(i));
                        if (v == null) {
                            v = invariants();
                        }
                    } catch (RuntimeException e) {
                        v = "the backend threw " + e;
                    }
                    if (v != null) {
                        return "step " + i + " (" + ops.get(i) + "): " + v;
                    }
                }
                return finish();
            } catch (RuntimeException e) {
                return "at the end, the backend threw " + e;
            } finally {
                second.ifPresent(kit::discard);
                kit.discard(m);
                kit.discard(dlq);
            }
        }

        private boolean lateAck() {
            return m.capabilities().lateAcknowledge();
        }

        /** Whether a message that comes back from a run waits for the rest of its run (else for its head only). */
        private boolean holdsRuns() {
            return m.capabilities().holdsRuns();
        }

        private Duration duration(long ticks) {
            return ticks >= FOREVER ? ContractGroup.LONG : group.ticks(ticks);
        }

        /** Visibility and nack timeouts last for ever where time cannot be moved, so that nothing lapses by itself. */
        private long span(int ticks) {
            return manual ? ticks : FOREVER;
        }

        private String step(Op op) {
            fire();
            if (op instanceof Send s) {
                return send(s);
            } else if (op instanceof Receive r) {
                return receive(r);
            } else if (op instanceof Advance a) {
                if (!manual) {
                    return null;
                }
                kit.elapse(group.ticks(a.ticks()));
                now += a.ticks();
                fire();
                return null;
            }
            if (deliveries.isEmpty()) {
                return null;
            }
            if (op instanceof Ack a) {
                return acknowledge(deliveries.get(a.pick() % deliveries.size()), a.via());
            } else if (op instanceof Nack n) {
                return nack(deliveries.get(n.pick() % deliveries.size()), n.timeoutTicks(), n.via());
            } else if (op instanceof Extend e) {
                return extend(deliveries.get(e.pick() % deliveries.size()), e.timeoutTicks());
            }
            throw new IllegalStateException("unknown step " + op);
        }

        private String send(Send s) {
            kinds.add("send");
            SendOptions options = SendOptions.defaults().withGroupId(GROUPS[s.group()]);
            List<String> bodies = new ArrayList<>();
            for (int i = 0; i < s.count(); i++) {
                bodies.add(GROUPS[s.group()] + ":" + (sent + i));
            }
            List<String> ids = s.count() == 1 ? List.of(m.send(bodies.get(0), options)) : m.sendBatch(bodies, options);
            for (String id : ids) {
                Msg msg = new Msg(sent++, s.group(), id);
                groups.get(s.group()).add(msg);
                byBody.put(msg.body, msg);
            }
            return null;
        }

        /** Lapses and nack timeouts that the (manual or endless) clock has reached. */
        private void fire() {
            for (List<Msg> g : groups) {
                for (Msg msg : g) {
                    if ((msg.state == State.IN_FLIGHT || msg.state == State.WAITING) && msg.due <= now) {
                        if (msg.state == State.IN_FLIGHT) {
                            kinds.add("lapse");
                        }
                        msg.state = State.VISIBLE;
                    }
                }
            }
        }

        private static boolean used(Msg msg) {
            return (msg.state == State.VISIBLE || msg.state == State.MAYBE_DEAD) && msg.deliveries >= MAX_RECEIVES;
        }

        private static boolean gone(Msg msg) {
            return msg.state == State.DELETED || msg.state == State.DEAD;
        }

        /** @return a group that a receive must be able to deliver from now, or -1 */
        private int deliverableGroup() {
            for (int gi = 0; gi < groups.size(); gi++) {
                List<Msg> g = groups.get(gi);
                if (g.stream().anyMatch(x -> x.state == State.IN_FLIGHT)) {
                    continue;
                }
                for (Msg msg : g) {
                    if (gone(msg) || used(msg)) {
                        continue;
                    }
                    if (msg.state == State.VISIBLE) {
                        return gi;
                    }
                    break;
                }
            }
            return -1;
        }

        private String receive(Receive r) {
            kinds.add("receive");
            int consumerIndex = r.consumer() % consumers.size();
            Mailbox<String> consumer = consumers.get(consumerIndex);
            int expected = deliverableGroup();
            long visibility = span(r.visibilityTicks());
            Duration wait = expected >= 0 ? kit.patience() : Duration.ZERO;
            List<Message<String>> got = consumer.receive(ReceiveOptions.defaults().withMaxMessages(r.max())
                    .withVisibilityTimeout(duration(visibility)).withWaitTime(wait));
            int id = ++receives;
            if (got.size() > r.max()) {
                return "a receive of at most " + r.max() + " returned " + got.size();
            }
            for (Message<String> x : got) {
                Msg msg = byBody.get(x.body());
                if (msg == null) {
                    return "received a message never sent: " + x.body();
                }
                if (!GROUPS[msg.group].equals(x.groupId())) {
                    return msg.body + " came with group id " + x.groupId();
                }
                if (msg.state == State.IN_FLIGHT) {
                    return msg.body + " was delivered again while in flight" + (msg.receive == id ? " (twice in one receive)" : "");
                }
                if (msg.state != State.VISIBLE) {
                    return msg.body + " was delivered in state " + msg + (msg.state == State.MAYBE_DEAD
                            ? ": more often than the redrive policy's " + MAX_RECEIVES + " receives" : "");
                }
                if (msg.deliveries >= MAX_RECEIVES) {
                    return msg.body + " was delivered a " + (msg.deliveries + 1) + "th time: the redrive policy allows "
                            + MAX_RECEIVES;
                }
                if (x.deliveryCount() != msg.deliveries + 1) {
                    return msg.body + " came with delivery count " + x.deliveryCount() + ", expected " + (msg.deliveries + 1);
                }
                for (Msg y : groups.get(msg.group)) {
                    if (y == msg) {
                        continue;
                    }
                    if (y.state == State.IN_FLIGHT && y.receive != id && (holdsRuns() || y.n < msg.n)) {
                        return "one run in flight per group broken: " + msg.body + " was delivered while " + y.body
                                + " of the same group was in flight from an earlier receive";
                    }
                    if (y.n > msg.n || gone(y) || (y.state == State.IN_FLIGHT && y.receive == id)) {
                        continue;
                    }
                    if (used(y)) {
                        y.state = State.DEAD; // a later message of its group came: it was moved
                        kinds.add("dead-letter");
                        continue;
                    }
                    return "group order broken: " + msg.body + " was delivered before the earlier " + y;
                }
                msg.state = State.IN_FLIGHT;
                msg.deliveries++;
                msg.nacked = false;
                msg.due = now + visibility;
                msg.receive = id;
                deliveries.add(new Delivery(msg, msg.deliveries, x, consumerIndex));
            }
            if (got.isEmpty() && expected >= 0) {
                return "a receive returned nothing although group " + GROUPS[expected] + " could deliver: "
                        + groups.get(expected);
            }
            // a head that has used up its receives may have been moved by this receive (where runs are held, only
            // from a group with nothing in flight; otherwise from any group whose head is not in flight)
            for (List<Msg> g : groups) {
                if (holdsRuns() && g.stream().anyMatch(x -> x.state == State.IN_FLIGHT)) {
                    continue;
                }
                for (Msg y : g) {
                    if (gone(y)) {
                        continue;
                    }
                    if (!used(y)) {
                        break;
                    }
                    y.state = State.MAYBE_DEAD;
                }
            }
            return null;
        }

        private Outcome expectedAcknowledge(Delivery d) {
            Msg msg = d.msg();
            if (gone(msg) || d.count() != msg.deliveries || msg.nacked) {
                return Outcome.STALE;
            }
            return switch (msg.state) {
                case IN_FLIGHT -> Outcome.OK;
                case VISIBLE -> lateAck() ? Outcome.OK : Outcome.STALE; // lapsed, not delivered again
                case MAYBE_DEAD -> lateAck() ? Outcome.EITHER : Outcome.STALE;
                default -> Outcome.STALE;
            };
        }

        private String acknowledge(Delivery d, int via) {
            Outcome expected = expectedAcknowledge(d);
            if (expected == Outcome.STALE && !m.capabilities().detectsStaleAcknowledge()) {
                return null; // the backend may not tell; the rest of the kit checks that nothing is deleted
            }
            kinds.add("ack");
            Outcome actual = outcome(() -> {
                if (via == 0) {
                    d.real().acknowledge();
                } else {
                    consumers.get((via - 1) % consumers.size()).acknowledge(d.real().receiptHandle());
                }
            });
            Msg msg = d.msg();
            if (expected != Outcome.EITHER && actual != expected) {
                return "acknowledge of delivery " + d.count() + " of " + msg + " was " + actual + ", expected " + expected;
            }
            if (actual == Outcome.OK) {
                if (msg.state == State.VISIBLE || msg.state == State.MAYBE_DEAD) {
                    kinds.add("late-ack");
                }
                msg.state = State.DELETED;
            } else if (expected == Outcome.EITHER) {
                msg.state = State.DEAD; // refused although the handle was its latest: it had been moved
                kinds.add("dead-letter");
            }
            return null;
        }

        private boolean current(Delivery d) {
            Msg msg = d.msg();
            return msg.state == State.IN_FLIGHT && d.count() == msg.deliveries && msg.due > now;
        }

        private String nack(Delivery d, int timeoutTicks, int via) {
            kinds.add("nack");
            boolean expected = current(d);
            long timeout = timeoutTicks == 0 ? 0 : span(timeoutTicks);
            Duration t = duration(timeout);
            // only the consumer that received it may know of a nack, where the state is not shared
            Mailbox<String> through = consumers.get(m.capabilities().sharedDeliveryState()
                    ? Math.max(0, via - 1) % consumers.size() : d.consumer());
            Outcome actual = outcome(() -> {
                if (via == 0) {
                    d.real().nack(t);
                } else {
                    through.nack(d.real().receiptHandle(), t);
                }
            });
            if ((actual == Outcome.OK) != expected) {
                return "nack of delivery " + d.count() + " of " + d.msg() + " was " + actual + ", expected "
                        + (expected ? Outcome.OK : Outcome.STALE);
            }
            if (expected) {
                Msg msg = d.msg();
                msg.nacked = true;
                if (timeout == 0) {
                    msg.state = State.VISIBLE;
                } else {
                    msg.state = State.WAITING;
                    msg.due = now + timeout;
                }
            }
            return null;
        }

        private String extend(Delivery d, int timeoutTicks) {
            boolean expected = current(d);
            long timeout = timeoutTicks == 0 ? 0 : span(timeoutTicks);
            Outcome actual = outcome(() -> d.real().extendVisibility(duration(timeout)));
            if ((actual == Outcome.OK) != expected) {
                return "extendVisibility of delivery " + d.count() + " of " + d.msg() + " was " + actual + ", expected "
                        + (expected ? Outcome.OK : Outcome.STALE);
            }
            if (expected) {
                Msg msg = d.msg();
                if (timeout == 0) {
                    kinds.add("lapse");
                    msg.state = State.VISIBLE; // ended now: a lapse, so its handle still acknowledges
                } else {
                    msg.due = now + timeout;
                }
            }
            return null;
        }

        private static Outcome outcome(Runnable call) {
            try {
                call.run();
                return Outcome.OK;
            } catch (ReceiptHandleExpiredException stale) {
                return Outcome.STALE;
            }
        }

        /** After every step: each group's messages in flight came from one receive (where runs are held); the count agrees. */
        private String invariants() {
            for (List<Msg> g : holdsRuns() ? groups : List.<List<Msg>>of()) {
                long runs = g.stream().filter(x -> x.state == State.IN_FLIGHT).mapToInt(x -> x.receive).distinct().count();
                if (runs > 1) {
                    return "messages of one group in flight from " + runs + " receives: " + g;
                }
            }
            if (m.capabilities().exactCount()) {
                long definite = all().filter(x -> !gone(x) && x.state != State.MAYBE_DEAD).count();
                long maybe = all().filter(x -> x.state == State.MAYBE_DEAD).count();
                long count = m.approximateCount();
                if (count < definite || count > definite + maybe) {
                    return "count is " + count + ", expected " + (maybe == 0 ? definite : definite + " to " + (definite + maybe))
                            + ": " + groups;
                }
            }
            return null;
        }

        private java.util.stream.Stream<Msg> all() {
            return groups.stream().flatMap(List::stream);
        }

        /** The dead-letter mailbox holds exactly what was moved, each group in order. */
        private String finish() {
            List<Msg> moved = new ArrayList<>();
            int[] last = new int[GROUPS.length];
            java.util.Arrays.fill(last, -1);
            long mustHave = all().filter(x -> x.state == State.DEAD).count();
            while (true) {
                Duration wait = moved.size() < mustHave ? kit.patience() : Duration.ZERO;
                List<Message<String>> got = dlq.receive(ReceiveOptions.defaults().withMaxMessages(10)
                        .withVisibilityTimeout(ContractGroup.LONG).withWaitTime(wait));
                if (got.isEmpty()) {
                    break;
                }
                for (Message<String> x : got) {
                    Msg msg = byBody.get(x.body());
                    if (msg == null || (msg.state != State.DEAD && msg.state != State.MAYBE_DEAD)) {
                        return "the dead-letter mailbox holds " + x.body() + ", which was not dead-lettered: " + msg;
                    }
                    if (!msg.id.equals(x.id()) || !GROUPS[msg.group].equals(x.groupId())) {
                        return "dead letter " + x.body() + " has id " + x.id() + " and group " + x.groupId()
                                + ", expected " + msg.id + " and " + GROUPS[msg.group];
                    }
                    if (msg.n < last[msg.group]) {
                        return "the dead-letter mailbox delivered " + msg.body + " after a later message of its group";
                    }
                    last[msg.group] = msg.n;
                    if (msg.state == State.MAYBE_DEAD) {
                        msg.state = State.DEAD;
                    }
                    kinds.add("dead-letter");
                    moved.add(msg);
                    x.acknowledge();
                }
            }
            List<Msg> missing = all().filter(x -> x.state == State.DEAD && !moved.contains(x)).toList();
            if (!missing.isEmpty()) {
                return "dead-lettered messages missing from the dead-letter mailbox: " + missing;
            }
            if (m.capabilities().exactCount()) {
                long remaining = all().filter(x -> !gone(x)).count();
                if (m.approximateCount() != remaining) {
                    return "at the end the count is " + m.approximateCount() + ", expected " + remaining + ": " + groups;
                }
            }
            return null;
        }
    }
}
