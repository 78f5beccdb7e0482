package dev.mailbox.sqs;

import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.spi.Delivery;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** One SQS delivery: the receipt handle SQS issued for it, and the epoch of the view it came through. */
final class SqsMessage<T> extends Delivery<T> {
    private final SqsMailbox<T> mailbox;
    private final State state;
    private final long epoch;

    SqsMessage(SqsMailbox<T> mailbox, String id, String receiptHandle, int deliveryCount, Instant enqueuedAt,
               Map<String, String> attributes, Object body, @Nullable String groupId, @Nullable String sequenceNumber,
               State state, long epoch) {
        super(mailbox.name(), id, receiptHandle, deliveryCount, enqueuedAt, attributes, body, groupId, sequenceNumber);
        this.mailbox = mailbox;
        this.state = state;
        this.epoch = epoch;
    }

    @Override
    public void acknowledge() {
        // a lapsed delivery is still SQS's to delete where it allows late acknowledgement (standard queues)
        mailbox.acknowledge(receiptHandle(), state, !mailbox.capabilities().lateAcknowledge(), epoch);
    }

    @Override
    public void nack(Duration visibilityTimeout) {
        mailbox.nack(receiptHandle(), visibilityTimeout, state, epoch);
    }

    @Override
    public void extendVisibility(Duration timeout) {
        mailbox.extendVisibility(receiptHandle(), timeout, state, epoch);
    }

    boolean belongsTo(SqsMailbox<?> m) {
        return mailbox == m;
    }

    State state() {
        return state;
    }

    /** @return the epoch of the fenced view this message was received through, 0 if none */
    long epoch() {
        return epoch;
    }

    /**
     * What the mailbox object that received a delivery knows of it. SQS keeps a handle usable after
     * ChangeMessageVisibility and after the visibility lapses (ElasticMQ even revives a lapsed one with
     * ChangeMessageVisibility, and SQS deletes a lapsed message on DeleteMessage), so the object enforces
     * the contract's rule itself. The deadline is counted, with the un-rounded timeout, from shortly before
     * the receive's response (never before its request left), which is when SQS hands messages out; after
     * an extend through this object, from before the extend request left. An extend or nack through another
     * object is not seen here. Guarded by its own monitor, which is held across the SQS call so that calls
     * on one delivery take turns.
     */
    static final class State {
        private final String messageId;
        private long deadlineNanos;
        private @Nullable String finished;

        State(String messageId, long deadlineNanos) {
            this.messageId = messageId;
            this.deadlineNanos = deadlineNanos;
        }

        /**
         * @param deadline whether to refuse a delivery whose visibility, as this object last set it, has ended
         *                 too, or only one this object acknowledged or nacked
         * @throws ReceiptHandleExpiredException if this delivery is finished (or its visibility has ended)
         */
        void requireCurrent(String receiptHandle, String mailbox, boolean deadline) {
            String why = finished != null ? "this delivery was already " + finished
                    : deadline && System.nanoTime() - deadlineNanos >= 0 ? "its visibility timeout ended" : null;
            if (why != null) {
                throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle + " of message "
                        + messageId + " in mailbox '" + mailbox + "' is stale: " + why);
            }
        }

        /** @return whether this object has not acknowledged or nacked the delivery (its deadline may have passed) */
        boolean unfinished() {
            return finished == null;
        }

        /** @return whether the delivery is still current (see {@link #requireCurrent}) */
        boolean current() {
            return finished == null && System.nanoTime() - deadlineNanos < 0;
        }

        void finish(String how) {
            finished = how;
        }

        void extendedAt(long startNanos, Duration timeout) {
            deadlineNanos = startNanos + timeout.toNanos();
        }
    }
}
