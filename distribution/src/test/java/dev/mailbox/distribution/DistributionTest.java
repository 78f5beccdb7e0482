package dev.mailbox.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mailboxctl archive as a user gets it: unpacked with tar, run with no {@code java} on the PATH and no
 * JAVA_HOME, so everything it runs, the demo's child JVMs included, must come from its own runtime. Runs after
 * {@code package} (the surefire execution is bound to integration-test); the build passes the archive's path.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DistributionTest {

    static final String VERSION = System.getProperty("mailbox.version");
    static final Path ARCHIVE = Path.of(System.getProperty("mailbox.archive"));
    static final Path DOCKERFILE = Path.of(System.getProperty("mailbox.dockerfile"));

    @TempDir
    static Path work;
    static Path home;
    static Map<String, String> noJava;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(ARCHIVE).as("the archive the build made").isRegularFile();
        Path unpacked = Files.createDirectories(work.resolve("unpacked"));
        Process tar = new ProcessBuilder("tar", "-xzf", ARCHIVE.toString(), "-C", unpacked.toString())
                .redirectErrorStream(true).start();
        String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor()).as("tar: " + out).isZero();
        try (Stream<Path> top = Files.list(unpacked)) {
            List<Path> dirs = top.toList();
            assertThat(dirs).as("one top directory").hasSize(1);
            home = dirs.get(0);
        }
        noJava = environmentWithoutJava(work.resolve("path"));
    }

    @Test
    @DisplayName("the archive holds the launcher, a runtime, the jars, and the licence files")
    void layout() throws IOException {
        assertThat(home.getFileName().toString()).isEqualTo("mailboxctl-" + VERSION);
        assertThat(home.resolve("bin/mailboxctl")).isRegularFile().isExecutable();
        assertThat(home.resolve("runtime/bin/java")).isRegularFile().isExecutable();
        // ProcessBuilder starts children through it: without the execute bit the demo cannot start its runners
        assertThat(home.resolve("runtime/lib/jspawnhelper")).isRegularFile().isExecutable();
        assertThat(home.resolve("lib/cli-" + VERSION + ".jar")).isRegularFile();
        assertThat(home.resolve("LICENSE")).content().contains("Apache License", "Version 2.0, January 2004");
        assertThat(home.resolve("NOTICE")).isRegularFile();
        assertThat(home.resolve("THIRD-PARTY.txt")).isRegularFile();
        assertThat(home.resolve("runtime/legal")).as("OpenJDK's notices").isDirectory();
    }

    @Test
    @DisplayName("THIRD-PARTY.txt names every bundled jar with its licence, and NOTICE every bundled project")
    void attributions() throws IOException {
        // "(Apache-2.0) Netty/Buffer (io.netty:netty-buffer:4.1.115.Final - https://netty.io/)"
        Pattern entry = Pattern.compile("^\\s+(\\(.+\\)) .* \\(([^:\\s]+):([^:\\s]+):([^\\s]+) - .*\\)$");
        Map<String, String> groupOfJar = new HashMap<>();
        for (String line : Files.readAllLines(home.resolve("THIRD-PARTY.txt"))) {
            Matcher m = entry.matcher(line);
            if (m.matches()) {
                groupOfJar.put(m.group(3) + "-" + m.group(4), m.group(2));
            }
        }
        String notice = Files.readString(home.resolve("NOTICE"));
        Set<String> unlisted = new TreeSet<>();
        Set<String> unattributed = new TreeSet<>();
        List<String> jars;
        try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
            jars = lib.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(jars).hasSizeGreaterThan(50);
        for (String jar : jars) {
            String base = jar.substring(0, jar.length() - ".jar".length());
            String group = groupOfJar.entrySet().stream().filter(e -> base.equals(e.getKey())
                    || base.startsWith(e.getKey() + "-")).map(Map.Entry::getValue).findFirst().orElse(null);
            if (group == null) {
                unlisted.add(jar);
            } else if (!group.equals("dev.mailbox") && !notice.contains(group)) {
                unattributed.add(group + " (" + jar + ")");
            }
        }
        assertThat(unlisted).as("jars in lib/ that THIRD-PARTY.txt does not list").isEmpty();
        assertThat(unattributed).as("bundled groupIds the top-level NOTICE does not name: add them there").isEmpty();
    }

    @Test
    @DisplayName("with no java on the PATH, mailboxctl --version runs on its own runtime, also through a symlink")
    void versionWithoutJava() throws Exception {
        assertThat(run(List.of("sh", "-c", "command -v java || echo none"), noJava).trim())
                .as("java is hidden from the PATH").isEqualTo("none");
        String expectedCommit = System.getProperty("mailbox.commit", "");
        for (Path launcher : List.of(home.resolve("bin/mailboxctl"), symlink())) {
            List<String> lines = run(List.of(launcher.toString(), "--version"), noJava).lines().toList();
            assertThat(lines).as("--version through " + launcher).hasSize(3);
            assertThat(lines.get(0)).isEqualTo("mailboxctl " + VERSION);
            assertThat(lines.get(1)).isEqualTo("commit " + (expectedCommit.isBlank() || expectedCommit.startsWith("${")
                    ? "unknown" : expectedCommit));
            assertThat(lines.get(2)).startsWith("java 17").endsWith(" at " + home.resolve("runtime").toRealPath());
        }
    }

    @Test
    @DisplayName("with no java on the PATH, the demo runs to the takeover and its runner JVMs are the bundled runtime")
    void demoWithoutJava() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/mailboxctl").toString(), "demo").redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(noJava);
        Process demo = pb.start();
        Path runtime = home.resolve("runtime").toRealPath();
        Pattern started = Pattern.compile("^started (runner-\\d) \\(pid (\\d+)\\)$");
        List<String> out = new ArrayList<>();
        Map<String, String> runnerCommands = new HashMap<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                out.add(line);
                Matcher m = started.matcher(line);
                if (m.matches()) {
                    // the runner lives until the demo kills or stops it, later: it is there to be looked at now
                    ProcessHandle.of(Long.parseLong(m.group(2))).flatMap(h -> h.info().command())
                            .ifPresent(c -> runnerCommands.put(m.group(1), c));
                }
            }
        } finally {
            if (!demo.waitFor(30, TimeUnit.SECONDS)) {
                demo.destroyForcibly();
            }
        }
        String all = String.join("\n", out);
        assertThat(demo.exitValue()).as(all).isZero();
        assertThat(out).as(all).anyMatch(l -> l.startsWith("takeover: runner-2 holds"));
        assertThat(runnerCommands).as("the runner JVMs the demo started").containsOnlyKeys("runner-1", "runner-2");
        assertThat(runnerCommands.values()).allSatisfy(c -> assertThat(Path.of(c)).startsWith(runtime));
    }

    @Test
    @DisplayName("the Dockerfile pins its base by digest and unpacks this archive to where its entrypoint points")
    void dockerfile() throws IOException {
        List<String> instructions = instructions(Files.readString(DOCKERFILE));
        List<String> from = instructions.stream().filter(i -> i.startsWith("FROM ")).toList();
        assertThat(from).as("FROM lines").isNotEmpty()
                .allSatisfy(f -> assertThat(f).matches("FROM \\S+@sha256:[0-9a-f]{64}( AS \\w+)?"));

        // COPY <glob> /tmp/ takes the archive: its glob must match the archive this build made, and only it
        String copy = instructions.stream().filter(i -> i.matches("COPY (?!--from).*")).findFirst().orElseThrow();
        String[] copyArgs = copy.split("\\s+");
        assertThat(copyArgs).hasSize(3);
        assertThat(glob(copyArgs[1]).matcher(ARCHIVE.getFileName().toString()).matches())
                .as(copyArgs[1] + " matches " + ARCHIVE.getFileName()).isTrue();
        try (Stream<Path> siblings = Files.list(ARCHIVE.getParent())) {
            assertThat(siblings.map(p -> p.getFileName().toString()).filter(n -> glob(copyArgs[1]).matcher(n).matches()))
                    .as("files the COPY glob takes from the build context").hasSize(1);
        }
        // RUN ... tar -xzf /tmp/<glob> -C <dir> --strip-components=1: the archive's one top directory becomes <dir>
        Matcher tar = Pattern.compile("tar -xzf " + Pattern.quote(copyArgs[2]) + "(\\S+) -C (\\S+) --strip-components=1")
                .matcher(instructions.stream().filter(i -> i.startsWith("RUN ") && i.contains("tar ")).findFirst()
                        .orElseThrow());
        assertThat(tar.find()).as("the RUN that unpacks the archive").isTrue();
        assertThat(tar.group(1)).isEqualTo(copyArgs[1]);
        String installed = tar.group(2);
        assertThat(instructions).contains("COPY --from=unpack " + installed + " " + installed);

        // ENTRYPOINT ["<installed>/bin/mailboxctl"]: a file of the archive, executable
        String entrypoint = instructions.stream().filter(i -> i.startsWith("ENTRYPOINT ")).findFirst().orElseThrow();
        Matcher exec = Pattern.compile("ENTRYPOINT \\[\"([^\"]+)\"]").matcher(entrypoint);
        assertThat(exec.matches()).as("exec form: " + entrypoint).isTrue();
        assertThat(exec.group(1)).startsWith(installed + "/");
        assertThat(home.resolve(exec.group(1).substring(installed.length() + 1))).isRegularFile().isExecutable();
        assertThat(instructions).anyMatch(i -> i.startsWith("ENV ") && i.contains("PATH=" + installed + "/bin:"));
        assertThat(instructions.stream().filter(i -> i.startsWith("USER ")).findFirst().orElseThrow())
                .as("runs unprivileged").doesNotMatch("USER (0|root)(:.*)?");

        // the runtime is for the image's platform: Linux (ELF) on x86-64, as the COPY glob says
        assertThat(copyArgs[1]).endsWith("-linux-x86_64.tar.gz");
        byte[] header = new byte[20];
        try (InputStream in = Files.newInputStream(home.resolve("runtime/bin/java"))) {
            assertThat(in.read(header)).isEqualTo(20);
        }
        assertThat(new String(header, 1, 3, StandardCharsets.US_ASCII)).as("ELF").isEqualTo("ELF");
        assertThat((header[18] & 0xff) | (header[19] & 0xff) << 8).as("e_machine x86-64").isEqualTo(0x3e);
    }

    /** The Dockerfile's instructions, continuation lines joined, comments and blank lines left out. */
    static List<String> instructions(String dockerfile) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : dockerfile.split("\n")) {
            String t = line.strip();
            if (t.startsWith("#") || (t.isEmpty() && current.length() == 0)) {
                continue;
            }
            boolean continues = t.endsWith("\\");
            current.append(continues ? t.substring(0, t.length() - 1).strip() : t).append(continues ? " " : "");
            if (!continues) {
                out.add(current.toString().replaceAll("\\s+", " ").strip());
                current.setLength(0);
            }
        }
        return out;
    }

    private static Pattern glob(String glob) {
        return Pattern.compile(Stream.of(glob.split("\\*", -1)).map(Pattern::quote).collect(Collectors.joining("[^/]*")));
    }

    private static Path symlink() throws IOException {
        Path dir = Files.createDirectories(work.resolve("usr-local-bin"));
        Path link = dir.resolve("mailboxctl");
        if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            Files.createSymbolicLink(link, home.resolve("bin/mailboxctl"));
        }
        return link;
    }

    private static String run(List<String> command, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(command + ": " + out).isZero();
        return out;
    }

    /**
     * This process's environment with no JDK reachable: JAVA_HOME and the JVM option variables removed, and each
     * PATH directory that holds a JDK tool replaced by a directory of links to everything else in it.
     */
    static Map<String, String> environmentWithoutJava(Path shadows) throws IOException {
        Set<String> jdkTools;
        try (Stream<Path> bin = Files.list(Path.of(System.getProperty("java.home"), "bin"))) {
            jdkTools = bin.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
        jdkTools.add("java");
        Map<String, String> env = new HashMap<>(System.getenv());
        for (String v : List.of("JAVA_HOME", "JDK_HOME", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
                "CLASSPATH", "JAVA_OPTS")) {
            env.remove(v);
        }
        List<String> path = new ArrayList<>();
        int n = 0;
        for (String entry : env.getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path dir = Path.of(entry.isEmpty() ? "." : entry);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            boolean holdsJdk;
            try (Stream<Path> files = Files.list(dir)) {
                holdsJdk = files.anyMatch(f -> jdkTools.contains(f.getFileName().toString()));
            }
            if (!holdsJdk) {
                path.add(dir.toString());
                continue;
            }
            Path shadow = Files.createDirectories(shadows.resolve("dir" + n++));
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    String name = f.getFileName().toString();
                    if (!jdkTools.contains(name) && !Files.exists(shadow.resolve(name), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        Files.createSymbolicLink(shadow.resolve(name), f);
                    }
                }
            }
            path.add(shadow.toString());
        }
        env.put("PATH", String.join(":", path));
        return env;
    }
}
