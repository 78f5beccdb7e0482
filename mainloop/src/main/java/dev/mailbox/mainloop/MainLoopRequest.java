package dev.mailbox.mainloop;

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
 * @param requestId unique id of this request, never blank
 * @param body      the caller's request
 * @param createdAt when the caller made the request
 * @param deadline  when the answer stops being useful, or {@code null} for never
 * @param budget    the longest the handler may run, or {@code null} for no limit
 * @param replyTo   the name of the mailbox to answer in, or {@code null} for the loop's default
 * @param <Req>     the request body type
 */
public record MainLoopRequest<Req>(String requestId, Req body, Instant createdAt, @Nullable Instant deadline,
                                   @Nullable Duration budget, @Nullable String replyTo) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if the id or reply-to is blank or the budget is not positive
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
    }

    /**
     * A request with a random id, created now, with no deadline, budget or reply-to.
     *
     * @param body  the request body
     * @param <Req> the body type
     * @return the request
     */
    public static <Req> MainLoopRequest<Req> of(Req body) {
        return new MainLoopRequest<>(UUID.randomUUID().toString(), body, Instant.now(), null, null, null);
    }

    /**
     * @param requestId the id to use
     * @return a copy with this id
     */
    public MainLoopRequest<Req> withRequestId(String requestId) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo);
    }

    /**
     * @param deadline when the answer stops being useful, or {@code null} for never
     * @return a copy with this deadline
     */
    public MainLoopRequest<Req> withDeadline(@Nullable Instant deadline) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo);
    }

    /**
     * @param budget the longest the handler may run, or {@code null} for no limit
     * @return a copy with this budget
     */
    public MainLoopRequest<Req> withBudget(@Nullable Duration budget) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo);
    }

    /**
     * @param replyTo the name of the mailbox to answer in, or {@code null} for the loop's default
     * @return a copy with this reply-to
     */
    public MainLoopRequest<Req> withReplyTo(@Nullable String replyTo) {
        return new MainLoopRequest<>(requestId, body, createdAt, deadline, budget, replyTo);
    }
}
