package dev.mailbox.coordination;

import dev.mailbox.api.MailboxException;

/**
 * A coordinator refused a request or could not be reached. {@link #reason()} says which; only
 * {@link Reason#UNAVAILABLE} is worth retrying as is.
 */
public class CoordinationException extends MailboxException {

    /** Why a request failed; one to one with the control plane's gRPC statuses. */
    public enum Reason {
        /** The request is malformed (INVALID_ARGUMENT); nothing changed. */
        INVALID_ARGUMENT,
        /** No lease for that mailbox (NOT_FOUND). */
        NOT_FOUND,
        /** Held by another runner, a stale lease id or epoch, or the wrong state (FAILED_PRECONDITION). */
        FAILED_PRECONDITION,
        /** What was to be created exists already, such as a namespace (ALREADY_EXISTS). */
        ALREADY_EXISTS,
        /** No coordinator answered in time, or none leads yet (UNAVAILABLE, DEADLINE_EXCEEDED). */
        UNAVAILABLE
    }

    private final Reason reason;

    /**
     * @param reason  why
     * @param message what, for people
     * @param cause   the transport's failure, if any
     */
    public CoordinationException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /**
     * @return why the request failed
     */
    public Reason reason() {
        return reason;
    }

    @Override
    public boolean isRetryable() {
        return reason == Reason.UNAVAILABLE;
    }
}
