package dev.mailbox.api;

/**
 * Thrown by any operation on a mailbox after {@link Mailbox#close()}, including acknowledging a message
 * received from it. Never retryable.
 */
public class MailboxClosedException extends MailboxUnavailableException {

    /**
     * @param mailbox the closed mailbox's name
     */
    public MailboxClosedException(String mailbox) {
        super("mailbox '" + mailbox + "' is closed", false, null);
    }
}
