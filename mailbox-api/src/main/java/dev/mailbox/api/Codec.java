package dev.mailbox.api;

/**
 * Turns message bodies into bytes and back. Implementations must be thread-safe and must throw
 * {@link SerializationException} (never return {@code null}) when a value cannot be encoded or bytes
 * cannot be decoded; a mailbox then refuses the send, or surfaces the undecodable message through
 * {@link Message#body()}.
 *
 * <p>The factories here cover plain text ({@link #utf8()}) and raw bytes ({@link #bytes()}); JSON is
 * {@code dev.mailbox.json.JsonCodec} in the {@code mailbox-json} module, so that this API needs no
 * serialization library.
 *
 * @param <T> the body type
 */
public interface Codec<T> {

    /**
     * @param value the body, never {@code null}
     * @return its bytes
     * @throws SerializationException if the value cannot be encoded
     */
    byte[] encode(T value);

    /**
     * @param bytes bytes produced by {@link #encode(Object)} (or by another producer)
     * @return the body
     * @throws SerializationException if the bytes cannot be decoded
     */
    T decode(byte[] bytes);

    /**
     * Strings as UTF-8. Decoding replaces malformed input rather than failing, as
     * {@link String#String(byte[], java.nio.charset.Charset)} does.
     *
     * @return the codec
     */
    static Codec<String> utf8() {
        return Utf8Codec.INSTANCE;
    }

    /**
     * Raw bytes, copied on the way in and out so that neither side can change the other's array.
     *
     * @return the codec
     */
    static Codec<byte[]> bytes() {
        return BytesCodec.INSTANCE;
    }
}
