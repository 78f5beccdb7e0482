package dev.mailbox.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import java.io.IOException;

/** Jackson JSON; readers and writers are bound once to the type because that is the fast path. */
final class JsonCodec<T> implements Codec<T> {

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

    JsonCodec(ObjectMapper mapper, JavaType type) {
        this.type = type;
        this.writer = mapper.writerFor(type);
        this.reader = mapper.readerFor(type);
    }

    static ObjectMapper defaultMapper() {
        return DEFAULT;
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
        return "Codec.json(" + type + ")";
    }
}
