/**
 * The HTTP(S) listener behind every HTTP edge of Mailbox's servers: the SQS endpoint, the metrics listener and
 * what later shares its port (health, console). {@link dev.mailbox.http.HttpListener} serves
 * {@link dev.mailbox.http.HttpHandler}s by path and bounds what any client can cost it: connections overall and
 * per client address, a deadline for a request's headers and one for its body, an idle timeout, a cap on a body's
 * size and a memory budget for the bodies being held ({@link dev.mailbox.http.BodyBudget}), a bounded pool of
 * worker threads, the same for plaintext and TLS ({@link dev.mailbox.http.HttpLimits}). A handler sees a request's
 * headers before its body is read, so it can refuse (an unauthenticated caller, say) without reading it.
 * Types in this package are non-null unless annotated otherwise; {@code internal} is not API.
 */
@NullMarked
package dev.mailbox.http;

import org.jspecify.annotations.NullMarked;
