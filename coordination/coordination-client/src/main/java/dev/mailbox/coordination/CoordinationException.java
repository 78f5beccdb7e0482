package dev.mailbox.coordination;

import dev.mailbox.api.MailboxException;
import org.jspecify.annotations.Nullable;

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
        UNAVAILABLE,
        /** The coordinator failed the request itself (INTERNAL, UNKNOWN): retrying as is will not help. */
        INTERNAL,
        /** The caller proved no identity the coordinator knows (UNAUTHENTICATED); nothing changed. */
        UNAUTHENTICATED,
        /** The caller may not do this (PERMISSION_DENIED); nothing changed. */
        PERMISSION_DENIED
    }

    private final Reason reason;

    /**
     * @param reason  why
     * @param message what, for people
     * @param cause   the transport's failure, if any
     */
    public CoordinationException(Reason reason, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /**
     * @return why the request failed
     */
    public Reason reason() {
        return reason;
    }

    /**
     * What an asynchronous call of this package failed with, as the exception its synchronous form would
     * have thrown.
     *
     * @param failure a future's failure (possibly wrapped in a {@link java.util.concurrent.CompletionException}
     *                or {@link java.util.concurrent.ExecutionException})
     * @return the {@link CoordinationException} it carries, or an UNAVAILABLE one wrapping it
     */
    public static CoordinationException of(@Nullable Throwable failure) {
        Throwable t = failure;
        while ((t instanceof java.util.concurrent.CompletionException
                || t instanceof java.util.concurrent.ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof CoordinationException c) {
            return c;
        }
        return new CoordinationException(Reason.UNAVAILABLE, String.valueOf(t), t);
    }

    /**
     * Waits for an asynchronous call of this package.
     *
     * @param future the call
     * @param <T>    its result
     * @return the result
     * @throws CoordinationException what the call failed with (UNAVAILABLE if the wait was interrupted)
     */
    public static <T> T await(java.util.concurrent.CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException(Reason.UNAVAILABLE, "interrupted", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw of(e);
        }
    }

    @Override
    public boolean isRetryable() {
        return reason == Reason.UNAVAILABLE;
    }
}
