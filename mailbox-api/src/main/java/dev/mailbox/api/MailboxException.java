package dev.mailbox.api;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception a mailbox throws, apart from the standard argument exceptions
 * ({@link IllegalArgumentException} for out-of-range arguments, {@link NullPointerException} for
 * missing ones).
 *
 * <p>All mailbox exceptions are unchecked. {@link #isRetryable()} tells whether repeating the same
 * call later may succeed; only {@link MailboxUnavailableException} can answer {@code true}.
 */
public class MailboxException extends RuntimeException {

    /**
     * @param message what went wrong, naming the mailbox where one is involved
     */
    public MailboxException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong, naming the mailbox where one is involved
     * @param cause   the underlying failure, if any
     */
    public MailboxException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /**
     * Whether repeating the failed call later may succeed. The default is {@code false}: the call was
     * refused for a reason that will not go away by itself.
     *
     * @return {@code true} if a retry may help
     */
    public boolean isRetryable() {
        return false;
    }
}
