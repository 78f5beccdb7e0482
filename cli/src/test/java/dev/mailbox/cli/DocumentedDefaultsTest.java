package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every documented default of a server setting is the one the code uses (issue 34: one place per setting). The
 * reference pages are generated from the registries ({@code DocsCheckTest} keeps them current), the builders start
 * from the registries ({@code SettingsRegistryTest} checks what reaches Ratis and the node), and this test holds
 * the rest to them: the flags' help, and every default the prose of docs/ and README.md states for a setting's
 * flag.
 */
class DocumentedDefaultsTest {

    /** "`--flag` (default `VALUE`)", "`--flag` (default: VALUE)". */
    private static final Pattern PARENTHESIS = Pattern.compile("`(--[a-z][a-z0-9-]*)`[^`()]{0,40}\\(default:? `?([^`),;]+)`?\\)");
    /** "(`--flag`, VALUE by default)". */
    private static final Pattern BY_DEFAULT = Pattern.compile("\\(`(--[a-z][a-z0-9-]*)`, ([^ ,)]+) by default\\)");
    /** "`--flag VALUE` (the default)". */
    private static final Pattern THE_DEFAULT = Pattern.compile("`(--[a-z][a-z0-9-]*) ([^`]+)` \\(the default\\)");

    /** @return every setting of a command that takes --config, by flag */
    private static Map<String, Setting<?>> settings() {
        Map<String, Setting<?>> byFlag = new LinkedHashMap<>();
        for (CommandSpec spec : DocsGenerated.commands().values()) {
            for (OptionSpec o : spec.options()) {
                if (o.userObject() instanceof Setting<?> s) {
                    for (String flag : s.flags()) {
                        byFlag.put(flag, s);
                    }
                }
            }
        }
        return byFlag;
    }

    @Test
    @DisplayName("each server option's help shows the process default and the range its setting holds")
    void helpShowsTheRegistry() {
        Map<String, Setting<?>> settings = settings();
        assertThat(settings).containsKeys("--election-timeout-min-ms", "--snapshot-every", "--max-waiting-receives",
                "--tls-cert", "--sqs-listen", "--log-format", "--peer");
        for (CommandSpec spec : DocsGenerated.commands().values()) {
            for (OptionSpec o : spec.options()) {
                if (o.userObject() instanceof Setting<?> s) {
                    String help = DocsGenerated.description(o);
                    assertThat(help).as(spec.qualifiedName() + " " + o.longestName())
                            .isEqualTo(s.description(Settings.Profile.PROCESS))
                            .contains("default: " + s.defaultText(Settings.Profile.PROCESS));
                    if (s.range() != null) {
                        assertThat(help).contains(s.range());
                    }
                }
            }
        }
        assertThat(DocsGenerated.commands().get("mailboxctl coordinator start").findOption("--snapshot-every")
                .description()[0]).contains("default: 10000").contains("1 or more");
    }

    @Test
    @DisplayName("every default the prose of docs/ and README.md gives a server option is its setting's")
    void proseDefaults() {
        Map<String, Setting<?>> settings = settings();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        List<Docs.Page> pages = new ArrayList<>(Docs.pages());
        pages.add(Docs.page("README.md"));
        for (Docs.Page page : pages) {
            String prose = outsideRegions(page);
            for (Pattern p : List.of(PARENTHESIS, BY_DEFAULT, THE_DEFAULT)) {
                Matcher m = p.matcher(prose);
                while (m.find()) {
                    Setting<?> s = settings.get(m.group(1));
                    if (s == null) {
                        continue; // a client command's option: its default is in its own help
                    }
                    String said = m.group(2).strip();
                    if (!renderings(s).contains(said)) {
                        problems.add(page.name() + ":" + page.lineOf(m.start()) + ": " + m.group() + " — the default "
                                + "of " + s.flag() + " is " + renderings(s));
                    }
                    checked++;
                }
            }
        }
        assertThat(problems).as("defaults the docs state that the code does not use").isEmpty();
        // the short README states fewer defaults than the old one; docs/ states these three today
        assertThat(checked).as("documented defaults checked").isGreaterThanOrEqualTo(3);
    }

    /** @return how the docs may write a setting's default: as documented, or just the port of an address */
    private static Set<String> renderings(Setting<?> s) {
        Set<String> r = new LinkedHashSet<>();
        for (Settings.Profile profile : Settings.Profile.values()) {
            String text = s.defaultText(profile);
            r.add(text);
            if (text.matches(".+:\\d+")) {
                r.add(text.substring(text.lastIndexOf(':') + 1));
            }
        }
        return r;
    }

    /** @return the page's prose with its generated regions blanked out: what the code wrote is checked elsewhere */
    private static String outsideRegions(Docs.Page page) {
        StringBuilder b = new StringBuilder(page.prose());
        for (Docs.Region r : page.regions()) {
            for (int i = r.start(); i < r.end(); i++) {
                if (b.charAt(i) != '\n') {
                    b.setCharAt(i, ' ');
                }
            }
        }
        return b.toString();
    }
}
