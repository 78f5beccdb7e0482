package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The documentation check CI runs: every link resolves, every {@code mailboxctl} command, flag and config key the
 * pages name exists, every Java block is code in samples/ (or in the example its page belongs to), and every
 * generated region says what the code says today. Run {@code -Dmailbox.docs.write=true} to rewrite the generated
 * regions after a change.
 */
class DocsCheckTest {

    /**
     * Pages whose Java blocks are deliberately fragments (elided with "..."), with the reason; every other page's
     * Java blocks must be code that compiles in samples/.
     */
    static final Map<String, String> FRAGMENT_PAGES = Map.of(
            "docs/tracing.md", "fragments that wire interceptors into builders shown whole elsewhere",
            "docs/console.md", "a fragment that mounts the console beside a server built elsewhere");

    /** Pages whose code lives in an example of their own rather than in samples/. */
    static final Map<String, String> EXAMPLE_PAGES = Map.of(
            "docs/spring-boot.md", "examples/spring-boot-orders");

    /** Flags of other tools that pages name on their own, in inline code (`--flag`), with the tool. */
    static final Map<String, String> OTHER_TOOLS_FLAGS = Map.of(
            "--endpoint-url", "aws",
            "--ca-bundle", "aws",
            "--save", "redis-server",
            "--port", "redis-server",
            "--appendonly", "redis-server",
            "-DskipTests", "mvn",
            "-Xmx256m", "java");

    @Test
    @DisplayName("every relative link and anchor in docs/ and README.md resolves")
    void linksResolve() {
        List<String> problems = new ArrayList<>();
        List<Docs.Page> pages = new ArrayList<>(Docs.pages());
        pages.add(Docs.page("README.md"));
        for (Docs.Page page : pages) {
            for (Docs.Link link : page.links()) {
                String target = link.target();
                if (target.matches("^[a-z]+:.*")) {
                    continue; // http(s), mailto: not fetched here
                }
                String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
                Path resolved = file.isEmpty() ? page.path : page.path.getParent().resolve(file).normalize();
                String where = page.name() + ":" + link.line() + ": ";
                if (!Files.exists(resolved)) {
                    problems.add(where + "no file " + target);
                    continue;
                }
                if (anchor != null && resolved.toString().endsWith(".md")
                        && !new Docs.Page(resolved).anchors().contains(anchor)) {
                    problems.add(where + "no heading #" + anchor + " in " + Docs.root().relativize(resolved));
                }
            }
        }
        assertThat(problems).as("broken links").isEmpty();
        assertThat(pages.stream().mapToLong(p -> p.links().size()).sum()).as("links checked").isGreaterThan(50);
    }

