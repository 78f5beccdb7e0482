package dev.mailbox.coordination.wire;

import dev.mailbox.api.FencedException;
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
import org.jspecify.annotations.Nullable;

/**
 * The conventions of the {@code MailboxService} data plane that are not in its {@code .proto}: the
 * header that names a call's mailbox, the size and wait limits, and how mailbox errors cross it (a gRPC
 * status plus trailers that name the error, so a caller throws what a local mailbox would have thrown).
 * Both ends use this class: nodes to send errors ({@link #toStatus}), clients to read them
 * ({@link #toException}).
 */
public final class DataPlane {

    /** The principal a forwarding node calls on behalf of; believed only from callers with the node role. */
    public static final Metadata.Key<String> ON_BEHALF_OF = Metadata.Key.of("mailbox-on-behalf-of",
            Metadata.ASCII_STRING_MARSHALLER);
    /** The mailbox a call is for, sent as a header too so a node can pick the call's executor early. */
    public static final Metadata.Key<String> MAILBOX_HEADER = Metadata.Key.of("mailbox-id",
            Metadata.ASCII_STRING_MARSHALLER);
    /** Longest wait of one receive call; longer waits are looped by the caller. */
    public static final long MAX_WAIT_MILLIS = 20_000;
    /** Largest gRPC message either way: ten bodies of up to 1 MiB plus headers. */
    public static final int MAX_MESSAGE = 16 * 1024 * 1024;
    /** Longest request id a send may carry. */
    public static final int MAX_REQUEST_ID = 128;

    /** The error's kind. */
    public static final Metadata.Key<String> KIND = Metadata.Key.of("mailbox-error", Metadata.ASCII_STRING_MARSHALLER);
    /** Whether retrying may help. */
    public static final Metadata.Key<String> RETRYABLE = Metadata.Key.of("mailbox-retryable",
            Metadata.ASCII_STRING_MARSHALLER);
    /** Numbers some errors carry (size and limit, capacity). */
    public static final Metadata.Key<String> DETAIL = Metadata.Key.of("mailbox-detail", Metadata.ASCII_STRING_MARSHALLER);

    /** No node hosts the mailbox and no route names one: nothing happened. */
    public static final String NO_ROUTE = "no-route";
    /** The node serves as many waiting receives as it may: retry shortly. */
    public static final String BUSY = "busy";
    private static final String FULL = "full";
    private static final String TOO_LARGE = "too-large";
    private static final String STALE_HANDLE = "stale-handle";
    private static final String FENCED = "fenced";
    private static final String SERIALIZATION = "serialization";
    private static final String CLOSED = "closed";
    private static final String UNAVAILABLE = "unavailable";
    private static final String INVALID = "invalid";
    private static final String ERROR = "error";

    private DataPlane() {
    }

