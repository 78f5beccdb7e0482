package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@code mailboxctl runner}: options that would fail every request are refused before it starts. */
class RunnerCommandTest {

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    @DisplayName("an --exec-timeout-ms of 0 or less is refused (it would time out, then dead-letter, every request)")
    void nonPositiveExecTimeout() {
        for (String timeout : new String[] {"-5", "0"}) {
            // a runner that starts waits for its lease until stopped: a bounded wait tells the two apart
            CliRun r = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> run("runner", "--id", "r1", "--mailbox",
                    "orders", "--node", "127.0.0.1:1", "--node-id", "node-a", "--exec", "cat", "--exec-timeout-ms",
                    timeout, "-c", "127.0.0.1:1"), "the runner started with --exec-timeout-ms " + timeout);
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.err()).contains("--exec-timeout-ms").contains(timeout);
        }
    }
}
