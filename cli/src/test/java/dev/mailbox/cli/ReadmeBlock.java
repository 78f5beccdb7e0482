package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Shell blocks of the documentation, run by the tests. {@link #block} and {@link #run}: a bash block of a page
 * between {@code <!-- NAME: begin} and {@code <!-- NAME: end -->}, run with two changes: {@code mailboxctl} runs
 * this build's classes (the jar is packaged after the tests), and the block's first {@code mvn} line is dropped.
 * {@link #runPasted} is the docs' tutorials': every block as a reader pastes it, alias line included.
 */
final class ReadmeBlock {

    private ReadmeBlock() {
    }

    /** What a block printed, and how it ended. */
    record Outcome(boolean finished, int exitValue, String output) {
    }

    /** @return the bash block marked NAME in PAGE (a path from the repository's root, such as docs/how-to/x.md) */
    static String block(String page, String name) throws IOException {
        String text = Files.readString(root().resolve(page), StandardCharsets.UTF_8);
        int begin = text.indexOf("<!-- " + name + ": begin");
        int end = text.indexOf("<!-- " + name + ": end -->");
        assertThat(begin).as(page + " marks the block " + name).isNotNegative();
        assertThat(end).as(page + " ends the block " + name).isGreaterThan(begin);
        String marked = text.substring(begin, end);
        int open = marked.indexOf("```bash\n") + "```bash\n".length();
        int close = marked.lastIndexOf("```");
        return marked.substring(open, close).replaceFirst("(?m)^mvn .*$", "");
    }

    /** Skips the calling test unless every port the block uses is free here. */
    static void assumePortsFree(List<Integer> ports) {
        for (int port : ports) {
            Assumptions.assumeTrue(free(port), "the block uses fixed port " + port + ", which is taken here");
        }
    }

    /**
     * Runs a script with {@code set -e}, {@code mailboxctl} on the PATH as a command that execs this
     * build's java (so a background job's pid is the JVM's and {@code kill $(jobs -p)} stops it), and
     * every background job killed when it ends (and waited for, so the next block finds its ports free).
     */
    static Outcome run(Path dir, String script, long timeoutMinutes) throws IOException, InterruptedException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path command = bin.resolve("mailboxctl");
        Files.writeString(command, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java")
                + "' -Xmx256m -cp '" + System.getProperty("java.class.path") + "' " + MailboxCtl.class.getName()
                + " \"$@\"\n", StandardCharsets.UTF_8);
        assertThat(command.toFile().setExecutable(true)).isTrue();
        String prelude = "set -e\nexport PATH='" + bin + "':\"$PATH\"\n"
                + "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n";
        Path file = dir.resolve("block.sh");
        Files.writeString(file, prelude + script, StandardCharsets.UTF_8);
        Path out = dir.resolve("out.txt");
        Process bash = new ProcessBuilder("bash", file.toString()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        boolean done = bash.waitFor(timeoutMinutes, TimeUnit.MINUTES);
        if (!done) {
            bash.destroyForcibly();
            bash.waitFor();
        }
        return new Outcome(done, bash.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    /**
     * Runs blocks as a reader pastes them, one after another into one bash started in the repository's root: each
     * block is a file of its own, sourced in order, so that what one block defines (an alias, a variable, a
     * background job, the directory it changed to) the next one has. Run exactly as written, with two stand-ins:
     * the root is a directory whose {@code cli/target/mailboxctl.jar} is a launcher of this build's classes (the
     * real jar is packaged after the tests), and {@code mvn} is a command that does nothing, since the test runs
     * inside that build. Bash runs with {@code set -e}, aliases on (an interactive shell's default), and every
     * background job killed and waited for when it ends.
     */
    static Outcome runPasted(Path dir, List<String> blocks, long timeoutMinutes) throws IOException, InterruptedException {
        Path root = Files.createDirectories(dir.resolve("repository"));
        launcherJar(Files.createDirectories(root.resolve("cli/target")).resolve("mailboxctl.jar"));
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path mvn = bin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\necho \"[docs test] mvn $* is the build this test runs in: not run again\" >&2\n",
                StandardCharsets.UTF_8);
        assertThat(mvn.toFile().setExecutable(true)).isTrue();
        StringBuilder driver = new StringBuilder("set -e\nshopt -s expand_aliases\n")
                .append("export PATH='").append(bin).append("':'")
                .append(Path.of(System.getProperty("java.home"), "bin")).append("':\"$PATH\"\n")
                .append("export JDK_JAVA_OPTIONS='-Xmx256m -XX:+UseSerialGC'\n")
                .append("trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n")
                .append("cd '").append(root).append("'\n");
        for (int i = 0; i < blocks.size(); i++) {
            Path file = dir.resolve("block-" + (i + 1) + ".sh");
            Files.writeString(file, blocks.get(i), StandardCharsets.UTF_8);
            driver.append("echo '::: block ").append(i + 1).append("'\nsource '").append(file).append("'\n");
        }
        Path script = dir.resolve("tutorial.sh");
        Files.writeString(script, driver.toString(), StandardCharsets.UTF_8);
        Path out = dir.resolve("out.txt");
        Process bash = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        boolean done = bash.waitFor(timeoutMinutes, TimeUnit.MINUTES);
        if (!done) {
            bash.destroyForcibly();
            bash.waitFor();
        }
        return new Outcome(done, bash.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    /** Writes a jar that holds only a manifest: mailboxctl's main class, and this JVM's class path. */
    private static void launcherJar(Path jar) throws IOException {
        java.util.jar.Manifest manifest = new java.util.jar.Manifest();
        java.util.jar.Attributes a = manifest.getMainAttributes();
        a.put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        a.put(java.util.jar.Attributes.Name.MAIN_CLASS, MailboxCtl.class.getName());
        StringBuilder classPath = new StringBuilder();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path p = Path.of(entry).toAbsolutePath();
            // Class-Path takes URLs relative to the jar; the JVM ignores absolute ones
            String relative = jar.getParent().relativize(p).toString().replace(java.io.File.separatorChar, '/')
                    .replace(" ", "%20");
            classPath.append(relative).append(Files.isDirectory(p) ? "/" : "").append(' ');
        }
        a.put(java.util.jar.Attributes.Name.CLASS_PATH, classPath.toString().trim());
        try (var out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar), manifest)) {
            out.flush();
        }
    }

    /** @return the repository's root: the nearest directory above this one that holds README.md */
    private static Path root() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("README.md"))) {
            p = p.getParent();
        }
        assertThat(p).as("README.md above " + Path.of("").toAbsolutePath()).isNotNull();
        return p;
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
