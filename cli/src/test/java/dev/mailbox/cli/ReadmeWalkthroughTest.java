package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Run a cluster" walkthrough works as written: its bash block runs line for line, with two
 * changes only: {@code mailboxctl} runs this build's classes (the jar is packaged after the tests), and
 * the Redis URL is this test's redis-server instead of 127.0.0.1:6379.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ReadmeWalkthroughTest {

    private static final String BEGIN = "<!-- walkthrough: begin";
    private static final String END = "<!-- walkthrough: end -->";

    @TempDir
    Path dir;

    @Test
    @DisplayName("the README's cluster walkthrough runs as written: HELLO through node B, AGAIN after node A is killed")
    void walkthrough() throws Exception {
        List<Integer> ports = List.of(7001, 7002, 7003, 7101, 7102, 7103, 9001, 9002);
        for (int port : ports) {
            Assumptions.assumeTrue(free(port), "the walkthrough uses fixed port " + port + ", which is taken here");
        }
        String block = block(Files.readString(readme(), StandardCharsets.UTF_8));
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            String script = block.replace("redis://127.0.0.1:6379", redis.uri())
                    .replaceFirst("(?m)^mvn .*$", "");
            // mailboxctl as a command that execs java, as the README's alias does, so a background job's pid is
            // the JVM's and `kill $(jobs -p)` stops it
            Path bin = Files.createDirectories(dir.resolve("bin"));
            Path command = bin.resolve("mailboxctl");
            Files.writeString(command, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java")
                    + "' -Xmx256m -cp '" + System.getProperty("java.class.path") + "' " + MailboxCtl.class.getName()
                    + " \"$@\"\n", StandardCharsets.UTF_8);
            command.toFile().setExecutable(true);
            String prelude = "set -e\nexport PATH='" + bin + "':\"$PATH\"\n"
                    + "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n";
            Path file = dir.resolve("walkthrough.sh");
            Files.writeString(file, prelude + script, StandardCharsets.UTF_8);
            Process bash = new ProcessBuilder("bash", file.toString()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("out.txt").toFile()).start();
            boolean done = bash.waitFor(4, TimeUnit.MINUTES);
            String out = Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8);
            if (!done) {
                bash.destroyForcibly();
            }
            assertThat(done).as("the walkthrough finished; output:\n" + out).isTrue();
            assertThat(bash.exitValue()).as("exit status; output:\n" + out).isZero();
            assertThat(out).contains("LEADER").contains("FOLLOWER");
            assertThat(out).contains("HELLO").contains("AGAIN");
            assertThat(out).contains("node-b");
            String r2 = Files.readString(Path.of("/tmp/mailbox-walkthrough/r2.log"), StandardCharsets.UTF_8);
            assertThat(r2).as("r2 took over").contains("acquired the lease of orders");
        }
    }

    private static String block(String readme) {
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        assertThat(begin).as("README marks the walkthrough").isNotNegative();
        String marked = readme.substring(begin, end);
        int open = marked.indexOf("```bash\n") + "```bash\n".length();
        int close = marked.lastIndexOf("```");
        return marked.substring(open, close);
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
