package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Run a cluster" walkthrough works as written (see {@link ReadmeBlock}), with this test's
 * redis-server instead of 127.0.0.1:6379.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ReadmeWalkthroughTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("the README's cluster walkthrough runs as written: HELLO through node B, AGAIN after node A is killed")
    void walkthrough() throws Exception {
        ReadmeBlock.assumePortsFree(List.of(7001, 7002, 7003, 7101, 7102, 7103, 9001, 9002));
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            String script = ReadmeBlock.block("walkthrough").replace("redis://127.0.0.1:6379", redis.uri());
            ReadmeBlock.Outcome run = ReadmeBlock.run(dir, script, 4);
            assertThat(run.finished()).as("the walkthrough finished; output:\n" + run.output()).isTrue();
            assertThat(run.exitValue()).as("exit status; output:\n" + run.output()).isZero();
            assertThat(run.output()).contains("LEADER").contains("FOLLOWER");
            assertThat(run.output()).contains("HELLO").contains("AGAIN");
            assertThat(run.output()).contains("node-b");
            String r2 = Files.readString(Path.of("/tmp/mailbox-walkthrough/r2.log"), StandardCharsets.UTF_8);
            assertThat(r2).as("r2 took over").contains("acquired the lease of orders");
        }
    }
}
