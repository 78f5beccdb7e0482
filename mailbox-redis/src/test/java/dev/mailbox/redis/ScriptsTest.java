package dev.mailbox.redis;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Scripts: each script carries only the prelude helpers it uses")
class ScriptsTest {

    private static final String PRELUDE = String.join("\n",
            "-- header",
            "",
            "local function keys_at(i)",
            "  return {ready = KEYS[i]}",
            "end",
            "",
            "local K = keys_at(1)",
            "local NOW = 1",
            "",
            "-- what a uses",
            "local function a(x)",
            "  return b(x) + 1",
            "end",
            "",
            "local function b(x)",
            "  if x then",
            "    return 2",
            "  end",
            "  return 3",
            "end",
            "",
            "-- never used",
            "local function unused(x)",
            "  return x",
            "end",
            "");

    @Test
    @DisplayName("a helper the body calls comes with the helpers it calls and its comment; an unused one is left out")
    void transitive() {
        String out = Scripts.prelude(PRELUDE, "-- b(x) in a comment does not count\nreturn a(NOW)");
        assertThat(out).contains("local function keys_at(i)", "local K = keys_at(1)", "local NOW = 1",
                "-- what a uses\nlocal function a(x)", "local function b(x)\n  if x then\n    return 2\n  end\n  return 3\nend");
        assertThat(out).doesNotContain("unused", "never used");
        // helpers keep their order: b is defined before a's call runs (both are defined before the body)
        assertThat(out.indexOf("local function a(")).isLessThan(out.indexOf("local function b("));
    }

    @Test
    @DisplayName("a body that calls no helper gets the prelude's statements and what they call")
    void none() {
        String out = Scripts.prelude(PRELUDE, "return 1 -- unused(1)");
        assertThat(out).contains("local function keys_at(i)", "local K = keys_at(1)");
        assertThat(out).doesNotContain("local function a(", "local function b(", "unused");
    }

    @Test
    @DisplayName("a call of another name that ends or starts like a helper, or of a field, does not pull it in")
    void wholeWords() {
        assertThat(Scripts.prelude(PRELUDE, "return ab(1) + b_x(2) + K.a(3) + K:b(4)")).doesNotContain("local function a(", "local function b(");
    }

    @Test
    @DisplayName("a helper without its closing 'end' is refused, naming it")
    void unclosed() {
        assertThatThrownBy(() -> Scripts.prelude("local function broken(x)\n  return x\n", "return broken(1)"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("broken");
    }

    @Test
    @DisplayName("the real scripts: send defines no acknowledge helpers, ack no send helpers, each loads")
    void realScripts() {
        assertThat(Scripts.SEND.source()).doesNotContain("local function acknowledge_pairs(", "local function fence(")
                .contains("local function promote(", "local function new_id(");
        assertThat(Scripts.ACK.source()).doesNotContain("local function promote(", "local function new_id(")
                .contains("local function acknowledge_pairs(", "local function check(", "local function fence(");
        assertThat(Scripts.RECEIVE.source()).contains("local function acknowledge_pairs(", "local function promote(",
                "local function fence(", "local function new_id(");
    }
}
