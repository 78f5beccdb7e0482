package dev.mailbox.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A named, typed, point-to-point queue with SQS semantics.
 *
 * <h2>Lifecycle of a message</h2>
 * <pre>
 * send ──▶ queued ──receive──▶ in flight ──acknowledge──▶ deleted
 *   │         ▲                   │
 *   │ delay   └── nack / visibility timeout ends (delivery count kept)
 *   ▼                              after maxReceiveCount deliveries ──▶ dead-letter mailbox
 * delayed ──(delay ends)──▶ queued
 * </pre>
 *
 * <ul>
 *   <li><b>At least once.</b> A received message is invisible to other receivers until its visibility
 *       timeout ends; if it is not acknowledged by then it is delivered again, with a new receipt
 *       handle and a higher {@link Message#deliveryCount()}. Consumers must be idempotent.</li>
 *   <li><b>Receipt handles.</b> Only the handle of the current delivery of an in-flight message may
 *       acknowledge, nack or extend it; any other is stale and changes nothing (see
 *       {@link Message}). Where {@link MailboxCapabilities#lateAcknowledge()}, the most recent delivery's
 *       handle still acknowledges after the visibility timeout ended, until the message is delivered
 *       again.</li>
 *   <li><b>Long polling.</b> {@link #receive(ReceiveOptions)} with a wait time blocks until a message
 *       is available or the wait ends. It wakes promptly when a message is sent, nacked, reaches the
 *       end of its delay or of its visibility timeout, and never polls in a busy loop.</li>
 *   <li><b>Order.</b> A standard mailbox's order is best effort (in the order messages became visible
 *       where {@link MailboxCapabilities#visibilityOrder()} says so); a FIFO mailbox's is strict within each
 *       message group, see below.</li>
 *   <li><b>Limits</b> are SQS's on every backend: see {@link Limits}.</li>
 *   <li><b>Threads.</b> Every implementation is safe for concurrent use by any number of threads.</li>
 * </ul>
 *
 * <h2>FIFO mailboxes</h2>
 * A mailbox is created FIFO or standard (the backend's builder takes {@link FifoOptions}; a mailbox never
 * changes kind) and says which through {@link MailboxCapabilities#fifo()}. On a FIFO mailbox, as on SQS's
 * FIFO queues:
 * <ol>
 *   <li>every send names a message group ({@link SendOptions#withGroupId}); a send without one, or with a
 *       per-message delay, is refused with {@link IllegalArgumentException} and stores nothing;</li>
 *   <li>within a group, messages are delivered in send order (a batch in the batch's order), and each gets a
 *       {@link Message#sequenceNumber()} that grows with it;</li>
 *   <li>while a message of a group is in flight, no later message of that group is delivered to anyone;
 *       one receive may return several consecutive messages of a group, in order (they are then in flight
 *       together and the group waits for all of them);</li>
 *   <li>a nack, or a visibility timeout that ends, puts the message back at the head of its group, ahead of
 *       the group's later messages (with a nack timeout, the group waits for it); a message of a run goes back
 *       in its place among the run's other returned messages, and waits until the rest of the run is settled
 *       (acknowledged, nacked or lapsed, in any order), so the run's later messages are never delivered ahead
 *       of it again;</li>
 *   <li>with a {@link RedrivePolicy}, the head that has been delivered {@code maxReceiveCount} times moves
 *       to the dead-letter mailbox when it would be delivered again, which unblocks its group; the
 *       dead-letter mailbox of a FIFO mailbox must be FIFO too (the builder refuses another), and dead
 *       letters keep their group ids and their order;</li>
 *   <li>groups never wait for each other: a blocked group holds back only its own messages;</li>
 *   <li>deduplication ids are remembered for {@link Limits#DEDUPLICATION_WINDOW} (5 minutes) in the
 *       mailbox or per group, and a send without one may be deduplicated by its content (see
 *       {@link FifoOptions});</li>
 *   <li>{@link #purge()}, {@link #approximateCount()} and every other call behave as on a standard
 *       mailbox.</li>
 * </ol>
 *
 * <h2>Fair standard mailboxes</h2>
 * On a standard mailbox that declares {@link MailboxCapabilities#fairness()}, a group id names a tenant
 * (a message without one is a tenant of its own). While a tenant is noisy ({@link Limits#isNoisyTenant}:
 * at least 30 messages in flight and more than 10 % of the mailbox's in-flight messages, SQS's rule) a receive
 * returns other tenants' visible messages before the noisy tenant's; when only noisy tenants have visible
 * messages it returns those, first from the noisy tenant with the fewest in flight, so no receive comes back
 * emptier than it would without fairness. Without a noisy tenant nothing changes. There is no order promise.
 *
 * <p>A mailbox object is a handle on a queue: closing it releases the object's resources (and wakes
 * its blocked receivers) but, on a remote backend, does not delete the queue or its messages.
 *
 * @param <T> the body type
 */
public interface Mailbox<T> extends AutoCloseable {

    /** @return this mailbox's name */
    String name();

    /**
     * Sends one message with no delay and no attributes.
     *
     * @param body the body, not {@code null}
     * @return the new message's id
     * @throws SerializationException     if the body cannot be encoded (nothing is stored)
     * @throws MessageTooLargeException   if the encoded message is too large (nothing is stored)
     * @throws MailboxFullException       if the mailbox is at capacity (nothing is stored)
     * @throws MailboxUnavailableException if the backend cannot be reached or the mailbox is closed
     */
    default String send(T body) {
        return send(body, SendOptions.defaults());
    }

    /**
     * Sends one message.
     *
     * @param body    the body, not {@code null}
     * @param options delay, attributes, deduplication id and group id
     * @return the new message's id (the first send's, for a deduplicated send)
     * @throws IllegalArgumentException   on a {@link MailboxCapabilities#fifo() FIFO} mailbox, if the options
     *                                    have no group id or have a delay (nothing is stored)
     * @throws SerializationException     if the body cannot be encoded (nothing is stored)
     * @throws MessageTooLargeException   if the encoded message is too large (nothing is stored)
     * @throws MailboxFullException       if the mailbox is at capacity (nothing is stored)
     * @throws MailboxUnavailableException if the backend cannot be reached or the mailbox is closed
     */
    String send(T body, SendOptions options);

    /**
     * Sends 1 to 10 messages with the same options. Every body is encoded and checked before anything
     * is stored, so an encoding or size error stores none of them; where the backend allows (memory,
     * Redis) the batch is stored all or nothing, otherwise see the backend's documentation.
     *
     * @param bodies the bodies, 1 to 10, none {@code null}
     * @return the new messages' ids, in the order of {@code bodies}
     * @throws IllegalArgumentException if there are fewer than 1 or more than 10 bodies
     * @see #send(Object, SendOptions)
     */
    default List<String> sendBatch(List<? extends T> bodies) {
        return sendBatch(bodies, SendOptions.defaults());
    }

    /**
     * Sends 1 to 10 messages with the same options; see {@link #sendBatch(List)}.
     *
     * @param bodies  the bodies, 1 to 10, none {@code null}
     * @param options delay and attributes for every message of the batch
     * @return the new messages' ids, in the order of {@code bodies}
     * @throws IllegalArgumentException if there are fewer than 1 or more than 10 bodies, or, on a
     *                                  {@link MailboxCapabilities#fifo() FIFO} mailbox, if the options have no
     *                                  group id or have a delay
     */
    List<String> sendBatch(List<? extends T> bodies, SendOptions options);

    /**
     * Receives up to one message with the default 30 second visibility timeout, without waiting.
     *
     * @return the received messages, possibly empty, never {@code null}
     * @see #receive(ReceiveOptions)
     */
    default List<Message<T>> receive() {
        return receive(ReceiveOptions.defaults());
    }

    /**
     * Receives up to {@code maxMessages} messages, waiting up to {@code waitTime} for the first one.
     * Each returned message is in flight until acknowledged, nacked or until its visibility timeout
     * ends. A message whose body cannot be decoded is returned too: its {@link Message#body()} throws
     * {@link SerializationException}.
     *
     * <p>If the mailbox is closed while the call waits, it returns an empty list; interrupting the
     * waiting thread makes it throw {@link MailboxUnavailableException} with the interrupt flag set.
     *
     * @param options how many, for how long, and how long to wait
     * @return the received messages, possibly empty, never {@code null}
     * @throws MailboxUnavailableException if the backend cannot be reached or the mailbox is closed
     */
    List<Message<T>> receive(ReceiveOptions options);

    /**
     * Acknowledges 1 to 10 messages received from this mailbox in one call where the backend allows
     * (one round trip on Redis and SQS). Unlike {@link Message#acknowledge()} a stale handle does not
     * throw: each message is acknowledged or not on its own, and the ones whose handle was stale are
     * returned (a backend that cannot detect stale deletes, see
     * {@link MailboxCapabilities#detectsStaleAcknowledge()}, returns none).
     *
     * @param messages 1 to 10 messages received from this mailbox
     * @return the messages that were not acknowledged because their handle was stale, in the given
     *         order; empty when all were acknowledged
     * @throws IllegalArgumentException    if there are fewer than 1 or more than 10, or one was not
     *                                     received from this mailbox
     * @throws MailboxUnavailableException if the backend cannot be reached or the mailbox is closed
     */
    default List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Limits.requireBatchSize(messages.size(), "batch size");
        List<Message<T>> stale = new ArrayList<>();
        for (Message<T> m : messages) {
            try {
                m.acknowledge();
            } catch (ReceiptHandleExpiredException e) {
                stale.add(m);
            }
        }
        return stale;
    }

    /**
     * Acknowledges up to 10 messages, then receives: exactly what {@link #acknowledgeBatch(List)}
     * followed by {@link #receive(ReceiveOptions)} do, in one call where the backend allows (on Redis
     * one round trip, one script that settles the handles and then receives). A consumer that
     * acknowledges each message with its next receive pays one round trip per message instead of two:
     * <pre>{@code
     * List<Message<Order>> done = List.of();
     * while (running) {
     *     List<Message<Order>> got = orders.acknowledgeAndReceive(done, options, stale -> log(stale));
     *     got.forEach(m -> handle(m.body()));
     *     done = got;
     * }
     * }</pre>
     * Every handle rule holds as for {@code acknowledgeBatch}: each message is acknowledged or not on its
     * own, a stale handle changes nothing, and it is reported to {@code stale} (on the calling thread,
     * before this method returns or waits). The acknowledgements are made before the receive starts to
     * wait, so a long wait does not hold them back. If the call throws, some or all of the
     * acknowledgements may have been made; acknowledging again is safe (a message already acknowledged
     * is reported stale). An exception thrown by {@code stale} propagates; where the backend settles and
     * receives at once, messages that call had already received come back after their visibility timeout,
     * so a callback should record, not throw.
     *
     * @param acknowledge 0 to 10 messages received from this mailbox, to acknowledge first
     * @param options     how many, for how long, and how long to wait, as for {@link #receive(ReceiveOptions)}
     * @param stale       told of each message of {@code acknowledge} that was not acknowledged because its
     *                    handle was stale, in the given order
     * @return the received messages, possibly empty, never {@code null}
     * @throws IllegalArgumentException    if there are more than 10 messages to acknowledge, or one was
     *                                     not received from this mailbox
     * @throws MailboxUnavailableException if the backend cannot be reached or the mailbox is closed
     */
    default List<Message<T>> acknowledgeAndReceive(List<? extends Message<T>> acknowledge, ReceiveOptions options,
                                                   Consumer<? super Message<T>> stale) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(stale, "stale");
        if (!acknowledge.isEmpty()) {
            acknowledgeBatch(acknowledge).forEach(stale);
        }
        return receive(options);
    }

    /**
     * Acknowledges the delivery whose receipt handle this is: the same as {@link Message#acknowledge()}
     * on the message it came with, for a caller that kept only the handle (a client in another process,
     * a node that restarted). The handle is the backend's own, so it works from any mailbox object of
     * the same queue, in any process, while the delivery is current (or, where
     * {@link MailboxCapabilities#lateAcknowledge()}, after it lapsed, until the message is delivered again).
     *
     * @param receiptHandle a handle this mailbox's backend issued
     * @throws ReceiptHandleExpiredException if the handle is stale (see {@link Message}; where the
     *                                       backend can tell: {@link MailboxCapabilities#detectsStaleAcknowledge()})
     * @throws IllegalArgumentException      if the string is not a handle this backend issues
     * @throws FencedException               through a {@link #fenced} view whose epoch was overtaken
     */
    void acknowledge(String receiptHandle);

    /**
     * Makes the delivery whose receipt handle this is visible again after {@code visibilityTimeout}:
     * the same as {@link Message#nack(java.time.Duration)} on the message it came with.
     *
     * @param receiptHandle     a handle this mailbox's backend issued
     * @param visibilityTimeout 0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}
     * @throws ReceiptHandleExpiredException if the handle is not the current delivery's
     * @throws IllegalArgumentException      if the string is not a handle this backend issues
     * @throws FencedException               through a {@link #fenced} view whose epoch was overtaken
     */
    void nack(String receiptHandle, java.time.Duration visibilityTimeout);

    /**
     * Sets the remaining visibility of the delivery whose receipt handle this is: the same as
     * {@link Message#extendVisibility(java.time.Duration)} on the message it came with.
     *
     * @param receiptHandle a handle this mailbox's backend issued
     * @param timeout       0 to {@link Limits#MAX_VISIBILITY_TIMEOUT}, counted from now
     * @throws ReceiptHandleExpiredException if the handle is not the current delivery's
     * @throws IllegalArgumentException      if the string is not a handle this backend issues
     * @throws FencedException               through a {@link #fenced} view whose epoch was overtaken
     */
    void extendVisibility(String receiptHandle, java.time.Duration timeout);

    /**
     * A view of this mailbox for the holder of its lease at fencing epoch {@code epoch} (a coordinator
     * lease's epoch: every new grant's is higher). Through the view, receive, acknowledge, nack and extend
     * (by handle, or on messages received through it) first check the mailbox's fence, the highest epoch
     * any view has used on it: under a lower epoch they are refused with {@link FencedException} and
     * change nothing; otherwise they raise the fence to {@code epoch} and go ahead, so a holder that lost
     * its lease cannot receive or acknowledge once its successor has. Sends, counts and purges are not
     * fenced. Calls made on the mailbox itself, not through a view, are not fenced either.
     *
     * <p>Where {@link MailboxCapabilities#atomicFencing()} is true the fence is stored with the messages
     * and checked atomically with each call, across processes; where it is false (SQS, which has no
     * conditional writes) this mailbox object keeps it, so only calls through this object are fenced.
     *
     * @param epoch the caller's fencing epoch, 1 or more
     * @return the view; closing it closes nothing
     * @throws IllegalArgumentException if {@code epoch} is less than 1
     */
    Mailbox<T> fenced(long epoch);

    /**
     * Deletes every message: queued, delayed and in flight. Handles of deleted in-flight messages
     * become stale.
     *
     * @return how many messages were deleted (approximate unless
     *         {@link MailboxCapabilities#exactCount()})
     */
    long purge();

    /**
     * Counts every message not yet deleted: queued, delayed and in flight.
     *
     * @return the count (exact at the moment of the call if {@link MailboxCapabilities#exactCount()})
     */
    long approximateCount();

    /** @return what this backend guarantees where backends may differ */
    MailboxCapabilities capabilities();

    /**
     * Releases this object's resources and wakes blocked receivers, which return empty lists. Every
     * later call on the mailbox or on its messages throws {@link MailboxClosedException}. Messages
     * are not deleted. Idempotent.
     */
    @Override
    void close();
}
