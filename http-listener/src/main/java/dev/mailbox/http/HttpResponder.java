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
}
