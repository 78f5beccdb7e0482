package dev.mailbox.sqsendpoint.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this endpoint remembers of the deliveries and delayed sends it made, for what the Mailbox API does not
 * say: how many messages are in flight or delayed (the API counts every undeleted message together), and when
 * a message was first received. Bounded: at most {@value #MAX_TRACKED} in-flight deliveries and delayed sends
 * per queue and {@value #MAX_TRACKED} first-receive times in all (beyond that the numbers are estimates, as
 * SQS's own are). What other nodes or other clients of the mailbox did is not seen here.
 */
final class Deliveries {

    static final int MAX_TRACKED = 100_000;

    /** The split of a queue's count. */
    record Counts(long visible, long notVisible, long delayed) {
    }

    private static final class QueueState {
        final Map<String, Long> inFlightUntil = new ConcurrentHashMap<>();
        final Map<String, Long> delayedUntil = new ConcurrentHashMap<>();
    }

    private final Map<String, QueueState> queues = new ConcurrentHashMap<>();
    private final Map<String, Long> firstReceived = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > MAX_TRACKED;
        }
    };

    /**
     * When the deliveries of FIFO queues end, by queue and handle: SQS refuses a FIFO message's handle once its
     * visibility timeout ended, where the mailbox (which lets the most recent handle delete late) would not.
     */
    private final Map<String, Long> fifoVisibleUntil = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > MAX_TRACKED;
        }
    };

    /** Records when a FIFO delivery's visibility ends (received, or changed). */
    void fifoVisibleUntil(String queue, String handle, long visibleAtMillis) {
        synchronized (fifoVisibleUntil) {
            fifoVisibleUntil.put(queue + '\n' + handle, visibleAtMillis);
        }
    }

    /**
     * @return whether a FIFO delivery's visibility has ended, as far as this endpoint saw it (false when it did not
     *         see the delivery: another node's, or forgotten past {@value #MAX_TRACKED})
     */
    boolean fifoLapsed(String queue, String handle, long nowMillis) {
        synchronized (fifoVisibleUntil) {
            Long until = fifoVisibleUntil.get(queue + '\n' + handle);
            return until != null && until <= nowMillis;
        }
    }

    private void fifoForget(String queue, String handle) {
        synchronized (fifoVisibleUntil) {
            fifoVisibleUntil.remove(queue + '\n' + handle);
        }
    }

    private QueueState state(String queue) {
        return queues.computeIfAbsent(queue, q -> new QueueState());
    }

    /**
     * Records a delivery.
     *
     * @return when the message was first received, as far as this endpoint knows (now, if this is the first
     *         delivery or the first it saw)
     */
    long received(String queue, String messageId, String handle, long visibleAtMillis, long nowMillis) {
        QueueState s = state(queue);
        s.delayedUntil.remove(messageId);
        track(s.inFlightUntil, handle, visibleAtMillis, nowMillis);
        synchronized (firstReceived) {
            return firstReceived.computeIfAbsent(queue + '\n' + messageId, k -> nowMillis);
        }
    }

    void sentDelayed(String queue, String messageId, long dueMillis, long nowMillis) {
        track(state(queue).delayedUntil, messageId, dueMillis, nowMillis);
    }

    void deleted(String queue, String handle) {
        fifoForget(queue, handle);
        QueueState s = queues.get(queue);
        if (s != null) {
            s.inFlightUntil.remove(handle);
        }
    }

    void visibilityChanged(String queue, String handle, long visibleAtMillis, long nowMillis) {
        QueueState s = queues.get(queue);
        if (s == null) {
            return;
        }
        if (visibleAtMillis <= nowMillis) {
            s.inFlightUntil.remove(handle);
        } else {
            s.inFlightUntil.computeIfPresent(handle, (h, old) -> visibleAtMillis);
        }
    }

    /** Forgets a queue's messages: it was purged or deleted. */
    void forget(String queue) {
        queues.remove(queue);
        String prefix = queue + '\n';
        synchronized (firstReceived) {
            firstReceived.keySet().removeIf(k -> k.startsWith(prefix));
        }
        synchronized (fifoVisibleUntil) {
            fifoVisibleUntil.keySet().removeIf(k -> k.startsWith(prefix));
        }
    }

    /**
     * @param total the mailbox's count of every undeleted message
     * @return the count split as SQS reports it, the in-flight and delayed parts capped so the three add up to
     *         {@code total}
     */
    Counts counts(String queue, long total, long nowMillis) {
        QueueState s = queues.get(queue);
        if (s == null) {
            return new Counts(total, 0, 0);
        }
        expire(s.inFlightUntil, nowMillis);
        expire(s.delayedUntil, nowMillis);
        long notVisible = Math.min(total, s.inFlightUntil.size());
        long delayed = Math.min(total - notVisible, s.delayedUntil.size());
        return new Counts(total - notVisible - delayed, notVisible, delayed);
    }

    private static void track(Map<String, Long> map, String key, long untilMillis, long nowMillis) {
        if (untilMillis <= nowMillis) {
            return;
        }
        if (map.size() >= MAX_TRACKED) {
            expire(map, nowMillis);
            if (map.size() >= MAX_TRACKED) {
                return;
            }
        }
        map.put(key, untilMillis);
    }

    private static void expire(Map<String, Long> map, long nowMillis) {
        map.values().removeIf(until -> until <= nowMillis);
    }
}
