package dev.mailbox.api;

import org.jspecify.annotations.Nullable;

/**
 * A body could not be encoded (thrown by a send, with nothing stored) or a stored body could not be
 * decoded (thrown by {@link Message#body()}; the message itself stays in the mailbox, follows the
 * normal redelivery rules and, with a {@link RedrivePolicy}, ends in the dead-letter mailbox).
 *
 * <p>A decoding failure carries the stored bytes when the backend has them, so that a consumer can
 * set the message aside (for example in a dead-letter record) without losing what was sent.
 */
public class SerializationException extends MailboxException {

    private final byte @Nullable [] undecodableBody;

    /**
     * @param message what could not be encoded or decoded
     * @param cause   the codec's failure
     */
    public SerializationException(String message, @Nullable Throwable cause) {
        this(message, cause, null);
    }

    /**
     * @param message         what could not be decoded
     * @param cause           the codec's failure
     * @param undecodableBody the stored bytes that could not be decoded, if known (copied)
     */
    public SerializationException(String message, @Nullable Throwable cause, byte @Nullable [] undecodableBody) {
        super(message, cause);
        this.undecodableBody = undecodableBody == null ? null : undecodableBody.clone();
    }

    /**
     * @return a copy of the stored bytes that could not be decoded, or {@code null} for an encoding
     *         failure or when the backend did not keep them
     */
    public byte @Nullable [] undecodableBody() {
        return undecodableBody == null ? null : undecodableBody.clone();
    }
}
