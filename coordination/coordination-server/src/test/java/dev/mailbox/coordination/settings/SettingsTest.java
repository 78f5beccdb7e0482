package dev.mailbox.coordination.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The machinery every server setting goes through: where a value came from, which wins, how a refusal reads. */
class SettingsTest {

    private static final Setting<Duration> SHORT = Setting.millis("short-ms").name("shortest").help("the shortest")
            .range("at least 10", (v, s) -> v.toMillis() < 10 ? "must be at least 10 ms, was " + v.toMillis() + " ms"
                    : null)
            .defaults(Duration.ofMillis(100)).build();
    private static final Setting<Duration> LONG = Setting.millis("long-ms").name("longest").help("the longest")
            .check((v, s) -> v.compareTo(s.get(SHORT)) <= 0 ? "must be more than the shortest, was " + v.toMillis()
                    + " ms" : null)
            .defaults(s -> s.get(SHORT).multipliedBy(2), "twice the shortest").build();
    private static final Setting<Boolean> ON = Setting.onOff("on").help("a switch").build();
    private static final Setting<String> PORT = Setting.text("where").help("an address")
            .defaults("library").processDefault("process").build();
    private static final Setting<List<String>> ITEMS = Setting.list("items", "ITEM", t -> t.strip(), t -> t)
            .flags("--item").help("items").build();
    private static final List<Setting<?>> ALL = List.of(SHORT, LONG, ON, PORT, ITEMS);

    private static Settings.Builder builder() {
        return Settings.builder(ALL, Settings.Profile.PROCESS);
    }

    @Test
    @DisplayName("a flag wins over the config file's key, whichever is read first; a list flag replaces the file's list")
    void flagWins() {
        Settings s = builder().file(SHORT, "200").flag(SHORT, "300").file(ITEMS, "a, b,,c").flag(ITEMS, "x")
                .flag(ITEMS, "y").build();
        assertThat(s.get(SHORT)).isEqualTo(Duration.ofMillis(300));
        assertThat(s.fromFlag(SHORT)).isTrue();
        assertThat(s.get(ITEMS)).containsExactly("x", "y");
        Settings later = builder().flag(SHORT, "300").file(SHORT, "200").file(ITEMS, "a, b,,c").build();
        assertThat(later.get(SHORT)).isEqualTo(Duration.ofMillis(300));
        assertThat(later.get(ITEMS)).containsExactly("a", "b", "c");
        assertThat(later.fromFlag(ITEMS)).isFalse();
    }

    @Test
    @DisplayName("a default may follow another setting, and each profile has its own")
    void defaults() {
        assertThat(builder().build().get(LONG)).isEqualTo(Duration.ofMillis(200));
        assertThat(builder().flag(SHORT, "400").build().get(LONG)).isEqualTo(Duration.ofMillis(800));
        assertThat(LONG.defaultValue()).isEqualTo(Duration.ofMillis(200));
        assertThat(builder().build().get(PORT)).isEqualTo("process");
        assertThat(Settings.builder(ALL, Settings.Profile.LIBRARY).build().get(PORT)).isEqualTo("library");
        assertThat(PORT.description(Settings.Profile.PROCESS)).isEqualTo("an address (default: process)");
        assertThat(SHORT.description(Settings.Profile.LIBRARY)).isEqualTo("the shortest (at least 10; default: 100)");
        assertThat(builder().build().get(ON)).isFalse();
        assertThat(builder().build().isSet(ON)).isFalse();
    }

    @Test
    @DisplayName("a refusal names the setting as its reader gave it: the builder's name, the flag and key, or the key "
            + "in the file")
    void refusals() {
        assertThatThrownBy(() -> builder().set(SHORT, Duration.ofMillis(5)))
                .hasMessage("shortest must be at least 10 ms, was 5 ms");
        assertThatThrownBy(() -> builder().flag(SHORT, "5").build())
                .hasMessage("--short-ms (key short-ms) must be at least 10 ms, was 5 ms");
        assertThatThrownBy(() -> builder().file(SHORT, "soon"))
                .hasMessage("key short-ms in --config must be a whole number of milliseconds, was 'soon'");
        assertThatThrownBy(() -> builder().file(ON, "yes"))
                .hasMessage("key on in --config must be true or false, was 'yes'");
        assertThat(builder().file(ON, " TRUE ").build().get(ON)).isTrue();
        // a rule across settings is checked once all are in, whatever their order on the command line
        assertThatThrownBy(() -> builder().flag(LONG, "150").flag(SHORT, "200").build())
                .hasMessage("--long-ms (key long-ms) must be more than the shortest, was 150 ms");
        assertThat(builder().flag(LONG, "150").flag(SHORT, "50").build().get(LONG)).isEqualTo(Duration.ofMillis(150));
        assertThatThrownBy(() -> Settings.builder(List.of(SHORT), Settings.Profile.LIBRARY).build().get(LONG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--long-ms");
    }

    @Test
    @DisplayName("unset returns a setting to its default; a builder's value is checked against the others as they are")
    void builderValues() {
        Settings.Builder b = Settings.builder(ALL, Settings.Profile.LIBRARY).set(SHORT, Duration.ofMillis(50))
                .set(LONG, Duration.ofMillis(60));
        assertThatThrownBy(() -> b.set(LONG, Duration.ofMillis(50)))
                .hasMessage("longest must be more than the shortest, was 50 ms");
        assertThat(b.unset(LONG).build().get(LONG)).isEqualTo(Duration.ofMillis(100));
        assertThatThrownBy(() -> Setting.text("Not_A_Key")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Settings.builder(List.of(SHORT, SHORT), Settings.Profile.LIBRARY))
                .hasMessageContaining("two settings with the key short-ms");
    }
}
