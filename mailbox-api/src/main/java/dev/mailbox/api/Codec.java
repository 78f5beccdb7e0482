package dev.mailbox.api;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Turns message bodies into bytes and back. Implementations must be thread-safe and must throw
 * {@link SerializationException} (never return {@code null}) when a value cannot be encoded or bytes
 * cannot be decoded; a mailbox then refuses the send, or surfaces the undecodable message through
 * {@link Message#body()}.
 *
 * <p>The factories cover the usual cases: {@link #json(Class)} and {@link #json(TypeReference)} for
 * Jackson JSON (records, generic types such as {@code List<Order>}, {@code java.time} and
 * {@code Optional} work out of the box), {@link #utf8()} for plain text and {@link #bytes()} for raw
 * bytes.
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
     * JSON through a shared, preconfigured Jackson {@link ObjectMapper}: {@code java.time} as ISO-8601
     * text, unknown properties ignored on decode.
     *
     * @param type the body class (not generic; use {@link #json(TypeReference)} for {@code List<X>})
     * @param <T>  the body type
     * @return the codec
     */
    static <T> Codec<T> json(Class<T> type) {
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(JsonCodec.defaultMapper(), JsonCodec.defaultMapper().constructType(type));
    }

    /**
     * JSON for a generic type, for example {@code Codec.json(new TypeReference<List<Order>>() {})}.
     *
     * @param type the body type
     * @param <T>  the body type
     * @return the codec
     */
    static <T> Codec<T> json(TypeReference<T> type) {
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(JsonCodec.defaultMapper(), JsonCodec.defaultMapper().constructType(type));
    }

    /**
     * JSON through your own {@link ObjectMapper} (which must not be reconfigured after this call).
     *
     * @param mapper the mapper
     * @param type   the body class
     * @param <T>    the body type
     * @return the codec
     */
    static <T> Codec<T> json(ObjectMapper mapper, Class<T> type) {
        Objects.requireNonNull(mapper, "mapper");
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(mapper, mapper.constructType(type));
    }

    /**
     * JSON through Jackson for a type built at run time, such as a generic record over a class the
     * caller passes in ({@code TypeFactory.defaultInstance().constructParametricType(Box.class, item)}).
     * Uses the same mapper as {@link #json(Class)}.
     *
     * @param type the type, built with Jackson's {@link com.fasterxml.jackson.databind.type.TypeFactory}
     * @param <T>  the body type
     * @return the codec
     */
    static <T> Codec<T> json(JavaType type) {
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(JsonCodec.defaultMapper(), type);
    }

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
