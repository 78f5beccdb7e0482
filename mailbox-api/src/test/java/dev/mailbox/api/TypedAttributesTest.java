package dev.mailbox.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.spi.StoredAttributes;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Typed and system attributes")
class TypedAttributesTest {

    @Test
    @DisplayName("values keep their type and value; SQS's data type and Number rules are checked")
    void values() {
        assertThat(AttributeValue.number("12.50").stringValue()).isEqualTo("12.50");
        assertThat(AttributeValue.of("Number.int", "-7").dataType()).isEqualTo("Number.int");
        assertThat(AttributeValue.ofBinary("Binary.png", new byte[] {1, 2}).binaryValue()).containsExactly(1, 2);
        assertThat(AttributeValue.binary(new byte[] {0, (byte) 0xff}).text()).isEqualTo("AP8=");
        assertThat(AttributeValue.string("x").isPlainString()).isTrue();
        assertThat(AttributeValue.of("String.json", "{}").isPlainString()).isFalse();
        assertThat(AttributeValue.number("1.5").size()).isEqualTo("Number".length() + 3);

        assertThatThrownBy(() -> AttributeValue.number("twelve")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a number");
        assertThatThrownBy(() -> AttributeValue.number("1" + "0".repeat(127))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AttributeValue.of("Date", "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("String, Number or Binary");
        assertThatThrownBy(() -> AttributeValue.of("Binary", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AttributeValue.ofBinary("Binary", new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AttributeValue.string("nul\u0000")).isInstanceOf(IllegalArgumentException.class);
        byte[] bytes = {1};
        AttributeValue b = AttributeValue.binary(bytes);
        bytes[0] = 9;
        assertThat(b.binaryValue()).containsExactly(1);
    }

    @Test
    @DisplayName("options: plain strings in attributes(), every attribute in typedAttributes(), ten in all;"
            + " system attributes apart, not counted among the ten")
    void options() {
        SendOptions o = SendOptions.defaults().withAttribute("tenant", "acme")
                .withAttribute("total", AttributeValue.number("9.95"))
                .withAttribute("sig", AttributeValue.binary(new byte[] {1}))
                .withSystemAttribute("SenderId", "alice");
        assertThat(o.attributes()).isEqualTo(Map.of("tenant", "acme"));
        assertThat(o.typedAttributes()).containsOnlyKeys("tenant", "total", "sig");
        assertThat(o.systemAttributes()).isEqualTo(Map.of("SenderId", "alice"));
        SendOptions ten = o;
        for (int i = 0; i < 7; i++) {
            ten = ten.withAttribute("n" + i, AttributeValue.number(Integer.toString(i)));
        }
        SendOptions full = ten.withSystemAttribute("Other", "x");
        assertThat(full.typedAttributes()).hasSize(10);
        assertThatThrownBy(() -> full.withAttribute("eleventh", AttributeValue.number("1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 10");
        assertThatThrownBy(() -> o.withAttribute("AWS.x", AttributeValue.number("1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> o.withSystemAttribute("bad name", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> o.withSystemAttribute("Big", "x".repeat(1025))).isInstanceOf(IllegalArgumentException.class);
        assertThat(o).isEqualTo(SendOptions.defaults().withAttribute("tenant", "acme")
                .withAttribute("total", AttributeValue.number("9.95"))
                .withAttribute("sig", AttributeValue.binary(new byte[] {1})).withSystemAttribute("SenderId", "alice"));
        assertThat(o).isNotEqualTo(o.withSystemAttribute("SenderId", "bob"));
        assertThat(o.toString()).doesNotContain("acme", "alice");
        // a typed attribute's size counts its data type and value, as SQS counts it; system attributes do not count
        assertThat(Limits.messageSize(10, o)).isEqualTo(10 + ("tenant" + "String" + "acme").length()
                + ("total" + "Number" + "9.95").length() + ("sig" + "Binary").length() + 1);
    }

    @Test
    @DisplayName("the stored form: plain strings unchanged, typed ones marked and versioned, system ones under"
            + " AWS.; read back exactly, and a plain map is its own view")
    void storedForm() {
        SendOptions o = SendOptions.defaults().withAttribute("tenant", "acme")
                .withAttribute("total", AttributeValue.number("9.95"))
                .withAttribute("json", AttributeValue.of("String.json", "{\"a\":1}"))
                .withAttribute("sig", AttributeValue.ofBinary("Binary.sig", new byte[] {0, 1, (byte) 0xff}))
                .withSystemAttribute("SenderId", "alice");
        Map<String, String> stored = StoredAttributes.encode(o);
        assertThat(stored).containsEntry("tenant", "acme").containsEntry("total", "\u00011Number\u00019.95")
                .containsEntry("sig", "\u00011Binary.sig\u0001AAH/").containsEntry("AWS.SenderId", "alice");
        assertThat(StoredAttributes.plain(stored)).isEqualTo(Map.of("tenant", "acme"));
        assertThat(StoredAttributes.typed(stored)).isEqualTo(o.typedAttributes());
        assertThat(StoredAttributes.system(stored)).isEqualTo(Map.of("SenderId", "alice"));
        assertThat(StoredAttributes.addTo(SendOptions.defaults(), stored)).isEqualTo(o);

        Map<String, String> plain = Map.of("a", "1", "b", "{sqs:Number}2");
        assertThat(StoredAttributes.encode(SendOptions.defaults().withAttributes(plain))).isEqualTo(plain);
        assertThat(StoredAttributes.plain(plain)).isSameAs(plain);
        assertThat(StoredAttributes.system(plain)).isEmpty();
        // a value in a format this version does not know is kept as text, not dropped
        assertThat(StoredAttributes.decode("\u00019Number\u00011")).isEqualTo(AttributeValue.string("\uFFFD9Number\uFFFD1"));
    }
}
