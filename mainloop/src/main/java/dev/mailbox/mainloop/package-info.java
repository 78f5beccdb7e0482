/**
 * Request/response over any {@link dev.mailbox.api.Mailbox}: {@link dev.mailbox.mainloop.MainLoop}
 * runs a handler for each {@link dev.mailbox.mainloop.MainLoopRequest} it receives and sends a
 * {@link dev.mailbox.mainloop.MainLoopResult} back; {@link dev.mailbox.mainloop.MainLoopClient} sends
 * requests and completes a future when the result arrives.
 *
 * <p>Delivery is at least once. The loop sends the result before it acknowledges the request, keeps
 * the request invisible while its handler runs, and remembers recently completed request ids so that a
 * redelivered request is answered again without running its handler twice.
 *
 * <p>Exceptions are unchecked and extend {@link dev.mailbox.api.MailboxException}. Types in this
 * package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.mainloop;

import org.jspecify.annotations.NullMarked;
