package dev.mailbox.api;

/**
 * Thrown by a send when an encoded message (body plus attributes, counted as SQS counts them, see
 * {@link Limits#messageSize(int, java.util.Map)}) exceeds the mailbox's maximum message size. Nothing
 * is stored.
 */
public class MessageTooLargeException extends MailboxException {

    /** The refused message's size in bytes. */
    private final int size;
    /** The maximum size in bytes. */
    private final int limit;

    /**
     * @param mailbox the mailbox's name
     * @param size    the message's size in bytes
     * @param limit   the mailbox's maximum in bytes
     */
    public MessageTooLargeException(String mailbox, int size, int limit) {
        super("message of " + size + " bytes is larger than the " + limit
                + " bytes allowed by mailbox '" + mailbox + "' (body plus attributes)");
        this.size = size;
        this.limit = limit;
    }

    /** @return the refused message's size in bytes */
    public int size() {
        return size;
    }

    /** @return the maximum size in bytes */
    public int limit() {
        return limit;
    }
}
