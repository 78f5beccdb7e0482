package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command line that explains itself (issue 36): every option says its default, every command has examples that
 * parse and says what its exit statuses mean, and a flag name means one thing on every command.
 */
class CliHelpTest {

    /**
     * Flag names whose help differs between commands because each command applies the one meaning to its own
     * thing; every other name shared by commands has the same help, and so the same meaning and default, on all.
     */
    static final Map<String, String> ONE_MEANING_IN_CONTEXT = Map.of(
            "--id", "the id of what the command runs (a coordinator, a node, a runner)",
            "--mailbox", "the mailbox the command is about",
            "--tls-ca", "the CAs this process trusts",
            "--tls-cert", "this process's certificate chain",
            "--tls-key", "this process's private key",
            "--token-file", "the file holding the token this process presents",
            "--ttl-ms", "a lease TTL (the demo's runners use a short one)",
            "--visibility-ms", "a visibility timeout (the tour's is short, to show a redelivery quickly)",
            "--wait-ms", "wait up to this long for what the command is about, then answer or exit 1");

    private static List<OptionSpec> options(CommandSpec spec) {
        return spec.options().stream().filter(o -> !o.hidden() && !o.usageHelp() && !o.versionHelp()).toList();
    }

    @Test
    @DisplayName("every option of every command says its default (or that it is required)")
    void everyOptionShowsItsDefault() {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (CommandSpec spec : DocsGenerated.commands().values()) {
            for (OptionSpec o : options(spec)) {
                String help = DocsGenerated.description(o);
                boolean says = o.required() ? help.contains("(required)") : help.contains("default: ")
                        && !help.contains("default: null") && !help.contains("${");
                if (!says) {
                    missing.add(spec.qualifiedName() + " " + o.longestName() + ": " + help);
                }
                checked++;
            }
        }
        assertThat(missing).as("options whose help does not say their default").isEmpty();
        assertThat(checked).isGreaterThan(150);
    }

