package dev.mailbox.api;

import org.jspecify.annotations.Nullable;

/**
 * The backend could not be reached or refused to serve the call (connection lost, throttled, server
 * error, mailbox closed). {@link #isRetryable()} says whether the same call may succeed later; when a
 * send fails this way the caller cannot always know whether the message was stored, so retried sends
 * may produce duplicates (delivery is at least once).
 */
public class MailboxUnavailableException extends MailboxException {

    /** Whether a retry may help. */
    private final boolean retryable;

    /**
     * @param message   what failed, naming the mailbox
     * @param retryable whether a later retry may succeed
     * @param cause     the underlying failure, if any
     */
    public MailboxUnavailableException(String message, boolean retryable, @Nullable Throwable cause) {
        super(message, cause);
        this.retryable = retryable;
    }

    @Override
    public boolean isRetryable() {
        return retryable;
    }
}
