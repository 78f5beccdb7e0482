package dev.mailbox.sqs;

import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxUnavailableException;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;

/**
 * The send deduplication ids one {@link SqsMailbox} object on a standard queue has used in the last
 * {@link Limits#DEDUPLICATION_WINDOW}, with the message id of each one's first send. Standard queues
 * have no deduplication of their own, so this is all there is: it lives as long as the object.
 *
 * <p>An id is claimed before its send goes out, so two concurrent sends with one id store one message:
 * the second waits for the first's message id. A send that fails releases its claim, and a send waiting
 * on it then claims the id itself, so a failure never makes a retry look like a duplicate.
 *
 * <p>Bounded: past {@link #MAX_IDS} ids the oldest is forgotten early, so a retry of it would be stored
 * again. Thread-safe.
 */
final class RecentSends {

    /** The most ids remembered; 100,000 ids of up to 130 characters are a few tens of MB at worst. */
    static final int MAX_IDS = 100_000;
    private static final long WINDOW_NANOS = Limits.DEDUPLICATION_WINDOW.toNanos();

    /** The first send of one id: its message id once stored, and until when it counts. */
    static final class Send {
        private final CompletableFuture<String> messageId = new CompletableFuture<>();
        /** Set when the send succeeds; until then the id is in flight and never expires. */
        private volatile long expiresAt;
        private volatile boolean stored;

        private boolean expired(long now) {
            return stored && now - expiresAt >= 0;
        }
    }

    /** The outcome of {@link #claim}: this caller must send, or another send already has the id. */
    record Claim(Send send, boolean mine) {
    }

    private final LongSupplier nanoTime;
    private final LinkedHashMap<String, Send> sends = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Send> eldest) {
            return size() > MAX_IDS;
        }
    };

    /** @param nanoTime the clock, {@code System::nanoTime} except in tests */
    RecentSends(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /**
     * @param id the full deduplication id (with {@code "/" + i} in a batch)
     * @return a claim the caller must {@link #stored store} or {@link #failed release} if it is
     *         {@link Claim#mine() its own}, otherwise the first send, to {@link #await}
     */
    synchronized Claim claim(String id) {
        long now = nanoTime.getAsLong();
        forgetExpired(now);
        Send first = sends.get(id);
        if (first != null && !first.expired(now)) {
            return new Claim(first, false);
        }
        Send mine = new Send();
        // re-insert so the map stays in claim order, which forgetExpired relies on
        sends.remove(id);
        sends.put(id, mine);
        return new Claim(mine, true);
    }

    /** The claimed send stored message {@code messageId}: the id counts from now for the window. */
    void stored(Send send, String messageId) {
        send.expiresAt = nanoTime.getAsLong() + WINDOW_NANOS;
        send.stored = true;
        send.messageId.complete(messageId);
    }

    /** The claimed send failed: forget the id, so that a retry is stored, and wake anyone waiting on it. */
    void failed(String id, Send send, RuntimeException cause) {
        synchronized (this) {
            sends.remove(id, send);
        }
        send.messageId.completeExceptionally(cause);
    }

    /**
     * @return the message id of the first send, or null if that send failed (claim the id again)
     * @throws MailboxUnavailableException if interrupted while the first send is in flight
     */
    static @org.jspecify.annotations.Nullable String await(Send first, String mailbox) {
        try {
            return first.messageId.get();
        } catch (ExecutionException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MailboxUnavailableException("interrupted while waiting for a send with the same deduplication id"
                    + " to '" + mailbox + "'", false, e);
        }
    }

    private void forgetExpired(long now) {
        // claims are kept in claim order and every window has the same length, so expired ids gather at
        // the head; one still in flight (or stored late) stops the sweep early, which only delays forgetting
        for (Iterator<Send> it = sends.values().iterator(); it.hasNext(); ) {
            if (!it.next().expired(now)) {
                return;
            }
            it.remove();
        }
    }
}
