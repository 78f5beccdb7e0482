package dev.mailbox.inmemory;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.testkit.ManualClock;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random programs of sends, receives, acks, nacks, extends (through the message or by its receipt
 * handle), purges and clock moves, run on an
 * InMemoryMailbox and on a small reference model written independently of it; after every step the
 * two must agree on what was received (in order, with delivery counts), on which handles were stale,
 * and on the count. jqwik shrinks a failure to a short program. Acknowledgements follow SQS's rule: the
 * most recent delivery's handle deletes the message even after its visibility lapsed, until it is
 * delivered again or nacked.
 *
 * <p>The model states FIFO as "ordered by the time a message became visible; at the same instant,
 * timers (by send order) before events (in the order they happened)". Timed durations are at least
 * one tick so that a timer never fires at the instant it was set.
 */
class InMemoryMailboxModelTest {

    sealed interface Op permits Send, Receive, Ack, Nack, Extend, Advance, Purge {
    }

    record Send(int delayTicks) implements Op {
    }

    record Receive(int max, int visibilityTicks) implements Op {
    }

    /**
     * Acts on the delivery at {@code pick} modulo the deliveries seen so far: through the message, or
     * through the mailbox with the message's receipt handle ({@code byHandle}), which must agree.
     */
    record Ack(int pick, boolean byHandle) implements Op {
    }

    record Nack(int pick, int timeoutTicks, boolean byHandle) implements Op {
    }

    record Extend(int pick, int timeoutTicks, boolean byHandle) implements Op {
    }

    record Advance(int ticks) implements Op {
    }

    record Purge() implements Op {
    }

    private static final Duration TICK = Duration.ofSeconds(1);

