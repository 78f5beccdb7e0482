package dev.mailbox.api;

/**
 * Thrown by a send when the mailbox has a configured capacity and the message (or batch) does not
 * fit. Nothing of the refused send is stored. Not retryable by itself: space appears only when
 * consumers acknowledge messages, so callers that want to wait should back off explicitly.
 */
public class MailboxFullException extends MailboxException {

    /** The capacity of the mailbox that refused the send. */
    private final long capacity;

    /**
     * @param mailbox  the mailbox's name
     * @param capacity its configured capacity
     * @param needed   how many messages the refused send wanted to add
     */
    public MailboxFullException(String mailbox, long capacity, int needed) {
        super("mailbox '" + mailbox + "' is full: capacity " + capacity + ", cannot add " + needed
                + (needed == 1 ? " message" : " messages"));
        this.capacity = capacity;
    }

    /** @return the capacity of the mailbox that refused the send */
    public long capacity() {
        return capacity;
    }
}
