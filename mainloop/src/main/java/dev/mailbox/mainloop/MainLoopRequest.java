package dev.mailbox.mainloop;

import dev.mailbox.api.Limits;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One request to a {@link MainLoop}: what to run and where to answer.
 *
 * <p>The request id identifies the work, not the delivery: a request sent twice with the same id is
 * run once by a loop that still remembers it (see {@link MainLoop.Builder#rememberCompleted}). The
 * deadline is absolute; the budget is the longest the handler may run once it starts. A loop that
 * receives a request past its deadline answers with a {@link MainLoopError#DEADLINE_EXCEEDED} error
 * without running the handler, and interrupts a handler still running when the deadline or the budget
 * runs out.
 *
 * <p>The key, when given, says which requests must be handled in order: {@link MainLoopClient} sends a request with
 * a key under that key as its message group ({@link dev.mailbox.api.SendOptions#withGroupId}). On a FIFO request
 * mailbox the runners then handle each key's requests in send order, one at a time, and different keys at once
 * (see {@link MainLoop}, "Keys"); every request sent to a FIFO mailbox needs one. On a standard mailbox the key
 * names a tenant for fairness, where the mailbox is fair, and promises no order.
 *
 * @param requestId unique id of this request, never blank
 * @param body      the caller's request
 * @param createdAt when the caller made the request
 * @param deadline  when the answer stops being useful, or {@code null} for never
 * @param budget    the longest the handler may run, or {@code null} for no limit
 * @param replyTo   the name of the mailbox to answer in, or {@code null} for the loop's default
 * @param key       the key whose requests are handled in order (a message group id: 1 to 128 characters of A-Z,
 *                  a-z, 0-9 and ASCII punctuation), or {@code null} for none
 * @param <Req>     the request body type
 */
public record MainLoopRequest<Req>(String requestId, Req body, Instant createdAt, @Nullable Instant deadline,
                                   @Nullable Duration budget, @Nullable String replyTo, @Nullable String key) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if the id or reply-to is blank, the budget is not positive or the key breaks
     *                                  the message group id rule
     */
    public MainLoopRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(createdAt, "createdAt");
        if (requestId.isBlank()) {
            throw new IllegalArgumentException("requestId must not be blank");
        }
        if (budget != null && (budget.isNegative() || budget.isZero())) {
            throw new IllegalArgumentException("budget must be positive, was " + budget);
        }
        if (replyTo != null && replyTo.isBlank()) {
            throw new IllegalArgumentException("replyTo must not be blank; use null for the loop's default");
        }
        if (key != null) {
            try {
                Limits.requireGroupId(key);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("request key: " + e.getMessage(), e);
            }
        }
    }

    /**
     * A request without a key (the record as it was before keys).
     *
     * @param requestId unique id of this request, never blank
     * @param body      the caller's request
     * @param createdAt when the caller made the request
     * @param deadline  when the answer stops being useful, or {@code null} for never
     * @param budget    the longest the handler may run, or {@code null} for no limit
     * @param replyTo   the name of the mailbox to answer in, or {@code null} for the loop's default
     * @throws IllegalArgumentException as the canonical constructor
     */
    public MainLoopRequest(String requestId, Req body, Instant createdAt, @Nullable Instant deadline,
                           @Nullable Duration budget, @Nullable String replyTo) {
        this(requestId, body, createdAt, deadline, budget, replyTo, null);
    }

    /**
     * A request with a random id, created now, with no deadline, budget or reply-to.
     *
     * @param body  the request body
     * @param <Req> the body type
     * @return the request
     */
    public static <Req> MainLoopRequest<Req> of(Req body) {
        return new MainLoopRequest<>(UUID.randomUUID().toString(), body, Instant.now(), null, null, null, null);
    }

    /**
     * @param requestId the id to use
     * @return a copy with this id
     */
    public MainLoopRequest<Req> withRequestId(String requestId) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo, key);
    }

    /**
     * @param deadline when the answer stops being useful, or {@code null} for never
     * @return a copy with this deadline
     */
    public MainLoopRequest<Req> withDeadline(@Nullable Instant deadline) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo, key);
    }

    /**
     * @param budget the longest the handler may run, or {@code null} for no limit
     * @return a copy with this budget
     */
    public MainLoopRequest<Req> withBudget(@Nullable Duration budget) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo, key);
    }

    /**
     * @param replyTo the name of the mailbox to answer in, or {@code null} for the loop's default
     * @return a copy with this reply-to
     */
    public MainLoopRequest<Req> withReplyTo(@Nullable String replyTo) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo, key);
    }

    /**
     * @param key the key whose requests are handled in order (see the class comment), or {@code null} for none
     * @return a copy with this key
     * @throws IllegalArgumentException if the key breaks the message group id rule
     */
    public MainLoopRequest<Req> withKey(@Nullable String key) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo, key);
    }
}
