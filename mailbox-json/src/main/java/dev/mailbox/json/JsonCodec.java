package dev.mailbox.json;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import dev.mailbox.api.Codec;
import dev.mailbox.api.SerializationException;
import java.io.IOException;
import java.util.Objects;

/**
 * Message bodies as JSON through Jackson: records, generic types such as {@code List<Order>},
 * {@code java.time} (as ISO-8601 text) and {@code Optional} work out of the box, and unknown properties
 * are ignored on decode so producers can add fields first. Readers and writers are bound to the type
 * once, which is Jackson's fast path. Thread-safe.
 *
 * <pre>{@code
 * Mailbox<Order> orders = InMemoryMailbox.builder("orders", JsonCodec.of(Order.class)).build();
 * Codec<List<Order>> batches = JsonCodec.of(new TypeReference<List<Order>>() { });
 * }</pre>
 *
 * A value Jackson cannot write, bytes it cannot read, and a JSON {@code null} are
 * {@link SerializationException}s naming the type.
 *
 * @param <T> the body type
 */
public final class JsonCodec<T> implements Codec<T> {

    private static final ObjectMapper DEFAULT = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .addModule(new Jdk8Module())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final JavaType type;
    private final ObjectWriter writer;
    private final ObjectReader reader;

    private JsonCodec(ObjectMapper mapper, JavaType type) {
        this.type = type;
        this.writer = mapper.writerFor(type);
        this.reader = mapper.readerFor(type);
    }

    /**
     * JSON through a shared, preconfigured mapper: {@code java.time} as ISO-8601 text, unknown
     * properties ignored on decode.
     *
     * @param type the body class (not generic; use {@link #of(TypeReference)} for {@code List<X>})
     * @param <T>  the body type
     * @return the codec
     */
    public static <T> JsonCodec<T> of(Class<T> type) {
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(DEFAULT, DEFAULT.constructType(type));
    }

    /**
     * JSON for a generic type, for example {@code JsonCodec.of(new TypeReference<List<Order>>() { })}.
     *
     * @param type the body type
     * @param <T>  the body type
     * @return the codec
     */
    public static <T> JsonCodec<T> of(TypeReference<T> type) {
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(DEFAULT, DEFAULT.constructType(type));
    }

    /**
     * JSON for a type built at run time, such as a generic record over a class the caller passes in
     * ({@code TypeFactory.defaultInstance().constructParametricType(Box.class, item)}), through the shared
     * mapper.
     *
     * @param type the type
     * @param <T>  the body type
     * @return the codec
     */
    public static <T> JsonCodec<T> of(JavaType type) {
        return new JsonCodec<>(DEFAULT, Objects.requireNonNull(type, "type"));
    }

    /**
     * JSON through your own mapper (which must not be reconfigured after this call).
     *
     * @param mapper the mapper
     * @param type   the body class
     * @param <T>    the body type
     * @return the codec
     */
    public static <T> JsonCodec<T> of(ObjectMapper mapper, Class<T> type) {
        Objects.requireNonNull(mapper, "mapper");
        Objects.requireNonNull(type, "type");
        return new JsonCodec<>(mapper, mapper.constructType(type));
    }

    @Override
    public byte[] encode(T value) {
        try {
            return writer.writeValueAsBytes(value);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot encode " + value.getClass().getName()
                    + " as JSON for " + type + ": " + e.getMessage(), e);
        }
    }

    @Override
    public T decode(byte[] bytes) {
        T value;
        try {
            value = reader.readValue(bytes);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode " + bytes.length + " bytes of JSON as "
                    + type + ": " + e.getMessage(), e);
        }
        if (value == null) {
            throw new SerializationException("JSON 'null' cannot be decoded as " + type
                    + ": message bodies are never null", null);
        }
        return value;
    }

    @Override
    public String toString() {
        return "JsonCodec(" + type + ")";
    }
}
