package dev.mailbox.sqs;

import dev.mailbox.api.Limits;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.spi.Delivery;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** One SQS delivery: the receipt handle SQS issued for it. */
final class SqsMessage<T> extends Delivery<T> {
    private final SqsMailbox<T> mailbox;
    // SQS keeps a handle usable after ChangeMessageVisibility and after the visibility lapses; this
    // delivery enforces the contract's rule itself. The deadline is counted, with the un-rounded
    // timeout, from shortly before the receive's response (never before its request left), which is
    // when SQS hands messages out; after an extend, from before the extend request left.
    private long deadlineNanos;
    private @Nullable String finished;

    SqsMessage(SqsMailbox<T> mailbox, String id, String receiptHandle, int deliveryCount, Instant enqueuedAt,
               Map<String, String> attributes, Object body, long deadlineNanos) {
        super(mailbox.name(), id, receiptHandle, deliveryCount, enqueuedAt, attributes, body);
        this.mailbox = mailbox;
        this.deadlineNanos = deadlineNanos;
    }

    @Override
    public synchronized void acknowledge() {
        requireCurrent();
        mailbox.delete(this);
        finished = "acknowledged";
    }

    @Override
    public synchronized void nack(Duration visibilityTimeout) {
        Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout");
        requireCurrent();
        mailbox.changeVisibility(this, visibilityTimeout, "nack");
        finished = "nacked";
    }

    @Override
    public synchronized void extendVisibility(Duration timeout) {
        Limits.requireVisibilityTimeout(timeout, "timeout");
        requireCurrent();
        long start = System.nanoTime();
        mailbox.changeVisibility(this, timeout, "extendVisibility");
        deadlineNanos = start + timeout.toNanos();
    }

    private void requireCurrent() {
        String why = finished != null ? "this delivery was already " + finished
                : System.nanoTime() - deadlineNanos >= 0 ? "its visibility timeout ended" : null;
        if (why != null) {
            throw new ReceiptHandleExpiredException(receiptHandle(), "receipt handle " + receiptHandle() + " of message "
                    + id() + " in mailbox '" + mailbox.name() + "' is stale: " + why);
        }
    }

    boolean belongsTo(SqsMailbox<?> m) {
        return mailbox == m;
    }
}
