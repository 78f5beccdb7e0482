package dev.mailbox.api;

import org.jspecify.annotations.Nullable;

/**
 * The backend knows who is calling and refused the call: the caller may not do this to this mailbox (for
 * example a mailbox node whose access rules grant the caller no such right in the mailbox's namespace), or
 * it could not tell who is calling. Nothing changed. Retrying as the same caller does not help, so
 * {@link #isRetryable()} is false; a caller that adapts (another identity, an operator granting the right)
 * may tell this refusal from other failures by its type.
 */
public class MailboxAccessDeniedException extends MailboxException {

    /**
     * @param message what was refused, naming the mailbox and, where known, the caller
     * @param cause   the underlying refusal, if any
     */
    public MailboxAccessDeniedException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
