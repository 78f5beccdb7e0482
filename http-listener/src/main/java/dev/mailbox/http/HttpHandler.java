package dev.mailbox.http;

import org.jspecify.annotations.Nullable;

/**
 * Serves the requests of one path (or every path) of an {@link HttpListener}, in two steps: {@link #admit} with
 * the headers, before anything of the body is read, then {@link #handle} with the whole request.
 */
public interface HttpHandler {

    /** Why the listener itself refused a request that {@link #admit} let through. */
    enum Refusal {
        /** The body is larger than {@link HttpLimits#maxBodyBytes()}: 413. */
        TOO_LARGE(413),
        /** The memory budget for bodies or the worker pool is full: 503, retry later. */
        BUSY(503),
        /** The body did not arrive within {@link HttpLimits#bodyTimeout()}: 408. */
        TOO_SLOW(408);

        private final int status;

        Refusal(int status) {
            this.status = status;
        }

        /** @return the HTTP status the listener answers with */
        public int status() {
            return status;
        }
    }

    /**
     * Decides from the request line and headers alone whether to read the body: authentication, method and path
     * checks belong here, so that a request refused costs no more than its headers. Runs on an I/O thread: it
     * must not block. The default lets every request through.
     *
     * @param head the request, without its body
     * @return null to read the body and {@link #handle} it, or the answer to send now without reading the body
     *         (the connection is then closed if the request has a body)
     */
    default @Nullable HttpResponse admit(HttpRequest head) {
        return null;
    }

    /**
     * Serves a request whose body has been read. Runs on one of the listener's worker threads
     * ({@link HttpLimits#workerThreads()}), so it may block; one that waits long (a long poll) should hand its wait
     * to threads of its own and return, answering later through the responder. An exception it throws is
     * answered with a 500 and logged.
     *
     * @param request   the request with its body
     * @param responder where the answer goes, once
     */
    void handle(HttpRequest request, HttpResponder responder);

    /**
     * The answer to a refusal the listener makes itself, in the handler's own format (an SQS error, say). The
     * connection is closed after it. The default is plain text.
     *
     * @param head    the request, without its body
     * @param refusal why
     * @param message what happened, for a person
     * @return the answer
     */
    default HttpResponse refusal(HttpRequest head, Refusal refusal, String message) {
        return HttpResponse.text(refusal.status(), message + "\n");
    }
}
