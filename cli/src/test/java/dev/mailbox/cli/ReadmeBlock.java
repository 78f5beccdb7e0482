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
 * A bash block of README.md, between {@code <!-- NAME: begin} and {@code <!-- NAME: end -->}, run as
 * written with two changes only: {@code mailboxctl} runs this build's classes (the jar is packaged after
 * the tests), and the block's first {@code mvn} line is dropped.
 */
final class ReadmeBlock {

    private ReadmeBlock() {
    }

    /** What a block printed, and how it ended. */
    record Outcome(boolean finished, int exitValue, String output) {
    }

    /** @return the bash block marked NAME in README.md */
    static String block(String name) throws IOException {
        String readme = Files.readString(readme(), StandardCharsets.UTF_8);
        int begin = readme.indexOf("<!-- " + name + ": begin");
        int end = readme.indexOf("<!-- " + name + ": end -->");
        assertThat(begin).as("README marks the block " + name).isNotNegative();
        assertThat(end).as("README ends the block " + name).isGreaterThan(begin);
        String marked = readme.substring(begin, end);
        int open = marked.indexOf("```bash\n") + "```bash\n".length();
        int close = marked.lastIndexOf("```");
        return marked.substring(open, close).replaceFirst("(?m)^mvn .*$", "");
    }

    /** Skips the calling test unless every port the block uses is free here. */
    static void assumePortsFree(List<Integer> ports) {
        for (int port : ports) {
            Assumptions.assumeTrue(free(port), "the README block uses fixed port " + port + ", which is taken here");
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

    private static Path readme() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("README.md"))) {
            p = p.getParent();
        }
        assertThat(p).as("README.md above " + Path.of("").toAbsolutePath()).isNotNull();
        return p.resolve("README.md");
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
