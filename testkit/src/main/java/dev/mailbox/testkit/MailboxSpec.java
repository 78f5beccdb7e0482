package dev.mailbox.testkit;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.RedrivePolicy;
import org.jspecify.annotations.Nullable;

import java.util.Objects;

/**
 * What {@link MailboxContract} asks a backend to create: a fresh mailbox with this name, codec and,
 * when given, redrive policy, capacity and maximum message size.
 *
 * @param name            a name unique to the test
 * @param codec           the body codec
 * @param redrivePolicy   the dead-letter policy, or {@code null}
 * @param capacity        the capacity, 0 for none (only asked of backends that declare
 *                        {@link dev.mailbox.api.MailboxCapabilities#capacity()})
 * @param maxMessageBytes the maximum message size
 * @param <T>             the body type
 */
public record MailboxSpec<T>(String name, Codec<T> codec, @Nullable RedrivePolicy redrivePolicy,
                             long capacity, int maxMessageBytes) {

    /**
     * @param name            a name unique to the test
     * @param codec           the body codec
     * @param redrivePolicy   the dead-letter policy, or {@code null}
     * @param capacity        the capacity, 0 for none
     * @param maxMessageBytes the maximum message size
     * @throws NullPointerException if name or codec is missing
     */
    public MailboxSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(codec, "codec");
        Limits.requireMaxMessageBytes(maxMessageBytes);
    }

    /**
     * @param name  the name
     * @param codec the codec
     * @param <T>   the body type
     * @return a spec with no redrive policy, no capacity and the default size limit
     */
    public static <T> MailboxSpec<T> of(String name, Codec<T> codec) {
        return new MailboxSpec<>(name, codec, null, 0, Limits.DEFAULT_MAX_MESSAGE_BYTES);
    }

    /**
     * @param policy the redrive policy
     * @return a copy with it
     */
    public MailboxSpec<T> withRedrivePolicy(RedrivePolicy policy) {
        return new MailboxSpec<>(name, codec, policy, capacity, maxMessageBytes);
    }

    /**
     * @param capacity the capacity
     * @return a copy with it
     */
    public MailboxSpec<T> withCapacity(long capacity) {
        return new MailboxSpec<>(name, codec, redrivePolicy, capacity, maxMessageBytes);
    }
}