    @Test
    @DisplayName("every mailboxctl command and flag the docs name exists, on the command that uses it")
    void commandsAndFlagsExist() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Docs.Page page : docsAndReadme()) {
            for (Docs.Block block : page.blocks()) {
                if (!Set.of("bash", "sh", "shell", "console").contains(block.language())) {
                    continue;
                }
                String joined = block.text().replaceAll("\\\\\\n", " ");
                String[] lines = joined.split("\n");
                for (int i = 0; i < lines.length; i++) {
                    String where = page.name() + ":" + (block.line() + 1 + i) + ": ";
                    checked += checkLine(lines[i], where, problems);
                    checkAssignedFlags(lines[i], where, problems);
                }
            }
            for (String span : page.inlineCode()) {
                String where = page.name() + ": `" + span + "`: ";
                if (span.startsWith("mailboxctl ")) {
                    checked += checkLine(span, where, problems);
                } else if (span.matches("--?[A-Za-z][A-Za-z0-9-]*(?:[ =].*)?")) {
                    String flag = span.split("[ =]")[0];
                    if (!OTHER_TOOLS_FLAGS.containsKey(flag) && !anyCommandHas(flag)) {
                        problems.add(where + "no mailboxctl command has " + flag);
                    }
                    checked++;
                }
            }
        }
        assertThat(problems).as("commands and flags the docs name that mailboxctl does not have").isEmpty();
        assertThat(checked).as("mailboxctl lines and flags checked").isGreaterThan(100);
    }

    @Test
    @DisplayName("every config key the docs name is one a command reads")
    void configKeysExist() {
        Set<String> keys = DocsGenerated.allConfigKeys();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Docs.Page page : docsAndReadme()) {
            for (Docs.Block block : page.blocks()) {
                if (!block.language().equals("properties")) {
                    continue;
                }
                String[] lines = block.text().split("\n");
                for (int i = 0; i < lines.length; i++) {
                    String line = lines[i].strip();
                    if (line.isEmpty() || line.startsWith("#")) {
                        continue;
                    }
                    String key = line.split("[=:]", 2)[0].strip();
                    if (!keys.contains(key)) {
                        problems.add(page.name() + ":" + (block.line() + 1 + i) + ": no command reads the key " + key);
                    }
                    checked++;
                }
            }
            Matcher named = Pattern.compile("\\bkeys? ((?:`[a-z][a-z0-9-]*`(?:, | and | or )?)+)").matcher(page.prose());
            while (named.find()) {
                Matcher each = Pattern.compile("`([a-z][a-z0-9-]*)`").matcher(named.group(1));
                while (each.find()) {
                    if (!keys.contains(each.group(1))) {
                        problems.add(page.name() + ":" + page.lineOf(named.start()) + ": no command reads the key "
                                + each.group(1));
                    }
                    checked++;
                }
            }
            for (String span : page.inlineCode()) {
                Matcher kv = Pattern.compile("^([a-z][a-z0-9]*(?:-[a-z0-9]+)+)=\\S*$").matcher(span);
                if (kv.matches()) {
                    if (!keys.contains(kv.group(1))) {
                        problems.add(page.name() + ": `" + span + "`: no command reads the key " + kv.group(1));
                    }
                    checked++;
                }
            }
        }
        assertThat(problems).as("config keys the docs name that no command reads").isEmpty();
        assertThat(checked).as("config keys checked").isGreaterThan(10);
    }

    @Test
    @DisplayName("every key a command reads from --config has a flag of the same meaning")
    void everyKeyHasItsFlag() {
        List<String> unmatched = new ArrayList<>();
        DocsGenerated.configKeys(unmatched);
        assertThat(unmatched).as("keys read from --config that no command's flag matches").isEmpty();
    }

    @Test
    @DisplayName("every Java block of docs/ is code in samples/ (or in its page's example)")
    void javaBlocksAreSampleCode() throws IOException {
        String samples = squeeze(sources(Docs.root().resolve("samples/src"), ".java"));
        List<String> problems = new ArrayList<>();
        int checked = 0;
        Map<String, Set<String>> exampleLanguages = new java.util.TreeMap<>();
        for (Docs.Page page : Docs.pages()) {
            if (FRAGMENT_PAGES.containsKey(page.name())) {
                continue;
            }
            String example = EXAMPLE_PAGES.get(page.name());
            String haystack = example == null ? samples
                    : squeeze(sources(Docs.root().resolve(example).resolve("src"), ".java", ".yml"));
            for (Docs.Block block : page.blocks()) {
                boolean java = block.language().equals("java");
                boolean yaml = example != null && block.language().equals("yaml");
                if (!java && !yaml) {
                    continue;
                }
                if (yaml && block.text().contains("coordination:")) {
                    continue; // the coordinated mode needs coordinators the Spring Boot example does not run
                }
                if (!haystack.contains(squeeze(block.text()))) {
                    problems.add(page.name() + ":" + block.line() + ": this " + block.language() + " block is not in "
                            + (example == null ? "samples/src" : example + "/src") + " (copy it from there, or put it "
                            + "there and test it):\n" + block.text());
                }
                if (example != null) {
                    exampleLanguages.computeIfAbsent(page.name(), k -> new java.util.TreeSet<>()).add(block.language());
                }
                checked++;
            }
        }
        assertThat(problems).as("code blocks that are not compiled code").isEmpty();
        for (String page : EXAMPLE_PAGES.keySet()) {
            assertThat(exampleLanguages.get(page)).as("the java and yaml blocks of %s were checked", page)
                    .contains("java", "yaml");
        }
        assertThat(checked).as("code blocks checked").isGreaterThan(15);
    }

    /** Third-party artifacts the docs' poms name, with the root pom property their version must equal. */
    static final Map<String, String> VERSIONS = Map.of(
            "junit-jupiter", "junit.version",
            "assertj-core", "assertj.version",
            "maven-surefire-plugin", "surefire.plugin.version",
            "maven-compiler-plugin", "compiler.plugin.version",
            "jedis", "jedis.version",
            "elasticmq-rest-sqs_2.13", "elasticmq.version");

    @Test
    @DisplayName("every dependency an XML block names is one of ours at this version, or at the version we build with")
    void dependencyBlocksNameRealArtifacts() throws IOException {
        Set<String> modules = new java.util.TreeSet<>();
        try (Stream<Path> poms = Files.walk(Docs.root())) {
            for (Path pom : poms.filter(p -> p.getFileName().toString().equals("pom.xml"))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/")).toList()) {
                String text = Files.readString(pom, StandardCharsets.UTF_8);
                String afterParent = text.contains("</parent>") ? text.substring(text.indexOf("</parent>")) : text;
                Matcher a = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(afterParent);
                if (a.find()) {
                    modules.add(a.group(1));
                }
            }
        }
        String version = DocsGenerated.pomVersion();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        Pattern element = Pattern.compile("<(dependency|plugin)>(.*?)</\\1>", Pattern.DOTALL);
        for (Docs.Page page : docsAndReadme()) {
            for (Docs.Block block : page.blocks()) {
                if (!block.language().equals("xml")) {
                    continue;
                }
                Matcher d = element.matcher(block.text());
                while (d.find()) {
                    String group = tag(d.group(2), "groupId");
                    String artifact = tag(d.group(2), "artifactId");
                    String v = tag(d.group(2), "version");
                    String where = page.name() + ":" + block.line() + ": " + group + ":" + artifact + ": ";
                    if ("dev.mailbox".equals(group)) {
                        if (!modules.contains(artifact)) {
                            problems.add(where + "no module of that name");
                        }
                        if (v != null && !v.equals(version)) {
                            problems.add(where + "version " + v + ", the build's is " + version);
                        }
                    } else if (v != null) {
                        String property = VERSIONS.get(artifact);
                        if (property == null) {
                            problems.add(where + "add it to DocsCheckTest.VERSIONS with the property its version follows");
                        } else if (!v.equals(DocsGenerated.pomProperty(property))) {
                            problems.add(where + "version " + v + ", the build uses " + DocsGenerated.pomProperty(property));
                        }
                    }
                    checked++;
                }
            }
        }
        assertThat(problems).as("dependencies named in the docs").isEmpty();
        assertThat(checked).as("dependencies checked").isGreaterThan(5);
    }

    private static String tag(String xml, String name) {
        Matcher m = Pattern.compile("<" + name + ">([^<]+)</" + name + ">").matcher(xml);
        return m.find() ? m.group(1).trim() : null;
    }

    @Test
    @DisplayName("every generated region says what the code says today")
    void generatedRegionsAreCurrent() {
        List<Docs.Page> pages = docsAndReadme();
        List<String> problems = Docs.checkRegions(pages, DocsGenerated.generatorsFor(pages));
        assertThat(problems).as("generated regions").isEmpty();
        assertThat(pages.stream().mapToLong(p -> p.regions().size()).sum()).as("regions checked").isGreaterThan(8);
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static List<Docs.Page> docsAndReadme() {
        List<Docs.Page> pages = new ArrayList<>(Docs.pages());
        pages.add(Docs.page("README.md"));
        return pages;
    }

    private static final Pattern SEPARATOR = Pattern.compile("^(?:\\||\\|\\||&&|;|&|\\)|<|>.*|\\d?>.*|#.*|do|done|then)$");

    /**
     * Checks every {@code mailboxctl ...} invocation on a shell line against picocli's model.
     *
     * @return how many invocations it checked
     */
    static int checkLine(String line, String where, List<String> problems) {
        List<String> tokens = tokens(line);
        int checked = 0;
        for (int i = 0; i < tokens.size(); i++) {
            if (!tokens.get(i).equals("mailboxctl")) {
                continue;
            }
            checked++;
            CommandSpec spec = DocsGenerated.commands().get("mailboxctl");
            boolean positional = false;
            for (int j = i + 1; j < tokens.size(); j++) {
                String t = tokens.get(j);
                boolean last = t.endsWith(";") || t.endsWith(")");
                if (last) {
                    t = t.substring(0, t.length() - 1);
                }
                if (SEPARATOR.matcher(t).matches()) {
                    break;
                }
                if (t.startsWith("$") || t.isEmpty()) {
                    // a variable: whatever it holds is checked where it is assigned
                } else if (t.startsWith("-") && !t.equals("-")) {
                    String name = t.contains("=") ? t.substring(0, t.indexOf('=')) : t;
                    OptionSpec o = spec.findOption(name);
                    if (o == null) {
                        problems.add(where + spec.qualifiedName() + " has no option " + name);
                    } else if (!t.contains("=") && o.arity().max() > 0 && !o.typeInfo().isBoolean()) {
                        j++; // its value
                    }
                } else if (!positional && spec.subcommands().containsKey(t)) {
                    spec = spec.subcommands().get(t).getCommandSpec();
                } else if (!positional && !spec.subcommands().isEmpty() && spec.positionalParameters().isEmpty()) {
                    problems.add(where + spec.qualifiedName() + " has no command " + t);
                    break;
                } else {
                    positional = true;
                }
                if (last) {
                    break;
                }
            }
        }
        return checked;
    }

    /** Flags in a shell variable a block assigns (SECURE="--tls-ca ca.pem ..."), used later on mailboxctl lines. */
    private static void checkAssignedFlags(String line, String where, List<String> problems) {
        Matcher m = Pattern.compile("^\\s*(?:export\\s+)?[A-Z_]+=\"([^\"]*)\"").matcher(line);
        if (m.find()) {
            for (String t : m.group(1).split("\\s+")) {
                if (t.startsWith("--")) {
                    String flag = t.contains("=") ? t.substring(0, t.indexOf('=')) : t;
                    if (!anyCommandHas(flag)) {
                        problems.add(where + "no mailboxctl command has " + flag);
                    }
                }
            }
        }
    }

    private static boolean anyCommandHas(String flag) {
        return DocsGenerated.commands().values().stream().anyMatch(c -> c.findOption(flag) != null);
    }

    /** Splits a shell line into words, keeping quoted text whole (its quotes dropped). */
    static List<String> tokens(String line) {
        List<String> tokens = new ArrayList<>();
        StringBuilder t = new StringBuilder();
        char quote = 0;
        boolean any = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    t.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                any = true;
            } else if (Character.isWhitespace(c)) {
                if (t.length() > 0 || any) {
                    tokens.add(t.toString());
                }
                t.setLength(0);
                any = false;
            } else if (c == '#' && t.length() == 0 && !any) {
                tokens.add("#");
                break; // a comment
            } else {
                t.append(c);
            }
        }
        if (t.length() > 0 || any) {
            tokens.add(t.toString());
        }
        return tokens;
    }

    private static String sources(Path dir, String... suffixes) throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(p -> Stream.of(suffixes).anyMatch(s -> p.toString().endsWith(s))).sorted().toList()) {
                b.append(Files.readString(f, StandardCharsets.UTF_8)).append('\n');
            }
        }
        return b.toString();
    }

    private static String squeeze(String s) {
        return s.replaceAll("\\s+", " ").trim();
    }
}
