package dev.mailbox.inmemory;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A binary min-heap of entries by due time (then by seq, to keep FIFO among equal times), in which
 * every entry knows its own index. That makes remove and re-key O(log n) without tombstones, so
 * acknowledged messages leave no garbage behind however long their visibility timeout was.
 * Due times are compared by subtraction, as {@link System#nanoTime()} requires.
 */
final class TimedHeap {
    private Entry[] heap = new Entry[16];
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    Entry peek() {
        return heap[0];
    }

    /** @return true if the entry became the earliest */
    boolean add(Entry e) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = e;
        e.heapIndex = size;
        size++;
        siftUp(e.heapIndex);
        return heap[0] == e;
    }

    Entry poll() {
        Entry top = heap[0];
        removeAt(0);
        return top;
    }

    void remove(Entry e) {
        if (e.heapIndex >= 0) {
            removeAt(e.heapIndex);
        }
    }

    /** Restores order after {@code e.dueNanos} changed. @return true if it is now the earliest */
    boolean changed(Entry e) {
        siftUp(e.heapIndex);
        siftDown(e.heapIndex);
        return heap[0] == e;
    }

    /** @return the entry at index {@code i} of the heap's array (0 to size - 1), in no particular order but the first */
    Entry at(int i) {
        return heap[i];
    }

    /** Visits every entry due at {@code now} (due time not after it), without changing anything. O(due). */
    void forEachDue(long now, Consumer<Entry> each) {
        forEachDue(0, now, each);
    }

    private void forEachDue(int i, long now, Consumer<Entry> each) {
        // a heap's parent is due no later than its children: below an entry not due, nothing is
        if (i >= size || heap[i].dueNanos - now > 0) {
            return;
        }
        each.accept(heap[i]);
        forEachDue(2 * i + 1, now, each);
        forEachDue(2 * i + 2, now, each);
    }

    void clear(Consumer<Entry> each) {
        for (int i = 0; i < size; i++) {
            heap[i].heapIndex = -1;
            each.accept(heap[i]);
            heap[i] = null;
        }
        size = 0;
    }

    private void removeAt(int i) {
        Entry removed = heap[i];
        removed.heapIndex = -1;
        size--;
        if (i == size) {
            heap[size] = null;
            return;
        }
        Entry last = heap[size];
        heap[size] = null;
        heap[i] = last;
        last.heapIndex = i;
        siftUp(i);
        siftDown(last.heapIndex);
    }

    private void siftUp(int i) {
        Entry e = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Entry p = heap[parent];
            if (!before(e, p)) {
                break;
            }
            heap[i] = p;
            p.heapIndex = i;
            i = parent;
        }
        heap[i] = e;
        e.heapIndex = i;
    }

    private void siftDown(int i) {
        Entry e = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], e)) {
                break;
            }
            heap[i] = heap[child];
            heap[i].heapIndex = i;
            i = child;
        }
        heap[i] = e;
        e.heapIndex = i;
    }

    private static boolean before(Entry a, Entry b) {
        long d = a.dueNanos - b.dueNanos;
        return d < 0 || (d == 0 && a.seq < b.seq);
    }
}
