package dev.mailbox.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CodecTest {

    @Test
    @DisplayName("Codec.utf8 round-trips any text, including characters outside the BMP")
    void utf8() {
        String text = "héllo, 世界 \uD83D\uDCE8";
        assertThat(Codec.utf8().decode(Codec.utf8().encode(text))).isEqualTo(text);
        assertThat(Codec.utf8().encode(text)).hasSize(text.getBytes(StandardCharsets.UTF_8).length);
    }

    @Test
    @DisplayName("Codec.bytes copies in both directions so neither side can change the other's array")
    void bytesCopies() {
        byte[] original = {1, 2, 3};
        byte[] encoded = Codec.bytes().encode(original);
        original[0] = 9;
        assertThat(encoded).containsExactly(1, 2, 3);
        byte[] decoded = Codec.bytes().decode(encoded);
        decoded[1] = 9;
        assertThat(encoded).containsExactly(1, 2, 3);
    }
}