    @Test
    @DisplayName("every command's help has examples, each of which mailboxctl parses as that command, and its exit "
            + "statuses")
    void everyCommandHasExamplesAndExitStatus() {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, CommandSpec> e : DocsGenerated.commands().entrySet()) {
            CommandSpec spec = e.getValue();
            String usage = spec.commandLine().getUsageMessage(CommandLine.Help.Ansi.OFF);
            if (!usage.contains("\nExamples:\n") || DocsGenerated.examples(spec).isEmpty()) {
                problems.add(e.getKey() + ": no examples");
            }
            if (!usage.contains("\nExit status:\n") || !usage.contains("success")) {
                problems.add(e.getKey() + ": no exit statuses");
            }
            for (String line : spec.usageMessage().footer()) {
                if (line.length() > 78) {
                    problems.add(e.getKey() + ": an example line wider than 78 columns wraps in help: " + line);
                }
            }
            for (String example : DocsGenerated.examples(spec)) {
                List<String> words = shellWords(example);
                if (words.isEmpty() || !words.get(0).equals("mailboxctl")) {
                    problems.add(e.getKey() + ": example does not run mailboxctl: " + example);
                    continue;
                }
                try {
                    CommandLine.ParseResult parsed = MailboxCtl.commandLine()
                            .parseArgs(words.subList(1, words.size()).toArray(String[]::new));
                    while (parsed.hasSubcommand()) {
                        parsed = parsed.subcommand();
                    }
                    String ran = parsed.commandSpec().qualifiedName();
                    boolean leaf = spec.subcommands().isEmpty() && spec.parent() != null;
                    if (leaf && !ran.equals(e.getKey())) {
                        problems.add(e.getKey() + ": example runs " + ran + ": " + example);
                    }
                } catch (CommandLine.ParameterException ex) {
                    problems.add(e.getKey() + ": example does not parse (" + ex.getMessage() + "): " + example);
                }
            }
        }
        assertThat(problems).isEmpty();
        assertThat(DocsGenerated.commands()).hasSizeGreaterThan(30);
    }

    @Test
    @DisplayName("each command lists the exit statuses it can end with, from the one list of what they mean")
    void exitStatusesPerCommand() {
        Map<String, CommandSpec> commands = DocsGenerated.commands();
        assertThat(commands.get("mailboxctl coordinator start").usageMessage().exitCodeList()).containsKeys(" 0",
                " 1", " 2", " 70", " 130, 143");
        assertThat(commands.get("mailboxctl node start").usageMessage().exitCodeList()).containsKey(" 130, 143")
                .doesNotContainKey(" 70");
        assertThat(commands.get("mailboxctl receive").usageMessage().exitCodeList()).containsOnlyKeys(" 0", " 1", " 2");
        assertThat(CliRun.of("receive", "--help").out()).contains("Exit status:")
                .contains(ExitStatus.MEANINGS.get("2").substring(0, 40));
    }

    @Test
    @DisplayName("a flag name means one thing on every command: the same help wherever it appears, or a meaning "
            + "declared here that each command applies to its own thing")
    void oneMeaningPerFlagName() {
        Map<String, Map<String, String>> helpByName = new TreeMap<>();
        Map<String, Map<String, String>> kindByName = new TreeMap<>();
        for (Map.Entry<String, CommandSpec> e : DocsGenerated.commands().entrySet()) {
            for (OptionSpec o : options(e.getValue())) {
                for (String name : o.names()) {
                    helpByName.computeIfAbsent(name, k -> new TreeMap<>()).put(e.getKey(), DocsGenerated.description(o));
                    kindByName.computeIfAbsent(name, k -> new TreeMap<>()).put(e.getKey(),
                            o.typeInfo().isBoolean() ? "switch" : o.isMultiValue() ? "list" : "value");
                }
            }
        }
        List<String> problems = new ArrayList<>();
        helpByName.forEach((name, byCommand) -> {
            if (new java.util.HashSet<>(kindByName.get(name).values()).size() > 1) {
                problems.add(name + " is a switch on some commands and takes a value on others: " + kindByName.get(name));
            }
            if (new java.util.HashSet<>(byCommand.values()).size() > 1 && !ONE_MEANING_IN_CONTEXT.containsKey(name)) {
                problems.add(name + " says different things on different commands: " + byCommand);
            }
        });
        assertThat(problems).isEmpty();
        assertThat(helpByName.get("--timeout-ms")).as("one meaning: each call to a coordinator").hasSizeGreaterThan(10)
                .doesNotContainKey("mailboxctl call");
        assertThat(helpByName.get("--tokens")).as("the tokens file a server reads")
                .containsOnlyKeys("mailboxctl coordinator start", "mailboxctl node start");
        assertThat(helpByName).containsKeys(ONE_MEANING_IN_CONTEXT.keySet().toArray(String[]::new));
    }

    @Test
    @DisplayName("text that names a flag names one that exists: routes watch stops on --for-ms; a coordinator has no "
            + "--token-file")
    void noDrift() {
        Map<String, CommandSpec> commands = DocsGenerated.commands();
        assertThat(String.join(" ", commands.get("mailboxctl routes watch").usageMessage().description()))
                .contains("--for-ms").doesNotContainPattern("--for\\b(?!-)");
        assertThat(commands.get("mailboxctl coordinator start").findOption("--token-file")).isNull();
        assertThat(commands.get("mailboxctl node start").findOption("--token-file")).isNotNull();
        CliRun tokenFile = CliRun.of("coordinator", "start", "--token-file", "x.token");
        assertThat(tokenFile.exitCode()).isEqualTo(ExitStatus.USAGE);
        assertThat(tokenFile.err()).contains("--token-file");
    }

    /** The words of a shell line up to its first redirection, pipe or comment, quotes removed. */
    private static List<String> shellWords(String line) {
        List<String> words = new ArrayList<>();
        for (String w : DocsCheckTest.tokens(line)) {
            if (w.matches("[|;&<>#].*|\\d?>.*")) {
                break;
            }
            words.add(w);
        }
        return words;
    }
}
