package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * What the documentation's generated regions say, made from the code: the {@code mailboxctl} reference and its
 * config keys from picocli's model, exit codes from running the commands, the limits and defaults from the
 * constants, the capability matrix from each backend's {@code capabilities()}, the compatibility matrix from the
 * poms, the number of tests in the compatibility kit from JUnit's discovery, and the index of the topic guides
 * from the files in docs/.
 */
final class DocsGenerated {

    private DocsGenerated() {
    }

    /** @return every generator, by region name; {@code value:...} regions are handled by {@link #value} */
    static Map<String, Supplier<String>> generators() {
        Map<String, Supplier<String>> g = new LinkedHashMap<>();
        g.put("mailboxctl-reference", DocsGenerated::mailboxctlReference);
        g.put("config-keys", DocsGenerated::configKeys);
        g.put("exit-codes", DocsGenerated::exitCodes);
        g.put("tck-tests", () -> Long.toString(tckTests()));
        g.put("limits", DocsGenerated::limits);
        g.put("capabilities", DocsGenerated::capabilities);
        g.put("compatibility", DocsGenerated::compatibility);
        g.put("topic-guides", DocsGenerated::topicGuides);
        g.put("sqs-actions", DocsGenerated::sqsActions);
        g.put("harnesses", DocsGenerated::harnesses);
        g.put("alerts", DocsGenerated::alerts);
        return g;
    }

    /** @return the generator of a region name, including {@code value:Class.FIELD[.accessor...]} */
    static Map<String, Supplier<String>> generatorsFor(List<Docs.Page> pages) {
        Map<String, Supplier<String>> g = generators();
        for (Docs.Page page : pages) {
            for (Docs.Region r : page.regions()) {
                if (r.name().startsWith("value:")) {
                    g.put(r.name(), () -> value(r.name().substring("value:".length())));
                }
            }
        }
        return g;
    }

    // ---- mailboxctl ----------------------------------------------------------------------------------------

    /** @return every command of mailboxctl, depth first, with its full name ("mailboxctl cluster status") */
    static Map<String, CommandSpec> commands() {
        return Commands.ALL;
    }

    /** Built once: picocli's model of every command does not change while the tests run. */
    private static final class Commands {
        static final Map<String, CommandSpec> ALL;

        static {
            Map<String, CommandSpec> all = new LinkedHashMap<>();
            collect(MailboxCtl.commandLine().getCommandSpec(), all);
            ALL = java.util.Collections.unmodifiableMap(all);
        }
    }

    private static void collect(CommandSpec spec, Map<String, CommandSpec> all) {
        all.put(spec.qualifiedName(), spec);
        Set<CommandSpec> seen = new LinkedHashSet<>();
        for (CommandLine sub : spec.subcommands().values()) {
            if (seen.add(sub.getCommandSpec()) && !sub.getCommandSpec().usageMessage().hidden()) {
                collect(sub.getCommandSpec(), all);
            }
        }
    }

