package dev.mailbox.coordination.internal;

import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.SerializationException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * How mailbox errors cross the data plane: a gRPC status plus trailers that name the error, so the
 * caller's RemoteMailbox throws what a local mailbox would have thrown.
 */
public final class DataErrors {

    /** The error's kind. */
    public static final Metadata.Key<String> KIND = Metadata.Key.of("mailbox-error", Metadata.ASCII_STRING_MARSHALLER);
    /** Whether retrying may help. */
    public static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("mailbox-retryable",
            Metadata.ASCII_STRING_MARSHALLER);
    /** Numbers some errors carry (size and limit, capacity and needed). */
    public static final Metadata.Key<String> DETAIL = Metadata.Key.of("mailbox-detail", Metadata.ASCII_STRING_MARSHALLER);

    /** No node hosts the mailbox and no route names one: nothing happened. */
    public static final String NO_ROUTE = "no-route";

    private DataErrors() {
    }

    /**
     * @param kind      the kind
     * @param status    the gRPC status
     * @param message   what went wrong
     * @param retryable whether retrying may help
     * @param detail    numbers, or ""
     * @return the exception to send
     */
    public static StatusRuntimeException error(String kind, Status status, String message, boolean retryable,
                                               String detail) {
        Metadata trailers = new Metadata();
        trailers.put(KIND, kind);
        trailers.put(RETRYABLE, Boolean.toString(retryable));
        if (!detail.isEmpty()) {
            trailers.put(DETAIL, detail);
        }
        return status.withDescription(message).asRuntimeException(trailers);
    }

    /**
     * @param e what the hosted mailbox threw
     * @return it as a status
     */
    public static StatusRuntimeException toStatus(RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        if (e instanceof MailboxFullException f) {
            return error("full", Status.RESOURCE_EXHAUSTED, message, false, Long.toString(f.capacity()));
        } else if (e instanceof MessageTooLargeException t) {
            return error("too-large", Status.INVALID_ARGUMENT, message, false, t.size() + "," + t.limit());
        } else if (e instanceof ReceiptHandleExpiredException h) {
            return error("stale-handle", Status.FAILED_PRECONDITION, message, false, "");
        } else if (e instanceof SerializationException) {
            return error("serialization", Status.INVALID_ARGUMENT, message, false, "");
        } else if (e instanceof MailboxClosedException) {
            return error("closed", Status.UNAVAILABLE, message, false, "");
        } else if (e instanceof MailboxUnavailableException u) {
            return error("unavailable", Status.UNAVAILABLE, message, u.isRetryable(), "");
        } else if (e instanceof MailboxException m) {
            return error("error", Status.INTERNAL, message, m.isRetryable(), "");
        } else if (e instanceof IllegalArgumentException) {
            return error("invalid", Status.INVALID_ARGUMENT, message, false, "");
        }
        return error("error", Status.INTERNAL, e.getClass().getSimpleName() + ": " + message, false, "");
    }
}