    @Provide
    Arbitrary<List<Op>> programs() {
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 1000);
        Arbitrary<Op> send = Arbitraries.integers().between(0, 3).map(d -> d == 1 ? 0 : d).map(Send::new);
        Arbitrary<Op> receive = Combinators.combine(Arbitraries.integers().between(1, 4),
                Arbitraries.integers().between(1, 4)).as(Receive::new);
        Arbitrary<Boolean> byHandle = Arbitraries.of(false, true);
        Arbitrary<Op> ack = Combinators.combine(pick, byHandle).as(Ack::new);
        Arbitrary<Op> nack = Combinators.combine(pick, Arbitraries.integers().between(0, 3), byHandle).as(Nack::new);
        Arbitrary<Op> extend = Combinators.combine(pick, Arbitraries.integers().between(1, 4), byHandle).as(Extend::new);
        Arbitrary<Op> advance = Arbitraries.integers().between(1, 3).map(Advance::new);
        Arbitrary<Op> purge = Arbitraries.just(new Purge());
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                Tuple.of(6, send), Tuple.of(6, receive), Tuple.of(4, ack), Tuple.of(3, nack),
                Tuple.of(2, extend), Tuple.of(4, advance), Tuple.of(1, purge));
        return op.list().ofMinSize(1).ofMaxSize(80);
    }

    @Property(tries = 400, seed = "20261121")
    void behavesLikeTheModel(@ForAll("programs") List<Op> program) {
        ManualClock clock = new ManualClock();
        InMemoryMailbox<String> real = InMemoryMailbox.builder("model", Codec.utf8()).timeSource(clock).build();
        Model model = new Model();
        List<Message<String>> realDeliveries = new ArrayList<>();
        List<Model.Delivery> modelDeliveries = new ArrayList<>();
        int sent = 0;

        for (Op op : program) {
            if (op instanceof Send s) {
                real.send("m" + sent, SendOptions.defaults().withDelay(TICK.multipliedBy(s.delayTicks())));
                model.send(sent, s.delayTicks());
                sent++;
            } else if (op instanceof Receive r) {
                List<Message<String>> got = real.receive(ReceiveOptions.defaults().withMaxMessages(r.max())
                        .withVisibilityTimeout(TICK.multipliedBy(r.visibilityTicks())));
                List<Model.Delivery> expected = model.receive(r.max(), r.visibilityTicks());
                assertThat(got.stream().map(m -> m.body() + "#" + m.deliveryCount()).toList())
                        .as("receive after %s", program)
                        .containsExactlyElementsOf(expected.stream().map(d -> "m" + d.msg().seq + "#" + d.count()).toList());
                realDeliveries.addAll(got);
                modelDeliveries.addAll(expected);
            } else if (op instanceof Ack a) {
                if (!realDeliveries.isEmpty()) {
                    int i = a.pick() % realDeliveries.size();
                    Message<String> d = realDeliveries.get(i);
                    assertThat(succeeded(a.byHandle() ? () -> real.acknowledge(d.receiptHandle()) : d::acknowledge))
                            .isEqualTo(model.ack(modelDeliveries.get(i)));
                }
            } else if (op instanceof Nack n) {
                if (!realDeliveries.isEmpty()) {
                    int i = n.pick() % realDeliveries.size();
                    Message<String> d = realDeliveries.get(i);
                    Duration t = TICK.multipliedBy(n.timeoutTicks());
                    assertThat(succeeded(n.byHandle() ? () -> real.nack(d.receiptHandle(), t) : () -> d.nack(t)))
                            .isEqualTo(model.nack(modelDeliveries.get(i), n.timeoutTicks()));
                }
            } else if (op instanceof Extend e) {
                if (!realDeliveries.isEmpty()) {
                    int i = e.pick() % realDeliveries.size();
                    Message<String> d = realDeliveries.get(i);
                    Duration t = TICK.multipliedBy(e.timeoutTicks());
                    assertThat(succeeded(e.byHandle() ? () -> real.extendVisibility(d.receiptHandle(), t)
                            : () -> d.extendVisibility(t)))
                            .isEqualTo(model.extend(modelDeliveries.get(i), e.timeoutTicks()));
                }
            } else if (op instanceof Advance adv) {
                clock.advance(TICK.multipliedBy(adv.ticks()));
                model.now += adv.ticks();
            } else if (op instanceof Purge) {
                assertThat(real.purge()).isEqualTo(model.purge());
            }
            assertThat(real.approximateCount()).as("count after %s", op).isEqualTo(model.count());
        }
        real.close();
    }

    private static boolean succeeded(Runnable call) {
        try {
            call.run();
            return true;
        } catch (ReceiptHandleExpiredException stale) {
            return false;
        }
    }

    /** The reference: a list of messages and a clock, with no clever data structures. */
    static final class Model {
        enum State { VISIBLE, TIMED, IN_FLIGHT, DELETED }

        static final class Msg {
            final int seq;
            State state;
            long due;          // TIMED / IN_FLIGHT: when it becomes visible
            long visibleSince; // VISIBLE: when it became visible
            int kind;          // 0 = by a timer, 1 = by an event
            long tie;          // timers: seq; events: event number
            int deliveries;
            boolean nacked;    // since its last delivery

            Msg(int seq) {
                this.seq = seq;
            }
        }

        record Delivery(Msg msg, int count) {
        }

        final List<Msg> messages = new ArrayList<>();
        long now;
        long events;

        void send(int seq, int delay) {
            Msg m = new Msg(seq);
            messages.add(m);
            if (delay == 0) {
                visibleByEvent(m);
            } else {
                m.state = State.TIMED;
                m.due = now + delay;
            }
        }

        List<Delivery> receive(int max, int visibility) {
            fireDueTimers();
            List<Msg> visible = new ArrayList<>();
            for (Msg m : messages) {
                if (m.state == State.VISIBLE) {
                    visible.add(m);
                }
            }
            visible.sort(Comparator.comparingLong((Msg m) -> m.visibleSince).thenComparingInt(m -> m.kind)
                    .thenComparingLong(m -> m.tie));
            List<Delivery> out = new ArrayList<>();
            for (Msg m : visible.subList(0, Math.min(max, visible.size()))) {
                m.deliveries++;
                m.nacked = false;
                m.state = State.IN_FLIGHT;
                m.due = now + visibility;
                out.add(new Delivery(m, m.deliveries));
            }
            return out;
        }

        boolean current(Delivery d) {
            return d.msg().state == State.IN_FLIGHT && d.msg().deliveries == d.count() && d.msg().due > now;
        }

        /** As SQS: the most recent delivery's handle deletes the message, also after it lapsed, unless nacked. */
        boolean ack(Delivery d) {
            fireDueTimers();
            Msg m = d.msg();
            boolean latest = m.deliveries == d.count() && !m.nacked
                    && (m.state == State.IN_FLIGHT || m.state == State.VISIBLE);
            if (!latest) {
                return false;
            }
            d.msg().state = State.DELETED;
            return true;
        }

        boolean nack(Delivery d, int timeout) {
            if (!current(d)) {
                return false;
            }
            d.msg().nacked = true;
            if (timeout == 0) {
                visibleByEvent(d.msg());
            } else {
                d.msg().state = State.TIMED;
                d.msg().due = now + timeout;
            }
            return true;
        }

        boolean extend(Delivery d, int timeout) {
            if (!current(d)) {
                return false;
            }
            d.msg().due = now + timeout;
            return true;
        }

        long purge() {
            long n = count();
            messages.forEach(m -> m.state = State.DELETED);
            return n;
        }

        long count() {
            return messages.stream().filter(m -> m.state != State.DELETED).count();
        }

        private void visibleByEvent(Msg m) {
            fireDueTimers(); // timers that are due fire before an event at the same instant
            m.state = State.VISIBLE;
            m.visibleSince = now;
            m.kind = 1;
            m.tie = events++;
        }

        private void fireDueTimers() {
            for (Msg m : messages) {
                if ((m.state == State.TIMED || m.state == State.IN_FLIGHT) && m.due <= now) {
                    m.state = State.VISIBLE;
                    m.visibleSince = m.due;
                    m.kind = 0;
                    m.tie = m.seq;
                }
            }
        }
    }
}
