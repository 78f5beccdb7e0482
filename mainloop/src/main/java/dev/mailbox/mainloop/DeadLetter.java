package dev.mailbox.mainloop;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request a {@link MainLoop} gave up on, with the reason, as sent to its dead-letter mailbox.
 *
 * <p>A request that could be decoded is kept whole in {@code request}, so that an operator can send it
 * again as it was; one that could not is kept as the stored bytes in {@code rawBody} (when the backend
 * kept them).
 *
 * @param messageId      the id of the message that carried the request
 * @param mailbox        the name of the mailbox it came from
 * @param request        the request, or {@code null} if it could not be decoded
 * @param rawBody        the undecodable stored bytes, or {@code null}
 * @param deliveryCount  how many times it had been delivered
 * @param error          why it was given up
 * @param deadLetteredAt when
 * @param <Req>          the request body type
 */
public record DeadLetter<Req>(String messageId, String mailbox, @Nullable MainLoopRequest<Req> request,
                              byte @Nullable [] rawBody, int deliveryCount, MainLoopError error,
                              Instant deadLetteredAt) {

    /**
     * Checks the fields.
     */
    public DeadLetter {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(mailbox, "mailbox");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(deadLetteredAt, "deadLetteredAt");
    }
}