    static String mailboxctlReference() {
        StringBuilder b = new StringBuilder();
        Map<String, CommandSpec> commands = commands();
        b.append("Commands:\n\n");
        for (Map.Entry<String, CommandSpec> e : commands.entrySet()) {
            if (e.getValue().subcommands().isEmpty() || e.getValue().parent() == null) {
                String name = e.getKey();
                b.append("- [`").append(name).append("`](#").append(Docs.slug(name)).append(")");
                String[] description = e.getValue().usageMessage().description();
                if (description.length > 0) {
                    b.append(": ").append(firstSentence(description[0].replace("%n", "").strip()));
                }
                b.append('\n');
            }
        }
        for (Map.Entry<String, CommandSpec> e : commands.entrySet()) {
            CommandSpec spec = e.getValue();
            if (!spec.subcommands().isEmpty() && spec.parent() != null) {
                continue; // a group: its commands have sections of their own
            }
            b.append("\n## ").append(e.getKey()).append("\n\n");
            for (String line : spec.usageMessage().description()) {
                b.append(line.replace("%n", "").strip()).append("\n\n");
            }
            b.append("```text\n").append(synopsis(spec)).append("\n```\n");
            List<PositionalParamSpec> params = spec.positionalParameters().stream()
                    .filter(p -> !p.hidden()).toList();
            if (!params.isEmpty()) {
                b.append("\n| parameter | what |\n| --- | --- |\n");
                for (PositionalParamSpec p : params) {
                    b.append("| `").append(codeCell(p.paramLabel())).append("` | ").append(cell(String.join(" ", p.description())))
                            .append(" |\n");
                }
            }
            List<OptionSpec> options = spec.options().stream().filter(o -> !o.hidden()).toList();
            if (!options.isEmpty()) {
                b.append("\n| option | what |\n| --- | --- |\n");
                for (OptionSpec o : options) {
                    String names = String.join(", ", o.names());
                    String label = o.arity().max() == 0 ? "" : " " + o.paramLabel();
                    b.append("| `").append(codeCell(names + label)).append("` | ")
                            .append(cell(description(o))).append(" |\n");
                }
            }
            if (spec.usageMessage().footer().length > 0) {
                b.append("\nExamples:\n\n```bash\n");
                for (String line : spec.usageMessage().footer()) {
                    b.append(line.startsWith("  ") ? line.substring(2) : line).append('\n');
                }
                b.append("```\n");
            }
            b.append("\nExit status: ").append(String.join(", ", ExitStatus.of(spec.qualifiedName()).keySet()))
                    .append(" ([what each means](exit-codes.md)).\n");
        }
        return b.toString().stripTrailing();
    }

