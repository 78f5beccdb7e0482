package dev.mailbox.mainloop;

import java.util.Objects;

/**
 * Why a request failed, in a form every language can read: a type and a message, never a serialized
 * exception. Handler exceptions become an error whose type is the exception's class name; the loop's
 * own failures use the {@code mainloop.*} types below.
 *
 * @param type    a stable name for the kind of failure
 * @param message a human-readable explanation (may be empty)
 */
public record MainLoopError(String type, String message) {

    /** The request's deadline (or its budget) ran out before it was answered. */
    public static final String DEADLINE_EXCEEDED = "mainloop.DeadlineExceeded";
    /** The request was delivered more times than the retry policy allows. */
    public static final String DELIVERY_LIMIT_EXCEEDED = "mainloop.DeliveryLimitExceeded";
    /** The request names a reply-to mailbox the loop cannot open. */
    public static final String NO_REPLY_ROUTE = "mainloop.NoReplyRoute";
    /**
     * The handler's result could never be sent to the reply-to mailbox: it is too large for that mailbox, or
     * the mailbox's codec cannot encode it. The caller is sent this error in its place, and the request is
     * dead-lettered, rather than redelivered to fail the same way again.
     */
    public static final String RESULT_REJECTED = "mainloop.ResultRejected";
    /**
     * The handler's result could not be sent to the reply-to mailbox on any delivery the retry policy allows
     * (each delivery tries a few times): the request is dead-lettered with this error, rather than given back
     * again and again for as long as the loop remembers the result. The handler ran; the loop still remembers
     * its result, so a resend of the request is answered with it.
     */
    public static final String REPLY_FAILED = "mainloop.ReplyFailed";
    /** The request's body could not be decoded. */
    public static final String UNDECODABLE = "mainloop.Undecodable";

    /**
     * Checks the fields.
     */
    public MainLoopError {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(message, "message");
        if (type.isBlank()) {
            throw new IllegalArgumentException("type must not be blank");
        }
    }

    /**
     * The portable form of an exception: its class name and message.
     *
     * @param error the exception
     * @return the error
     */
    public static MainLoopError of(Throwable error) {
        String message = error.getMessage();
        return new MainLoopError(error.getClass().getName(), message == null ? "" : message);
    }
}
