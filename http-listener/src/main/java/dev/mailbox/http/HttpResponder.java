package dev.mailbox.http;

/**
 * Sends the one answer to a request. May be called from any thread, now or later (a long poll answers when it
 * ends); calls after the first are ignored. A handler that never calls it holds the request's connection until
 * the client gives up: every handler answers every request, errors included.
 */
@FunctionalInterface
public interface HttpResponder {

    /** @param response the answer */
    void respond(HttpResponse response);

    /**
     * Asks to be told if the client goes away (closes or resets its connection) while the handler works, before
     * the answer: a handler that waits (a long poll) then stops waiting, and takes nothing for a client that is no
     * longer there. The listener looks at a connection whose request is being handled about once a second. The
     * action runs at most once, on one of the listener's threads, and must not block; if the client has gone
     * already it runs at once. The handler should still {@link #respond} (the answer is dropped). The default does
     * nothing: a responder that cannot tell never calls it.
     *
     * @param action what to do when the client has gone
     */
    default void onClientGone(Runnable action) {
    }
}
