package dev.mailbox.redis;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Set;

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
    @DisplayName("a variant keeps the branch its flags choose, drops the directives, and refuses a malformed block")
    void variants() {
        String text = String.join("\n", "a", "--#if FIFO", "fifo", "--#else", "  standard", "--#end", "b",
                "  --#if TENANT", "tenant", "  --#end", "");
        assertThat(Scripts.variant(text, Set.of("FIFO"), "t.lua")).isEqualTo("a\nfifo\nb\n");
        assertThat(Scripts.variant(text, Set.of(), "t.lua")).isEqualTo("a\n  standard\nb\n");
        assertThat(Scripts.variant(text, Set.of("TENANT"), "t.lua")).isEqualTo("a\n  standard\nb\ntenant\n");
        assertThatThrownBy(() -> Scripts.variant("--#if A\n--#if B\n--#end\n--#end\n", Set.of(), "n.lua"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("n.lua:2");
        assertThatThrownBy(() -> Scripts.variant("--#if A\nx\n", Set.of(), "open.lua"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without its --#end");
        assertThatThrownBy(() -> Scripts.variant("--#end\n", Set.of(), "e.lua")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Scripts.variant("--#elif A\n", Set.of(), "u.lua")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("unknown directive");
    }

    @Test
    @DisplayName("standard scripts carry no FIFO code and FIFO scripts no fairness code; no directive is left")
    void kinds() {
        for (Scripts s : Scripts.values()) {
            assertThat(s.source().lines()).as(s.name()).noneMatch(l -> l.strip().startsWith("--#"));
            boolean fifo = s.name().endsWith("_FIFO");
            if (fifo) {
                assertThat(s.source()).as(s.name()).doesNotContain("tenant_landed(", "named(K, 'tparked')", "'LREM'");
            } else {
                assertThat(s.source()).as(s.name()).doesNotContain("local function promote_fifo(",
                        "local function release(", "local function queue_group(", "fifo_keys(K)", "K.gq");
            }
        }
        assertThat(Scripts.RECEIVE_FIFO.source()).contains("local function promote_fifo(", "local function release(");
        assertThat(Scripts.SEND.source()).doesNotContain("'||' .. ARGV[7]"); // the tenant comes only in SEND_TENANT
        assertThat(Scripts.SEND_TENANT.source()).contains("'||' .. ARGV[7]");
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
