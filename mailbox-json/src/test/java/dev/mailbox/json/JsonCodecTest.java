package dev.mailbox.json;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.SerializationException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonCodecTest {

    record Line(String sku, int quantity) {
    }

    record Order(String id, List<Line> lines, Instant at, LocalDate day, OffsetDateTime local,
                 Duration sla, Optional<String> note, Map<String, Integer> tags) {
    }

    static Order order() {
        return new Order("o-1", List.of(new Line("a", 1), new Line("b", 2)),
                Instant.parse("2026-11-21T10:15:30.123456789Z"), LocalDate.of(2026, 2, 28),
                OffsetDateTime.of(2026, 1, 2, 3, 4, 5, 0, ZoneOffset.ofHours(2)), Duration.ofMillis(1500),
                Optional.empty(), Map.of("x", 1));
    }

    @Nested
    @DisplayName("JsonCodec")
    class Json {

        @Test
        @DisplayName("round-trips records with lists, maps, java.time and Optional")
        void records() {
            Codec<Order> codec = JsonCodec.of(Order.class);
            assertThat(codec.decode(codec.encode(order()))).isEqualTo(order());
        }

        @Test
        @DisplayName("writes java.time values as ISO-8601 text, keeping the offset")
        void isoText() {
            String json = new String(JsonCodec.of(Order.class).encode(order()), StandardCharsets.UTF_8);
            assertThat(json).contains("\"2026-11-21T10:15:30.123456789Z\"").contains("\"2026-02-28\"")
                    .contains("\"2026-01-02T03:04:05+02:00\"");
        }

        @Test
        @DisplayName("round-trips generic types given as a TypeReference")
        void generics() {
            Codec<List<Order>> codec = JsonCodec.of(new TypeReference<List<Order>>() { });
            List<Order> decoded = codec.decode(codec.encode(List.of(order(), order())));
            assertThat(decoded).hasSize(2).allSatisfy(o -> assertThat(o).isInstanceOf(Order.class).isEqualTo(order()));
        }

        @Test
        @DisplayName("ignores unknown properties, so producers can add fields first")
        void unknownProperties() {
            byte[] json = "{\"sku\":\"a\",\"quantity\":3,\"addedLater\":true}".getBytes(StandardCharsets.UTF_8);
            assertThat(JsonCodec.of(Line.class).decode(json)).isEqualTo(new Line("a", 3));
        }

        @Test
        @DisplayName("reports undecodable bytes as SerializationException naming the type")
        void badJson() {
            Codec<Line> codec = JsonCodec.of(Line.class);
            assertThatThrownBy(() -> codec.decode("{not json".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(SerializationException.class).hasMessageContaining("Line");
            assertThatThrownBy(() -> codec.decode("[1,2]".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(SerializationException.class);
        }

        @Test
        @DisplayName("refuses a JSON null, because bodies are never null")
        void jsonNull() {
            assertThatThrownBy(() -> JsonCodec.of(Line.class).decode("null".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(SerializationException.class).hasMessageContaining("null");
        }

        @Test
        @DisplayName("reports a value Jackson cannot write as SerializationException")
        void unencodable() {
            Object selfReferencing = new Object() {
                public Object getSelf() {
                    return this;
                }
            };
            Codec<Object> codec = JsonCodec.of(Object.class);
            assertThatThrownBy(() -> codec.encode(selfReferencing)).isInstanceOf(SerializationException.class);
        }

        @Test
        @DisplayName("uses a caller's ObjectMapper when given one")
        void customMapper() {
            ObjectMapper mapper = new ObjectMapper().setPropertyNamingStrategy(
                    com.fasterxml.jackson.databind.PropertyNamingStrategies.UPPER_CAMEL_CASE);
            Codec<Line> codec = JsonCodec.of(mapper, Line.class);
            assertThat(new String(codec.encode(new Line("a", 1)), StandardCharsets.UTF_8)).contains("\"Sku\"");
            assertThat(codec.decode(codec.encode(new Line("a", 1)))).isEqualTo(new Line("a", 1));
        }
    }
}
