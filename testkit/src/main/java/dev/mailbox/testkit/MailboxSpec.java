package dev.mailbox.testkit;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.RedrivePolicy;
import org.jspecify.annotations.Nullable;

import java.util.Objects;

/**
 * What {@link MailboxContract} asks a backend to create: a fresh mailbox with this name, codec and,
 * when given, redrive policy, capacity, maximum message size and FIFO options.
 *
 * @param name            a name unique to the test
 * @param codec           the body codec
 * @param redrivePolicy   the dead-letter policy, or {@code null}
 * @param capacity        the capacity, 0 for none (only asked of backends that declare
 *                        {@link dev.mailbox.api.MailboxCapabilities#capacity()})
 * @param maxMessageBytes the maximum message size
 * @param fifo            the FIFO options of a FIFO mailbox, or {@code null} for a standard one. A backend
 *                        that cannot make FIFO mailboxes yet may ignore them: the mailbox it returns then does
 *                        not declare {@link dev.mailbox.api.MailboxCapabilities#fifo()}, and the kit skips
 *                        its FIFO tests, saying so
 * @param <T>             the body type
 */
public record MailboxSpec<T>(String name, Codec<T> codec, @Nullable RedrivePolicy redrivePolicy,
                             long capacity, int maxMessageBytes, @Nullable FifoOptions fifo) {

    /**
     * @param name            a name unique to the test
     * @param codec           the body codec
     * @param redrivePolicy   the dead-letter policy, or {@code null}
     * @param capacity        the capacity, 0 for none
     * @param maxMessageBytes the maximum message size
     * @param fifo            the FIFO options, or {@code null} for a standard mailbox
     * @throws NullPointerException if name or codec is missing
     */
    public MailboxSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(codec, "codec");
        Limits.requireMaxMessageBytes(maxMessageBytes);
    }

    /**
     * A spec of a standard mailbox.
     *
     * @param name            a name unique to the test
     * @param codec           the body codec
     * @param redrivePolicy   the dead-letter policy, or {@code null}
     * @param capacity        the capacity, 0 for none
     * @param maxMessageBytes the maximum message size
     */
    public MailboxSpec(String name, Codec<T> codec, @Nullable RedrivePolicy redrivePolicy, long capacity,
                       int maxMessageBytes) {
        this(name, codec, redrivePolicy, capacity, maxMessageBytes, null);
    }

    /**
     * @param name  the name
     * @param codec the codec
     * @param <T>   the body type
     * @return a spec of a standard mailbox with no redrive policy, no capacity and the default size limit
     */
    public static <T> MailboxSpec<T> of(String name, Codec<T> codec) {
        return new MailboxSpec<>(name, codec, null, 0, Limits.DEFAULT_MAX_MESSAGE_BYTES, null);
    }

    /**
     * @param policy the redrive policy
     * @return a copy with it
     */
    public MailboxSpec<T> withRedrivePolicy(RedrivePolicy policy) {
        return new MailboxSpec<>(name, codec, policy, capacity, maxMessageBytes, fifo);
    }

    /**
     * @param capacity the capacity
     * @return a copy with it
     */
    public MailboxSpec<T> withCapacity(long capacity) {
        return new MailboxSpec<>(name, codec, redrivePolicy, capacity, maxMessageBytes, fifo);
    }

    /**
     * @param options the FIFO options
     * @return a copy that asks for a FIFO mailbox with them
     */
    public MailboxSpec<T> withFifo(FifoOptions options) {
        return new MailboxSpec<>(name, codec, redrivePolicy, capacity, maxMessageBytes,
                Objects.requireNonNull(options, "options"));
    }
}
