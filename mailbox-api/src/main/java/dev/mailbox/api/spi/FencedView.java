package dev.mailbox.api.spi;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a backend's {@link Mailbox#fenced(long)} returns: the fenced calls (receive, acknowledge, nack
 * and extend) go to the backend's {@link Operations} with the view's epoch; the rest (name, sends,
 * counts, purge, capabilities) go to the mailbox unchanged. A view owns nothing: closing it does nothing,
 * and {@link #fenced(long)} on it is the mailbox's.
 *
 * @param <T> the body type
 */
public final class FencedView<T> implements Mailbox<T> {

    /**
     * The backend's calls under an epoch: each checks the mailbox's fence, refusing a lower epoch with
     * {@link dev.mailbox.api.FencedException} and changing nothing, and raises it otherwise.
     *
     * @param <T> the body type
     */
    public interface Operations<T> {
        /**
         * @param options how to receive
         * @param epoch   the caller's epoch
         * @return the messages, which carry the epoch into their own acknowledge, nack and extend
         */
        List<Message<T>> receive(ReceiveOptions options, long epoch);

        /**
         * @param messages messages received from this mailbox
         * @param epoch    the caller's epoch
         * @return the ones whose handle was stale
         */
        List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch);

        /**
         * @param receiptHandle the delivery's handle
         * @param epoch         the caller's epoch
         */
        void acknowledge(String receiptHandle, long epoch);

        /**
         * @param receiptHandle     the delivery's handle
         * @param visibilityTimeout when it becomes visible again
         * @param epoch             the caller's epoch
         */
        void nack(String receiptHandle, Duration visibilityTimeout, long epoch);

        /**
         * @param receiptHandle the delivery's handle
         * @param timeout       its remaining visibility, from now
         * @param epoch         the caller's epoch
         */
        void extendVisibility(String receiptHandle, Duration timeout, long epoch);

        /** @return what {@link Mailbox#receive()} uses on this mailbox (default {@link ReceiveOptions#defaults()}) */
        default ReceiveOptions defaultReceiveOptions() {
            return ReceiveOptions.defaults();
        }

        /** @return whether {@link #receiveAsync} is there (default false: the backend waits on a thread) */
        default boolean receivesAsync() {
            return false;
        }

        /**
         * As {@link AsyncReceiver#receiveAsync}, under an epoch; only called if {@link #receivesAsync()}.
         *
         * @param options how to receive
         * @param epoch   the caller's epoch
         * @return the messages, which carry the epoch into their own acknowledge, nack and extend
         */
        default java.util.concurrent.CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options,
                                                                                       long epoch) {
            throw new UnsupportedOperationException("this backend's receives wait on a thread");
        }
    }

    private final Mailbox<T> mailbox;
    private final Operations<T> operations;
    private final long epoch;

    /**
     * @param mailbox    the mailbox the view is of
     * @param operations its fenced calls
     * @param epoch      the view's epoch, 1 or more
     * @throws IllegalArgumentException if the epoch is below 1
     */
    public FencedView(Mailbox<T> mailbox, Operations<T> operations, long epoch) {
        this.mailbox = Objects.requireNonNull(mailbox, "mailbox");
        this.operations = Objects.requireNonNull(operations, "operations");
        this.epoch = requireEpoch(epoch);
    }

    /**
     * @param epoch a fencing epoch
     * @return it
     * @throws IllegalArgumentException if it is below 1
     */
    public static long requireEpoch(long epoch) {
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be 1 or more, was " + epoch);
        }
        return epoch;
    }

    /** @return the view's epoch */
    public long epoch() {
        return epoch;
    }

    /**
     * @return the view's asynchronous receive (under its epoch), or null if the backend has none (see
     *         {@link AsyncReceiver#of})
     */
    public @org.jspecify.annotations.Nullable AsyncReceiver<T> asyncReceiver() {
        return operations.receivesAsync() ? options -> operations.receiveAsync(options, epoch) : null;
    }

    @Override
    public String name() {
        return mailbox.name();
    }

    @Override
    public String send(T body, SendOptions options) {
        return mailbox.send(body, options);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        return mailbox.sendBatch(bodies, options);
    }

    @Override
    public List<Message<T>> receive() {
        return operations.receive(operations.defaultReceiveOptions(), epoch);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return operations.receive(options, epoch);
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        return operations.acknowledgeBatch(messages, epoch);
    }

    @Override
    public void acknowledge(String receiptHandle) {
        operations.acknowledge(receiptHandle, epoch);
    }

    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        operations.nack(receiptHandle, visibilityTimeout, epoch);
    }

    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        operations.extendVisibility(receiptHandle, timeout, epoch);
    }

    @Override
    public Mailbox<T> fenced(long otherEpoch) {
        return mailbox.fenced(otherEpoch);
    }

    @Override
    public long purge() {
        return mailbox.purge();
    }

    @Override
    public long approximateCount() {
        return mailbox.approximateCount();
    }

    @Override
    public MailboxCapabilities capabilities() {
        return mailbox.capabilities();
    }

    /** Closes nothing: the view does not own the mailbox. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return mailbox + " fenced at epoch " + epoch;
    }
}
