package dev.mailbox.api;

import org.jspecify.annotations.Nullable;

/**
 * A body could not be encoded (thrown by a send, with nothing stored) or a stored body could not be
 * decoded (thrown by {@link Message#body()}; the message itself stays in the mailbox, follows the
 * normal redelivery rules and, with a {@link RedrivePolicy}, ends in the dead-letter mailbox).
 */
public class SerializationException extends MailboxException {

    /**
     * @param message what could not be encoded or decoded
     * @param cause   the codec's failure
     */
    public SerializationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
