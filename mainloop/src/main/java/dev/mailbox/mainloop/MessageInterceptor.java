package dev.mailbox.mainloop;

import dev.mailbox.api.Message;

/**
 * Runs around the work done for one received message: by a {@link MainLoop}, for each request (decode it, run
 * the handler, send the result, settle the request); by a {@link MainLoopClient}, for each result (decode it,
 * complete the call it answers). It lets a module this one does not depend on (tracing, such as
 * {@code mailbox-opentelemetry}, or logging with a message's correlation id) run that work in a context of its
 * own, taken from the message: the trace its sender started, for example, so that the handler's work and the
 * result it sends continue that trace.
 *
 * <p>An interceptor must run {@code work} exactly once, on the calling thread, and let whatever it throws
 * propagate. A request whose work was not run is neither answered nor acknowledged, and comes back after its
 * visibility timeout; a result whose work was not run leaves its call waiting until it times out. It is called
 * from the loop's or client's own threads, several at once where the loop has several workers.
 */
@FunctionalInterface
public interface MessageInterceptor {

    /** Runs the work as it is: the default of {@link MainLoop} and {@link MainLoopClient}. */
    MessageInterceptor NONE = (mailbox, message, work) -> work.run();

    /**
     * @param mailbox the name of the mailbox the message was received from
     * @param message the message as the mailbox returned it; its body has not been decoded yet (and
     *                {@link Message#body()} may throw)
     * @param work    the work to run for it, once, on this thread
     */
    void intercept(String mailbox, Message<?> message, Runnable work);
}