    /**
     * @return a command's examples: the commands of its help's "Examples:" section, a line ending in a backslash
     *         joined with the next, as a shell would read them
     */
    static List<String> examples(CommandSpec spec) {
        List<String> commands = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : spec.usageMessage().footer()) {
            String l = line.strip();
            if (l.endsWith("\\")) {
                current.append(l, 0, l.length() - 1).append(' ');
                continue;
            }
            current.append(l);
            if (!current.toString().isBlank()) {
                commands.add(current.toString().replaceAll("\\s+", " ").strip());
            }
            current.setLength(0);
        }
        return commands;
    }

    /** @return an option's help as --help shows it, its default filled in */
    static String description(OptionSpec o) {
        String d = String.join(" ", o.description());
        String value = o.defaultValueString();
        return d.replace("${DEFAULT-VALUE}", value == null ? "null" : value).replace("%%", "%");
    }

    private static String synopsis(CommandSpec spec) {
        String s = new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF))
                .synopsis(0);
        return s.stripTrailing().replace("Usage: ", "");
    }

    private static String firstSentence(String s) {
        int dot = s.indexOf(". ");
        return (dot > 0 ? s.substring(0, dot + 1) : s).replace("|", "\\|");
    }

    /** A table cell's code span: only the column separator needs escaping (entities are not decoded in code). */
    private static String codeCell(String s) {
        return s.replace("|", "\\|");
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;");
    }

    // ---- config keys -----------------------------------------------------------------------------------------

    /**
     * @param spec a command that takes --config
     * @return the keys its --config file may hold: what the command declares to {@link ConfigFile#load}
     */
    @SuppressWarnings("unchecked")
    static Set<String> keysOf(CommandSpec spec) {
        try {
            Field f = spec.userObject().getClass().getDeclaredField("CONFIG_KEYS");
            f.setAccessible(true);
            return new java.util.TreeSet<>((Set<String>) f.get(null));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(spec.qualifiedName() + " takes --config but declares no CONFIG_KEYS", e);
        }
    }

    /** @return the commands that take --config, each with its keys (key to the option of the same meaning) */
    static Map<String, Map<String, OptionSpec>> configKeys(List<String> unmatched) {
        Map<String, Map<String, OptionSpec>> byCommand = new LinkedHashMap<>();
        for (Map.Entry<String, CommandSpec> e : commands().entrySet()) {
            if (e.getValue().findOption("--config") == null) {
                continue;
            }
            Map<String, OptionSpec> forCommand = new TreeMap<>();
            for (String key : keysOf(e.getValue())) {
                OptionSpec o = optionForKey(e.getValue(), key);
                if (o != null) {
                    forCommand.put(key, o);
                } else {
                    unmatched.add(e.getKey() + ": " + key);
                }
            }
            byCommand.put(e.getKey(), forCommand);
        }
        return byCommand;
    }

    /** @return the option a key stands for: {@code --KEY}, or the singular flag of a plural key (peers: --peer) */
    static OptionSpec optionForKey(CommandSpec spec, String key) {
        OptionSpec o = spec.findOption("--" + key);
        if (o == null && key.endsWith("s")) {
            o = spec.findOption("--" + key.substring(0, key.length() - 1));
            if (o != null && o.isMultiValue()) {
                return o;
            }
            return null;
        }
        return o;
    }

    /** @return every key any command reads */
    static Set<String> allConfigKeys() {
        Set<String> all = new java.util.TreeSet<>();
        for (CommandSpec spec : commands().values()) {
            if (spec.findOption("--config") != null) {
                all.addAll(keysOf(spec));
            }
        }
        return all;
    }

    static String configKeys() {
        List<String> unmatched = new ArrayList<>();
        Map<String, Map<String, OptionSpec>> byCommand = configKeys(unmatched);
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Map<String, OptionSpec>> e : byCommand.entrySet()) {
            CommandSpec spec = commands().get(e.getKey());
            b.append("\n## ").append(e.getKey()).append(" --config FILE\n\n");
            b.append("| key | flag | default | values | what |\n| --- | --- | --- | --- | --- |\n");
            for (Map.Entry<String, OptionSpec> k : e.getValue().entrySet()) {
                OptionSpec o = k.getValue();
                String flag = o.longestName();
                String note = flag.equals("--" + k.getKey()) ? "" : " (comma-separated: the flag is repeatable)";
                b.append("| `").append(k.getKey()).append("` | `").append(flag).append("`").append(note).append(" | ");
                if (o.userObject() instanceof dev.mailbox.coordination.settings.Setting<?> setting) {
                    String range = setting.range();
                    b.append(cell(setting.defaultText(dev.mailbox.coordination.settings.Settings.Profile.PROCESS)))
                            .append(" | ").append(range == null ? "" : cell(range)).append(" | ")
                            .append(cell(setting.help()));
                } else {
                    b.append(" | | ").append(cell(description(o)));
                }
                b.append(" |\n");
            }
            List<String> flagsWithoutKey = new ArrayList<>();
            for (OptionSpec o : spec.options()) {
                if (o.hidden() || o.usageHelp() || o.versionHelp() || o.longestName().equals("--config")) {
                    continue;
                }
                boolean hasKey = e.getValue().values().stream().anyMatch(v -> v.longestName().equals(o.longestName()));
                if (!hasKey) {
                    flagsWithoutKey.add("`" + o.longestName() + "`");
                }
            }
            b.append("\nFlags with no key: ").append(flagsWithoutKey.isEmpty() ? "none" : String.join(", ", flagsWithoutKey))
                    .append(".\n");
        }
        if (!unmatched.isEmpty()) {
            throw new IllegalStateException("keys with no flag of the same meaning: " + unmatched);
        }
        return b.toString().strip();
    }

    // ---- exit codes ------------------------------------------------------------------------------------------

    /** A command the exit-code table runs, and the status it must end with. */
    record ExitExample(int status, String[] args) {
    }

    static final List<ExitExample> EXIT_EXAMPLES = List.of(
            new ExitExample(ExitStatus.OK, new String[] {"--version"}),
            new ExitExample(ExitStatus.FAILED, new String[] {"cluster", "status", "-c", "127.0.0.1:1", "--timeout-ms",
                    "300"}),
            new ExitExample(ExitStatus.USAGE, new String[] {"receive"}),
            new ExitExample(ExitStatus.USAGE, new String[] {"receive", "memory:orders", "-n", "11"}),
            new ExitExample(ExitStatus.USAGE, new String[] {"coordinator", "start", "--snapshot-every", "0"}));

    /** @return ExitStatus's meanings, each with the example commands that end with it (each run to check that) */
    static String exitCodes() {
        StringBuilder b = new StringBuilder("| status | meaning | for example |\n| --- | --- | --- |\n");
        for (Map.Entry<String, String> m : ExitStatus.MEANINGS.entrySet()) {
            List<String> shown = new ArrayList<>();
            for (ExitExample x : EXIT_EXAMPLES) {
                if (!m.getKey().equals(Integer.toString(x.status()))) {
                    continue;
                }
                CliRun run = CliRun.of(x.args());
                if (run.exitCode() != x.status()) {
                    throw new IllegalStateException("mailboxctl " + String.join(" ", x.args()) + " ended with "
                            + run.exitCode() + ", not " + x.status() + ": " + run.err());
                }
                shown.add("`mailboxctl " + String.join(" ", x.args()) + "`");
            }
            b.append("| ").append(m.getKey()).append(" | ").append(cell(m.getValue())).append(" | ")
                    .append(String.join(", ", shown)).append(" |\n");
        }
        return b.toString().stripTrailing();
    }

    /** A backend for counting the kit's tests; discovered, never run (its name keeps surefire away from it). */
    static final class ContractProbe extends MailboxContract {
        @Override
        protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
            return InMemoryMailbox.builder(spec.name(), spec.codec()).build();
        }
    }

    /** @return how many tests the compatibility kit runs against a backend */
    static long tckTests() {
        TestPlan plan = LauncherFactory.create().discover(LauncherDiscoveryRequestBuilder.request()
                .selectors(org.junit.platform.engine.discovery.DiscoverySelectors.selectClass(ContractProbe.class))
                .build());
        long tests = 0;
        List<TestIdentifier> todo = new ArrayList<>(plan.getRoots());
        while (!todo.isEmpty()) {
            TestIdentifier t = todo.remove(todo.size() - 1);
            if (t.isTest()) {
                tests++;
            }
            todo.addAll(plan.getChildren(t));
        }
        return tests;
    }

    // ---- constants -------------------------------------------------------------------------------------------

    private static final List<String> PACKAGES = List.of("dev.mailbox.api", "dev.mailbox.coordination",
            "dev.mailbox.coordination.server", "dev.mailbox.mainloop", "dev.mailbox.cli", "dev.mailbox.redis",
            "dev.mailbox.sqs", "dev.mailbox.inmemory");

    /**
     * @param expression {@code Class.FIELD} with optional {@code .accessor()} steps (no parentheses), such as
     *                   {@code LeasePolicy.DEFAULT.ttl}; the class is looked for in this project's packages
     * @return the value, as the docs write it
     */
    static String value(String expression) {
        if (expression.contains("#")) {
            return builderDefault(expression);
        }
        String[] parts = expression.split("\\.");
        Class<?> type = null;
        int i = 0;
        for (String pkg : PACKAGES) {
            // Class or Outer.Inner
            for (int n = 1; n <= 2 && n < parts.length && type == null; n++) {
                String name = pkg + "." + String.join("$", Arrays.copyOfRange(parts, 0, n));
                try {
                    type = Class.forName(name);
                    i = n;
                } catch (ClassNotFoundException e) {
                    // try the next
                }
            }
            if (type != null) {
                break;
            }
        }
        if (type == null) {
            throw new IllegalArgumentException("no class for " + expression);
        }
        try {
            Field f = type.getDeclaredField(parts[i]);
            if (!Modifier.isStatic(f.getModifiers())) {
                throw new IllegalArgumentException(expression + ": " + parts[i] + " is not static");
            }
            f.setAccessible(true);
            Object v = f.get(null);
            String last = parts[i];
            for (int k = i + 1; k < parts.length; k++) {
                Method m = v.getClass().getMethod(parts[k]);
                m.setAccessible(true);
                v = m.invoke(v);
                last = parts[k];
            }
            // a byte count is named so anywhere along the way: LOG_SEGMENT_BYTES.defaultValue
            return format(v, expression.toUpperCase(Locale.ROOT).contains("BYTES") ? "BYTES" : last);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot read " + expression + ": " + e, e);
        }
    }

    /** Builders whose defaults the docs quote, made as an application would make them. */
    private static final Map<String, Supplier<Object>> BUILDERS = Map.of(
            "MainLoop.Builder", () -> dev.mailbox.mainloop.MainLoop.builder(
                    new InMemoryMailbox<dev.mailbox.mainloop.MainLoopRequest<String>>("defaults"),
                    dev.mailbox.mainloop.RequestHandler.<String, String>ofBody(x -> x)),
            "MainLoopClient.Builder", () -> dev.mailbox.mainloop.MainLoopClient.builder(
                    new InMemoryMailbox<dev.mailbox.mainloop.MainLoopRequest<String>>("defaults"),
                    name -> new InMemoryMailbox<dev.mailbox.mainloop.MainLoopResult<String>>(name)),
            "RemoteMailbox.Builder", () -> dev.mailbox.coordination.RemoteMailbox.builder("defaults", Codec.utf8()),
            "CoordinatorNode.Builder", () -> dev.mailbox.coordination.server.CoordinatorNode.builder("defaults"),
            "MailboxNode.Builder", () -> dev.mailbox.coordination.server.MailboxNode.builder("defaults"));

    /**
     * @param expression {@code Builder#field}, such as {@code MainLoop.Builder#rememberMax}: the field's value in a
     *                   builder fresh from its factory method, that is, its default
     */
    static String builderDefault(String expression) {
        String builder = expression.substring(0, expression.indexOf('#'));
        String field = expression.substring(expression.indexOf('#') + 1);
        Supplier<Object> make = BUILDERS.get(builder);
        Object b = make == null ? null : make.get();
        if (b == null) {
            throw new IllegalArgumentException("no factory for " + builder + " (add one to DocsGenerated.BUILDERS)");
        }
        try {
            Field f = b.getClass().getDeclaredField(field);
            f.setAccessible(true);
            return format(f.get(b), field);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot read " + expression + ": " + e, e);
        }
    }

    /** @return a value as the docs write it: 30 s, 15 min, 256 KiB, 10,000 */
    static String format(Object v, String name) {
        if (v instanceof Duration d) {
            return duration(d);
        }
        if (v instanceof Number n && (name.toUpperCase(Locale.ROOT).contains("BYTES"))) {
            return bytes(n.longValue());
        }
        if (v instanceof Integer || v instanceof Long) {
            return String.format(Locale.ROOT, "%,d", ((Number) v).longValue());
        }
        return String.valueOf(v);
    }

    static String duration(Duration d) {
        long nanos = d.toNanos();
        if (nanos % 3_600_000_000_000L == 0) {
            return d.toHours() + " h";
        }
        if (nanos % 60_000_000_000L == 0) {
            return d.toMinutes() + " min";
        }
        if (nanos % 1_000_000_000L == 0) {
            return d.toSeconds() + " s";
        }
        if (nanos % 1_000_000L == 0) {
            return d.toMillis() + " ms";
        }
        return nanos + " ns";
    }

    static String bytes(long n) {
        if (n % (1L << 20) == 0) {
            return (n >> 20) + " MiB";
        }
        if (n % (1L << 10) == 0) {
            return (n >> 10) + " KiB";
        }
        return String.format(Locale.ROOT, "%,d bytes", n);
    }

    /** What each constant of {@link Limits} is, for the limits table; a new constant shows its name until added. */
    private static final Map<String, String> LIMITS = new LinkedHashMap<>();

    static {
        LIMITS.put("DEFAULT_MAX_MESSAGE_BYTES", "largest message, body and attributes counted as SQS counts them, "
                + "unless the mailbox is built with `maxMessageBytes(...)`");
        LIMITS.put("MAX_MESSAGE_BYTES", "the most `maxMessageBytes(...)` may allow");
        LIMITS.put("MAX_BATCH", "messages per receive (`withMaxMessages`) and per `sendBatch` / `acknowledgeBatch`");
        LIMITS.put("MAX_ATTRIBUTES", "attributes per message");
        LIMITS.put("MAX_ATTRIBUTE_NAME_LENGTH", "characters in an attribute name");
        LIMITS.put("MAX_DELAY", "delay of a send (`SendOptions.withDelay`)");
        LIMITS.put("MAX_VISIBILITY_TIMEOUT", "visibility timeout of a receive, a nack or an extend");
        LIMITS.put("MAX_WAIT_TIME", "wait of one `receive` (SQS serves at most 20 s per call: `SqsMailbox` loops)");
        LIMITS.put("MAX_RECEIVE_COUNT", "`maxReceiveCount` of a `RedrivePolicy`");
        LIMITS.put("MAX_DEDUPLICATION_ID_LENGTH", "characters in a deduplication id");
        LIMITS.put("DEDUPLICATION_WINDOW", "how long a deduplication id is remembered");
        LIMITS.put("MAX_NAME_LENGTH", "characters in a portable mailbox name (`A-Z a-z 0-9 _ -`)");
        LIMITS.put("MAX_EXTENDED_NAME_LENGTH", "characters in an extended name (also `.` and `@`: room for "
                + "`namespace@node`), where the backend declares `extendedNames`");
    }

    static String limits() {
        StringBuilder b = new StringBuilder("| limit | value | constant |\n| --- | --- | --- |\n");
        for (Field f : Limits.class.getFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            String what = LIMITS.getOrDefault(f.getName(), "`Limits." + f.getName() + "`");
            b.append("| ").append(what).append(" | ").append(value("Limits." + f.getName())).append(" | `Limits.")
                    .append(f.getName()).append("` |\n");
        }
        return b.toString().stripTrailing();
    }

    // ---- capabilities ----------------------------------------------------------------------------------------

    static String capabilities() {
        Map<String, MailboxCapabilities> backends = new LinkedHashMap<>();
        try (InMemoryMailbox<byte[]> memory = InMemoryMailbox.builder("capabilities", Codec.bytes()).build()) {
            backends.put("memory (`InMemoryMailbox`)", memory.capabilities());
        }
        try (RedisServerProcess redis = RedisServerProcess.start();
             RedisMailbox<byte[]> m = RedisMailbox.builder("capabilities", Codec.bytes()).uri(redis.uri()).build()) {
            backends.put("Redis (`RedisMailbox`)", m.capabilities());
        }
        try (SqsClient sqs = SqsClient.builder().endpointOverride(ElasticMqServer.shared().endpoint())
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x"))).build()) {
            try (SqsMailbox<byte[]> standard = SqsMailbox.builder("capabilities", Codec.bytes()).client(sqs)
                    .createIfMissing(true).build()) {
                backends.put("SQS standard queue (`SqsMailbox`)", standard.capabilities());
            }
            try (SqsMailbox<byte[]> fifo = SqsMailbox.builder("capabilities", Codec.bytes()).client(sqs)
                    .queueAttribute(QueueAttributeName.FIFO_QUEUE, "true").createIfMissing(true).build()) {
                backends.put("SQS FIFO queue (`SqsMailbox`)", fifo.capabilities());
            }
        }
        List<Method> accessors = Arrays.stream(MailboxCapabilities.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers())
                        && m.getParameterCount() == 0 && !Set.of("toString", "hashCode").contains(m.getName()))
                .sorted(Comparator.comparing(Method::getName)).toList();
        StringBuilder b = new StringBuilder("| capability |");
        backends.keySet().forEach(k -> b.append(' ').append(k).append(" |"));
        b.append("\n| --- |");
        backends.keySet().forEach(k -> b.append(" --- |"));
        b.append('\n');
        for (Method m : accessors) {
            b.append("| `").append(m.getName()).append("` |");
            for (MailboxCapabilities c : backends.values()) {
                try {
                    Object v = m.invoke(c);
                    String shown = v instanceof Boolean yes ? (yes ? "yes" : "no") : format(v, m.getName().contains("Bytes")
                            ? "BYTES" : m.getName());
                    b.append(' ').append(shown).append(" |");
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
            b.append('\n');
        }
        return b.toString().stripTrailing();
    }

    // ---- compatibility ---------------------------------------------------------------------------------------

    /** @return a property of the root pom */
    static String pomProperty(String name) {
        try {
            String pom = Files.readString(Docs.root().resolve("pom.xml"), StandardCharsets.UTF_8);
            Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">").matcher(pom);
            if (!m.find()) {
                throw new IllegalStateException("the root pom has no property " + name);
            }
            return m.group(1).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the project's version, from the root pom */
    static String pomVersion() {
        Matcher m = Pattern.compile("<artifactId>mailbox-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(read("pom.xml"));
        if (!m.find()) {
            throw new IllegalStateException("no version in the root pom");
        }
        return m.group(1).trim();
    }

    static String compatibility() {
        String[][] rows = {
                {"Java", pomProperty("maven.compiler.release") + " or newer", "every module is compiled for release "
                        + pomProperty("maven.compiler.release")},
                {"Redis (server)", "6.2 or newer; Redis Cluster too", "the tests run the bundled Redis 6.2 (embedded-redis "
                        + pomProperty("embedded-redis.version") + ") and, in CI, Debian's Redis 7"},
                {"Jedis", pomProperty("jedis.version"), "`mailbox-redis`'s client"},
                {"AWS SDK for Java v2", pomProperty("awssdk.version"), "`mailbox-sqs`"},
                {"ElasticMQ (tests)", pomProperty("elasticmq.version"), "the embedded SQS server of the tests"},
                {"grpc-java", pomProperty("grpc.version"), "control plane and data plane"},
                {"Protocol Buffers", pomProperty("protobuf.version"), ""},
                {"Apache Ratis", pomProperty("ratis.version"), "pinned: the coordinator's Raft, with its own shaded gRPC"},
                {"Jackson", pomProperty("jackson.version"), "`mailbox-json`, MainLoop"},
                {"Micrometer", pomProperty("micrometer.version"), "metrics"},
                {"Caffeine", pomProperty("caffeine.version"), "MainLoop's memory of completed requests"},
                {"picocli", pomProperty("picocli.version"), "`mailboxctl`"},
                {"Spring Boot", pomProperty("spring-boot.version"), "the starter ([spring-boot.md](../spring-boot.md))"},
                {"OpenTelemetry", pomProperty("opentelemetry.version"), "`mailbox-opentelemetry` "
                        + "([tracing.md](../tracing.md))"},
        };
        StringBuilder b = new StringBuilder("| what | version | notes |\n| --- | --- | --- |\n");
        for (String[] r : rows) {
            b.append("| ").append(r[0]).append(" | ").append(r[1]).append(" | ").append(r[2]).append(" |\n");
        }
        return b.toString().stripTrailing();
    }

    // ---- the SQS endpoint -------------------------------------------------------------------------------------

    private static String read(String path) {
        try {
            return Files.readString(Docs.root().resolve(path), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the endpoint's actions as its dispatcher has them: served, or refused as unsupported */
    static String sqsActions() {
        String src = read("sqs-endpoint/src/main/java/dev/mailbox/sqsendpoint/internal/Actions.java");
        Set<String> served = new java.util.TreeSet<>();
        Matcher c = Pattern.compile("case \"([A-Za-z]+)\" ->").matcher(src);
        while (c.find()) {
            served.add(c.group(1));
        }
        Set<String> refused = new java.util.TreeSet<>();
        Matcher u = Pattern.compile("UNSUPPORTED = Set\\.of\\(([^;]*)\\);", Pattern.DOTALL).matcher(src);
        if (u.find()) {
            Matcher q = Pattern.compile("\"([A-Za-z]+)\"").matcher(u.group(1));
            while (q.find()) {
                refused.add(q.group(1));
            }
        }
        if (served.isEmpty() || !u.find(0)) {
            // an empty UNSUPPORTED (every action served) is read as such; no UNSUPPORTED at all is a change to look at
            throw new IllegalStateException("could not read the endpoint's actions from Actions.java");
        }
        Set<String> all = new java.util.TreeSet<>(served);
        all.addAll(refused);
        StringBuilder b = new StringBuilder("| action | served |\n| --- | --- |\n");
        for (String a : all) {
            b.append("| ").append(a).append(" | ").append(served.contains(a) ? "yes" : "no: `UnsupportedOperation`")
                    .append(" |\n");
        }
        return b.toString().stripTrailing();
    }

    /** @return a Javadoc's first sentence, or its first clause when that sentence runs long */
    static String summary(String text) {
        int dot = text.indexOf(". ");
        String first = dot > 0 ? text.substring(0, dot + 1) : text;
        int colon = first.indexOf(": ", 40);
        if (first.length() > 200 && colon > 0) {
            first = first.substring(0, colon) + ".";
        }
        first = first.strip();
        return first.endsWith(":") ? first.substring(0, first.length() - 1) + "." : first;
    }

    // ---- alerts --------------------------------------------------------------------------------------------

    /** @return the alert rules of ops/prometheus, as Prometheus reads them */
    @SuppressWarnings("unchecked")
    static String alerts() {
        Map<String, Object> file = new org.yaml.snakeyaml.Yaml().load(read("ops/prometheus/mailbox-coordinator-alerts.yml"));
        StringBuilder b = new StringBuilder("| alert | severity | fires after | what it means, what to do |\n"
                + "| --- | --- | --- | --- |\n");
        for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                Map<String, Object> labels = (Map<String, Object>) rule.getOrDefault("labels", Map.of());
                Map<String, Object> notes = (Map<String, Object>) rule.getOrDefault("annotations", Map.of());
                b.append("| `").append(rule.get("alert")).append("` | ").append(labels.getOrDefault("severity", ""))
                        .append(" | ").append(rule.getOrDefault("for", "the first evaluation")).append(" | ")
                        .append(cell(notes.getOrDefault("summary", "") + ". " + notes.getOrDefault("description", "")))
                        .append(" |\n");
            }
        }
        return b.toString().stripTrailing();
    }

    // ---- benchmarks ------------------------------------------------------------------------------------------

    /** @return every side-by-side harness of the benchmarks module, with the first sentence of its Javadoc */
    static String harnesses() {
        Path dir = Docs.root().resolve("benchmarks/src/main/java/dev/mailbox/benchmarks");
        StringBuilder b = new StringBuilder("| harness | what it measures |\n| --- | --- |\n");
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith("Harness.java")).sorted().toList()) {
                String src = Files.readString(f, StandardCharsets.UTF_8);
                if (!src.contains("public static void main(")) {
                    continue;
                }
                String name = f.getFileName().toString().replace(".java", "");
                Matcher doc = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*(?:@[^\\n]*\\s*)*public (?:final )?(?:class|record) " + name,
                        Pattern.DOTALL).matcher(src);
                String what = "";
                if (doc.find()) {
                    String text = doc.group(1).replaceAll("(?m)^\\s*\\*\\s?", " ");
                    text = text.replaceAll("(?s)<pre>.*?</pre>", " ").replaceAll("\\s+", " ").strip();
                    text = text.replaceAll("\\{@(?:link|code) ([^}]*)}", "`$1`").replaceAll("<[^>]+>", "");
                    what = summary(text);
                }
                b.append("| `").append(name).append("` | ").append(cell(what)).append(" |\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toString().stripTrailing();
    }

    // ---- the index -------------------------------------------------------------------------------------------

    /** Pages at the top of docs/ the index lists in its own sections rather than among the topic guides. */
    static final Set<String> INDEXED_ELSEWHERE = Set.of("README.md", "glossary.md", "troubleshooting.md");

    static String topicGuides() {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.list(Docs.root().resolve("docs"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                String name = f.getFileName().toString();
                if (!INDEXED_ELSEWHERE.contains(name)) {
                    b.append("- [").append(new Docs.Page(f).title()).append("](").append(name).append(")\n");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toString().stripTrailing();
    }
}
