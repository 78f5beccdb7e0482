package dev.mailbox.mainloop;

import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The work a {@link MainLoop} does for each request. Implement it as a lambda or as a class of its
 * own; a handler may be called from several threads at once (see {@link MainLoop.Builder#concurrency}).
 *
 * <p>Returning completes the request with that response. Throwing fails it: the loop's
 * {@link RetryPolicy} decides whether the request is tried again later or answered with the error.
 * A handler is interrupted when the request's deadline or budget runs out, or when the loop shuts down
 * and its grace period ends; it should then stop and throw.
 *
 * @param <Req> the request body type
 * @param <Res> the response type
 */
@FunctionalInterface
public interface RequestHandler<Req, Res> {

    /**
     * Runs one request.
     *
     * @param request the request, with its id, deadline and budget
     * @return the response
     * @throws Exception to fail the request
     */
    @Nullable Res handle(MainLoopRequest<Req> request) throws Exception;

    /**
     * A handler that needs only the request's body: {@code RequestHandler.ofBody(this::price)}.
     *
     * @param function the work to do with each body
     * @param <Req>    the request body type
     * @param <Res>    the response type
     * @return the handler
     */
    static <Req, Res> RequestHandler<Req, Res> ofBody(Function<? super Req, ? extends Res> function) {
        Objects.requireNonNull(function, "function");
        return request -> function.apply(request.body());
    }
}
