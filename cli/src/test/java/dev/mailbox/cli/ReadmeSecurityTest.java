package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
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
 * The security how-to's example (docs/how-to/secure-a-cluster.md) works as written (see {@link ReadmeBlock}), with
 * openssl, and this test's redis-server instead of 127.0.0.1:6379.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ReadmeSecurityTest {

    private static final Path DIR = Path.of("/tmp/mailbox-secure");

    @TempDir
    Path dir;

    @Test
    @DisplayName("the security how-to's example runs as written: HELLO for the client, each refusal as the page says")
    void securedCluster() throws Exception {
        Assumptions.assumeTrue(onPath("openssl"), "the security example makes its certificates with openssl, not found");
        ReadmeBlock.assumePortsFree(List.of(7001, 7101, 9001, 9425));
        ReadmeBlock.Outcome run;
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            run = ReadmeBlock.run(dir, ReadmeBlock.block("docs/how-to/secure-a-cluster.md", "security").replace("redis://127.0.0.1:6379", redis.uri()), 4);
        }
        String out = run.output();
        assertThat(run.finished()).as("the example finished; output:\n" + out).isTrue();
        assertThat(run.exitValue()).as("exit status; output:\n" + out).isZero();
        assertThat(out).contains("LEADER").contains("HELLO");
        assertThat(out).contains("UNAUTHENTICATED").contains("PERMISSION_DENIED").contains("UNAVAILABLE");
        // over SQS: the admin's key made the queue, the client's key used it and was refused another namespace
        assertThat(out).contains("over-sqs").contains("app is not authorized to perform: sqs:GetQueueUrl")
                .contains("Status Code: 403")
                .contains("audit principal=app action=sqs:GetQueueUrl target=other outcome=REFUSED");

        // the tokens file holds hashes only; no log holds a token or a request body
        String tokens = Files.readString(DIR.resolve("tokens"), StandardCharsets.UTF_8);
        for (String who : List.of("ops", "node-a", "r1", "app")) {
            String token = Files.readString(DIR.resolve(who + ".token"), StandardCharsets.UTF_8).trim();
            assertThat(token).hasSizeGreaterThan(20);
            assertThat(tokens).contains(who + ":").doesNotContain(token);
            for (String log : List.of("n1.log", "node-a.log", "r1.log")) {
                assertThat(Files.readString(DIR.resolve(log), StandardCharsets.UTF_8)).as(log)
                        .doesNotContain(token).doesNotContain("hello");
            }
            assertThat(out).doesNotContain(token);
        }
        assertThat(Files.readString(DIR.resolve("n1.log"), StandardCharsets.UTF_8))
                .as("the coordinator's audit line for the refused namespace").contains("audit principal=app ").contains("outcome=REFUSED");
    }

    private static boolean onPath(String command) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }
}
