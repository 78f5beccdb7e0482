package dev.mailbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Every harness reads {@code --name value} and {@code --name=value} alike (issue 36). */
class OptionsTest {

    @Test
    @DisplayName("a value is found after its name or after '=', and an absent one is the default")
    void bothForms() {
        assertThat(new Options(new String[] {"--kills", "12"}).integer("--kills", 3)).isEqualTo(12);
        assertThat(new Options(new String[] {"--kills=12"}).integer("--kills", 3)).isEqualTo(12);
        assertThat(new Options(new String[] {"--quick"}).integer("--kills", 3)).isEqualTo(3);
        // a name that is a prefix of another is not matched by it
        assertThat(new Options(new String[] {"--kills-per-round=5"}).integer("--kills", 3)).isEqualTo(3);
        assertThatThrownBy(() -> new Options(new String[] {"--kills=twelve"}).integer("--kills", 3))
                .hasMessageContaining("--kills must be a whole number, was 'twelve'");
        assertThatThrownBy(() -> new Options(new String[] {"--kills"}).integer("--kills", 3))
                .hasMessageContaining("--kills needs a value");
    }

    @Test
    @DisplayName("a harness's strict parse takes both forms, passes a value that looks like an option on, and "
            + "refuses an unknown word rather than ignoring it")
    void strict() {
        Set<String> switches = Set.of("--quick");
        Set<String> valued = Set.of("--kills", "--flag");
        List<Map.Entry<String, String>> parsed = Options.parse(
                new String[] {"--kills", "12", "--quick", "--kills=13", "--flag", "--x=1", "--flag=--y=2"},
                switches, valued);
        assertThat(parsed).extracting(Map.Entry::getKey)
                .containsExactly("--kills", "--quick", "--kills", "--flag", "--flag");
        assertThat(parsed).extracting(Map.Entry::getValue).containsExactly("12", null, "13", "--x=1", "--y=2");
        assertThatThrownBy(() -> Options.parse(new String[] {"--kils", "12"}, switches, valued))
                .hasMessageContaining("unknown argument --kils").hasMessageContaining("--kills");
        assertThatThrownBy(() -> Options.parse(new String[] {"--quick=yes"}, switches, valued))
                .hasMessageContaining("--quick takes no value");
        assertThatThrownBy(() -> Options.parse(new String[] {"--kills"}, switches, valued))
                .hasMessageContaining("--kills needs a value");
    }
}
