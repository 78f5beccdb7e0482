package dev.mailbox.api.spi;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import org.jspecify.annotations.Nullable;

import java.util.Map;

/**
 * Encoding and decoding of bodies as every backend must do it: an encoding failure of any kind is a
 * {@link SerializationException}, the size limit counts attributes as SQS does, and a decoding
 * failure is kept with the message (see {@link Undecodable}) instead of failing the receive.
 */
public final class Bodies {

    private Bodies() {
    }

    /**
     * Why a stored body could not be decoded; kept in place of the body so that the message is still
     * delivered and {@code Message.body()} can throw.
     *
     * <p>The array is held, not copied: it is the stored body, kept only to hand to
     * {@link SerializationException#undecodableBody()}.
     *
     * @param reason the codec's message
     * @param cause  the codec's exception, if any
     * @param bytes  the stored bytes that could not be decoded
     */
    public record Undecodable(@Nullable String reason, @Nullable Throwable cause, byte[] bytes) {
    }

    /**
     * Encodes a body and checks the message's size.
     *
     * @param codec           the codec
     * @param body            the body
     * @param attributes      the message's attributes (counted in the size)
     * @param maxMessageBytes the mailbox's limit
     * @param mailbox         the mailbox's name, for messages
     * @param <T>             the body type
     * @return the bytes
     * @throws SerializationException   if the codec fails in any way or returns null
     * @throws MessageTooLargeException if body plus attributes exceed the limit
     */
    public static <T> byte[] encode(Codec<T> codec, T body, Map<String, String> attributes, int maxMessageBytes,
                                    String mailbox) {
        byte[] bytes = encode(codec, body, mailbox);
        int size = Limits.messageSize(bytes.length, attributes);
        if (size > maxMessageBytes) {
            throw new MessageTooLargeException(mailbox, size, maxMessageBytes);
        }
        return bytes;
    }

    /**
     * Encodes a body and checks the message's size, its typed attributes counted as SQS counts them
     * ({@link Limits#messageSize(int, SendOptions)}).
     *
     * @param codec           the codec
     * @param body            the body
     * @param options         the send's options, whose attributes count
     * @param maxMessageBytes the mailbox's limit
     * @param mailbox         the mailbox's name, for messages
     * @param <T>             the body type
     * @return the bytes
     * @throws SerializationException   if the codec fails in any way or returns null
     * @throws MessageTooLargeException if body plus attributes exceed the limit
     */
    public static <T> byte[] encode(Codec<T> codec, T body, SendOptions options, int maxMessageBytes,
                                    String mailbox) {
        byte[] bytes = encode(codec, body, mailbox);
        int size = Limits.messageSize(bytes.length, options);
        if (size > maxMessageBytes) {
            throw new MessageTooLargeException(mailbox, size, maxMessageBytes);
        }
        return bytes;
    }

    private static <T> byte[] encode(Codec<T> codec, T body, String mailbox) {
        byte[] bytes;
        try {
            bytes = codec.encode(body);
        } catch (SerializationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new SerializationException("codec " + codec + " failed to encode a " + body.getClass().getName()
                    + " for mailbox '" + mailbox + "': " + e, e);
        }
        if (bytes == null) {
            throw new SerializationException("codec " + codec + " returned null for a " + body.getClass().getName()
                    + " in mailbox '" + mailbox + "'", null);
        }
        return bytes;
    }

    /**
     * Decodes a stored body without throwing.
     *
     * @param codec the codec
     * @param bytes the stored bytes
     * @param <T>   the body type
     * @return the body, or an {@link Undecodable}
     */
    public static <T> Object decode(Codec<T> codec, byte[] bytes) {
        try {
            T body = codec.decode(bytes);
            return body != null ? body : new Undecodable("codec " + codec + " returned null", null, bytes);
        } catch (RuntimeException e) {
            return new Undecodable(e.getMessage(), e, bytes);
        }
    }

    /**
     * The body of a message, for {@code Message.body()}.
     *
     * @param decoded   what {@link #decode} returned (or a body kept by reference)
     * @param messageId the message's id, for the exception
     * @param mailbox   the mailbox's name, for the exception
     * @param <T>       the body type
     * @return the body
     * @throws SerializationException if {@code decoded} is an {@link Undecodable}
     */
    @SuppressWarnings("unchecked")
    public static <T> T bodyOrThrow(Object decoded, String messageId, String mailbox) {
        if (decoded instanceof Undecodable u) {
            throw new SerializationException("body of message " + messageId + " in mailbox '" + mailbox
                    + "' cannot be decoded: " + u.reason(), u.cause(), u.bytes());
        }
        return (T) decoded;
    }
}
