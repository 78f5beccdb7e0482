package dev.mailbox.mainloop;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer to one {@link MainLoopRequest}: a response, or an error, never both.
 *
 * @param requestId   the id of the request this answers
 * @param response    the handler's response, if it succeeded (may be null for a handler that returns
 *                    nothing)
 * @param error       why the request failed, or {@code null} if it succeeded
 * @param completedAt when the loop finished the request
 * @param <Res>       the response type
 */
public record MainLoopResult<Res>(String requestId, @Nullable Res response, @Nullable MainLoopError error,
                                  Instant completedAt) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if both a response and an error are given
     */
    public MainLoopResult {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(completedAt, "completedAt");
        if (response != null && error != null) {
            throw new IllegalArgumentException("a result has a response or an error, not both");
        }
    }

    /**
     * @param requestId   the request's id
     * @param response    the response
     * @param completedAt when it completed
     * @param <Res>       the response type
     * @return a successful result
     */
    public static <Res> MainLoopResult<Res> success(String requestId, @Nullable Res response, Instant completedAt) {
        return new MainLoopResult<>(requestId, response, null, completedAt);
    }

    /**
     * @param requestId   the request's id
     * @param error       why it failed
     * @param completedAt when it completed
     * @param <Res>       the response type
     * @return a failed result
     */
    public static <Res> MainLoopResult<Res> failure(String requestId, MainLoopError error, Instant completedAt) {
        return new MainLoopResult<>(requestId, null, Objects.requireNonNull(error, "error"), completedAt);
    }

    /**
     * @return whether the request succeeded (named so that JSON mappers do not take it for a property)
     */
    public boolean ok() {
        return error == null;
    }
}
