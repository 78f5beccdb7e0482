package dev.mailbox.api.spi;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A mailbox whose long-polling receive can wait without holding a thread: a server that keeps many
 * receives waiting at once (a mailbox node, an SQS endpoint) parks them here instead of on a thread
 * each. Backends implement it where they can (in memory, Redis); {@link #of} finds it, also behind a
 * {@link FencedView}.
 *
 * @param <T> the body type
 */
public interface AsyncReceiver<T> {

    /**
     * Receives as {@link Mailbox#receive(ReceiveOptions)} does, but returns at once. The future completes
     * with the messages as soon as there are some, with an empty list when the wait ends (or the mailbox
     * closes), or exceptionally with what {@code receive} would have thrown (a bad argument may also be
     * thrown at once). Waiting holds no thread; the future may complete on a thread of the mailbox's, so
     * what runs on its completion must not block.
     *
     * <p>Cancelling the future ends the wait. Messages taken for a future that was cancelled meanwhile are
     * given back at once (nacked, which counts their delivery), never left invisible.
     *
     * @param options how to receive
     * @return the messages
     */
    CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options);

    /**
     * @param mailbox a mailbox, or a fenced view of one
     * @param <T>     the body type
     * @return its asynchronous receive, or null if its receives can only wait on a thread
     */
    @SuppressWarnings("unchecked")
    static <T> @Nullable AsyncReceiver<T> of(Mailbox<T> mailbox) {
        if (mailbox instanceof FencedView<T> view) {
            return view.asyncReceiver();
        }
        return mailbox instanceof AsyncReceiver<?> a ? (AsyncReceiver<T>) a : null;
    }
}
