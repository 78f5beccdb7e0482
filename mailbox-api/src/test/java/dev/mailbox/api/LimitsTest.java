package dev.mailbox.api;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LimitsTest {

    @Test
    @DisplayName("message size counts the body plus each attribute's name, value and type, in UTF-8 bytes")
    void messageSize() {
        assertThat(Limits.messageSize(100, Map.of())).isEqualTo(100);
        Map<String, String> attrs = new LinkedHashMap<>();
        attrs.put("k", "v");          // 1 + 1 + 6
        attrs.put("name", "héllo");   // 4 + 6 + 6
        assertThat(Limits.messageSize(100, attrs)).isEqualTo(100 + 8 + 16);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "trace-id", "x.y_z-1", "A9"})
    @DisplayName("valid attribute names are accepted")
    void goodNames(String name) {
        assertThatCode(() -> Limits.requireAttribute(name, "v")).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".lead", "trail.", "two..dots", "space here", "ümlaut", "aws.x", "Amazon.y", "slash/x"})
    @DisplayName("invalid attribute names are refused, naming the name")
    void badNames(String name) {
        assertThatThrownBy(() -> Limits.requireAttribute(name, "v")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("attribute name");
    }

    @Test
    @DisplayName("a 256-character name is the longest allowed")
    void nameLength() {
        assertThatCode(() -> Limits.requireAttribute("n".repeat(256), "v")).doesNotThrowAnyException();
        assertThatThrownBy(() -> Limits.requireAttribute("n".repeat(257), "v"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
    }

    @Test
    @DisplayName("attribute values take tabs, newlines and astral characters but not control characters")
    void values() {
        assertThatCode(() -> Limits.requireAttribute("k", "tab\there\nnew \uD83D\uDCE8")).doesNotThrowAnyException();
        assertThatThrownBy(() -> Limits.requireAttribute("k", "nul\u0000")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+0000").hasMessageContaining("index 3");
        assertThatThrownBy(() -> Limits.requireAttribute("k", "lone \uD800 surrogate"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+D800");
        assertThatThrownBy(() -> Limits.requireAttribute("k", "\uFFFF")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("maximum message sizes must be 1 byte to 1 MiB")
    void maxMessageBytes() {
        assertThat(Limits.requireMaxMessageBytes(1)).isEqualTo(1);
        assertThat(Limits.requireMaxMessageBytes(1024 * 1024)).isEqualTo(1024 * 1024);
        assertThatThrownBy(() -> Limits.requireMaxMessageBytes(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Limits.requireMaxMessageBytes(1024 * 1024 + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 MiB");
    }
}
