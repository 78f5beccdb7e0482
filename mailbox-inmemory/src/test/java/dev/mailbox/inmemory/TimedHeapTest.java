package dev.mailbox.inmemory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The heap behind delays and visibility timeouts, against a plain list kept in order the slow way. */
class TimedHeapTest {

    /** Due times compared by subtraction, as for System.nanoTime, then by seq. */
    private static final Comparator<Entry> DUE_ORDER = (a, b) -> {
        long d = a.dueNanos - b.dueNanos;
        return d != 0 ? Long.signum(d) : Long.compare(a.seq, b.seq);
    };

    @Test
    @DisplayName("through any mix of adds, removes, re-keys and polls the earliest (by due time, then seq) is on top, and the due ones are visited")
    void matchesTheModel() {
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            // readings near Long.MAX_VALUE, so some due times wrap around to negative numbers
            long base = Long.MAX_VALUE - 20;
            TimedHeap heap = new TimedHeap();
            List<Entry> model = new ArrayList<>();
            long seq = 0;
            for (int op = 0; op < 400; op++) {
                int what = random.nextInt(10);
                if (what < 5 || model.isEmpty()) {
                    Entry e = entry(seq++, base + random.nextInt(40)); // few distinct times: many ties
                    boolean earliest = heap.add(e);
                    model.add(e);
                    assertThat(earliest).as("seed %d: add says whether it became the earliest", seed)
                            .isEqualTo(min(model) == e);
                } else if (what < 7) {
                    Entry e = model.remove(random.nextInt(model.size()));
                    heap.remove(e);
                    heap.remove(e); // a second remove is harmless
                } else if (what < 9) {
                    Entry e = model.get(random.nextInt(model.size()));
                    e.dueNanos = base + random.nextInt(40);
                    boolean earliest = heap.changed(e);
                    assertThat(earliest).as("seed %d: changed says whether it is now the earliest", seed)
                            .isEqualTo(min(model) == e);
                } else {
                    Entry top = heap.poll();
                    assertThat(top).as("seed %d: poll", seed).isSameAs(min(model));
                    model.remove(top);
                }
                assertThat(heap.size()).isEqualTo(model.size());
                if (!model.isEmpty()) {
                    assertThat(heap.peek()).as("seed %d: peek after op %d", seed, op).isSameAs(min(model));
                }
                long now = base + random.nextInt(40);
                List<Entry> due = new ArrayList<>();
                heap.forEachDue(now, due::add);
                assertThat(due).as("seed %d: due at %d", seed, now)
                        .containsExactlyInAnyOrderElementsOf(model.stream().filter(e -> e.dueNanos - now <= 0).toList());
            }
            List<Entry> drained = new ArrayList<>();
            while (!heap.isEmpty()) {
                drained.add(heap.poll());
            }
            model.sort(DUE_ORDER);
            assertThat(drained).as("seed %d: drained in order", seed).containsExactlyElementsOf(model);
        }
    }

    @Test
    @DisplayName("clear visits every entry once and leaves each outside the heap")
    void clear() {
        TimedHeap heap = new TimedHeap();
        List<Entry> all = new ArrayList<>();
        for (int i = 0; i < 40; i++) { // past the first capacity, so the array grows
            Entry e = entry(i, 40 - i);
            all.add(e);
            heap.add(e);
        }
        List<Entry> visited = new ArrayList<>();
        heap.clear(visited::add);
        assertThat(visited).containsExactlyInAnyOrderElementsOf(all);
        assertThat(heap.isEmpty()).isTrue();
        assertThat(all).allSatisfy(e -> assertThat(e.heapIndex).isEqualTo(-1));
    }

    private static Entry min(List<Entry> model) {
        return model.stream().min(DUE_ORDER).orElseThrow();
    }

    private static Entry entry(long seq, long due) {
        Entry e = new Entry(seq, "x", Map.of(), 0, null);
        e.dueNanos = due;
        return e;
    }
}
