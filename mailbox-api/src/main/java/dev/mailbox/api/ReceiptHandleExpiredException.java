package dev.mailbox.api;

/**
 * Thrown by {@link Message#acknowledge()}, {@link Message#nack(java.time.Duration)} and
 * {@link Message#extendVisibility(java.time.Duration)} when the message's receipt handle is no longer
 * the current one: the message was redelivered, its visibility timeout lapsed, it was nacked, or it
 * was already deleted (acknowledged, purged or dead-lettered).
 *
 * <p>A stale handle never changes anything: the message keeps whatever state it is in. Code that
 * sees this exception has lost ownership of the delivery and must assume another consumer may process
 * (or has processed) the message.
 */
public class ReceiptHandleExpiredException extends MailboxException {

    /** The refused handle. */
    private final String receiptHandle;

    /**
     * @param receiptHandle the stale handle
     * @param message       why the handle is stale, naming the mailbox
     */
    public ReceiptHandleExpiredException(String receiptHandle, String message) {
        super(message);
        this.receiptHandle = receiptHandle;
    }

    /** @return the receipt handle that was refused */
    public String receiptHandle() {
        return receiptHandle;
    }
}