    /**
     * @param mailbox a mailbox id
     * @return whether it can travel as a header value (printable ASCII); other ids go without one
     */
    public static boolean headerSafe(String mailbox) {
        for (int i = 0; i < mailbox.length(); i++) {
            char c = mailbox.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
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
     * @param message what is wrong with the call
     * @return INVALID_ARGUMENT, read back as an {@link IllegalArgumentException}
     */
    public static StatusRuntimeException invalid(String message) {
        return error(INVALID, Status.INVALID_ARGUMENT, message, false, "");
    }

    /**
     * @param message why no node can serve the mailbox now
     * @return UNAVAILABLE, retryable, read back as a {@link MailboxUnavailableException}
     */
    public static StatusRuntimeException noRoute(String message) {
        return error(NO_ROUTE, Status.UNAVAILABLE, message, true, "");
    }

    /**
     * @param message why the node cannot take the call now
     * @return RESOURCE_EXHAUSTED, retryable, read back as a {@link MailboxUnavailableException}
     */
    public static StatusRuntimeException busy(String message) {
        return error(BUSY, Status.RESOURCE_EXHAUSTED, message, true, "");
    }

    /**
     * @param e what the hosted mailbox threw
     * @return it as a status
     */
    public static StatusRuntimeException toStatus(RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        if (e instanceof MailboxFullException f) {
            return error(FULL, Status.RESOURCE_EXHAUSTED, message, false, Long.toString(f.capacity()));
        } else if (e instanceof MessageTooLargeException t) {
            return error(TOO_LARGE, Status.INVALID_ARGUMENT, message, false, t.size() + "," + t.limit());
        } else if (e instanceof ReceiptHandleExpiredException) {
            return error(STALE_HANDLE, Status.FAILED_PRECONDITION, message, false, "");
        } else if (e instanceof FencedException f) {
            return error(FENCED, Status.FAILED_PRECONDITION, message, false, f.epoch() + "," + f.fence());
        } else if (e instanceof SerializationException) {
            return error(SERIALIZATION, Status.INVALID_ARGUMENT, message, false, "");
        } else if (e instanceof MailboxClosedException) {
            return error(CLOSED, Status.UNAVAILABLE, message, false, "");
        } else if (e instanceof MailboxUnavailableException u) {
            return error(UNAVAILABLE, Status.UNAVAILABLE, message, u.isRetryable(), "");
        } else if (e instanceof MailboxException m) {
            return error(ERROR, Status.INTERNAL, message, m.isRetryable(), "");
        } else if (e instanceof IllegalArgumentException) {
            return invalid(message);
        }
        return error(ERROR, Status.INTERNAL, e.getClass().getSimpleName() + ": " + message, false, "");
    }

    /**
     * @param e a failed data-plane call
     * @return the mailbox error a node named in its trailers, or null if the failure did not come from a node
     *         (the transport's own failure)
     */
    public static @Nullable String kind(StatusRuntimeException e) {
        Metadata trailers = e.getTrailers();
        return trailers == null ? null : trailers.get(KIND);
    }

    /**
     * Reads a failed call back as the exception the hosting mailbox threw.
     *
     * @param e       the failure
     * @param mailbox the mailbox's name, for messages
     * @param bodies  how many bodies the call carried (for {@link MailboxFullException})
     * @return the exception to throw; a transport failure is a {@link MailboxUnavailableException} that is
     *         retryable when the status says the call may succeed later
     */
    public static RuntimeException toException(StatusRuntimeException e, String mailbox, int bodies) {
        Metadata trailers = e.getTrailers();
        String kind = kind(e);
        String detail = trailers == null ? null : trailers.get(DETAIL);
        boolean retryable = trailers != null && "true".equals(trailers.get(RETRYABLE));
        String message = e.getStatus().getDescription() != null ? e.getStatus().getDescription() : e.toString();
        if (kind == null) {
            Status.Code code = e.getStatus().getCode();
            if (code == Status.Code.PERMISSION_DENIED || code == Status.Code.UNAUTHENTICATED) {
                // a refusal of who is calling: retrying as the same caller will not help
                return new dev.mailbox.api.MailboxAccessDeniedException("mailbox '" + mailbox + "': " + code + ": "
                        + message, e);
            }
            boolean transientFailure = code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED
                    || code == Status.Code.RESOURCE_EXHAUSTED || code == Status.Code.ABORTED;
            return new MailboxUnavailableException("mailbox '" + mailbox + "': node call failed: " + code + ": "
                    + message, transientFailure, e);
        }
        return switch (kind) {
            case FULL -> new MailboxFullException(mailbox, detail == null ? 0 : Long.parseLong(detail),
                    Math.max(1, bodies));
            case TOO_LARGE -> {
                String[] parts = detail == null ? new String[] {"0", "0"} : detail.split(",");
                yield new MessageTooLargeException(mailbox, Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
            }
            case STALE_HANDLE -> new ReceiptHandleExpiredException("", message);
            case FENCED -> {
                String[] parts = detail == null ? new String[] {"0", "0"} : detail.split(",");
                yield new FencedException(mailbox, Long.parseLong(parts[0]), Long.parseLong(parts[1]));
            }
            case SERIALIZATION -> new SerializationException(message, e);
            case INVALID -> new IllegalArgumentException(message, e);
            case CLOSED -> new MailboxUnavailableException("mailbox '" + mailbox + "' is closed on its node: "
                    + message, false, e);
            case NO_ROUTE, BUSY, UNAVAILABLE -> new MailboxUnavailableException(message, retryable, e);
            default -> new MailboxException(message, e);
        };
    }
}
