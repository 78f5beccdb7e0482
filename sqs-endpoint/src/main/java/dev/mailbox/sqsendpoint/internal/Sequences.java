package dev.mailbox.sqsendpoint.internal;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The SequenceNumbers of FIFO messages: given when the message is sent (SendMessage answers with it), kept with the
 * message as its system attribute, and returned by ReceiveMessage. A number is the send's time in milliseconds
 * times a million (room for a counter), and more than the last one this endpoint gave: so numbers grow within every group
 * sent through one endpoint, and across endpoints as far as their clocks agree. Twenty decimal digits, as SQS's,
 * so their text order is their order.
 *
 * <p>A duplicate send (the mailbox's deduplication returned an id it had stored before) is answered with the first
 * send's number where this endpoint remembers it (the last {@value #REMEMBERED} sends).
 */
final class Sequences {

    static final int REMEMBERED = 100_000;

    private final Clock clock;
    private final AtomicLong last = new AtomicLong();
    private final Map<String, String> recent = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > REMEMBERED;
        }
    };

    Sequences(Clock clock) {
        this.clock = clock;
    }

    /** @return a new sequence number, larger than every one this endpoint gave before */
    String next() {
        long floor = clock.millis() * 1_000_000L;
        long n = last.updateAndGet(prev -> Math.max(prev + 1, floor));
        return String.format("%020d", n);
    }

    /**
     * @param queue     the queue
     * @param messageId the id the mailbox answered the send with
     * @param given     the number this send was given
     * @return the number to answer with: the first send's, for a duplicate this endpoint saw the first of
     */
    String settled(String queue, String messageId, String given) {
        synchronized (recent) {
            String first = recent.putIfAbsent(queue + '\n' + messageId, given);
            return first != null ? first : given;
        }
    }
}
