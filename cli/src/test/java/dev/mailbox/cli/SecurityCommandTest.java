package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.server.Access;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mailboxctl security token}: the tokens file it appends to stays one principal per line. */
class SecurityCommandTest {

    @TempDir
    Path dir;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    @DisplayName("a token added to a tokens file whose last line has no newline starts a line of its own")
    void appendsAfterUnterminatedLine() throws Exception {
        Path tokens = dir.resolve("tokens");
        String ops = Access.tokenLine("ops", "ops-token");
        Files.writeString(tokens, ops, StandardCharsets.UTF_8); // written by hand or by a tool: no trailing newline
        Files.writeString(dir.resolve("access"), "ops admin *\napp client orders\n", StandardCharsets.UTF_8);

        CliRun r = run("security", "token", "app", "--tokens", tokens.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        List<String> lines = Files.readAllLines(tokens, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).isEqualTo(ops);
        assertThat(lines.get(1)).startsWith("app:");
        // and the servers read it: both principals authenticate
        Access access = Access.fromFiles(tokens, dir.resolve("access"));
        assertThat(access).isNotNull();
    }

    @Test
    @DisplayName("tokens appended to a new or newline-terminated file each take one line")
    void appendsToNewFile() throws Exception {
        Path tokens = dir.resolve("tokens");
        assertThat(run("security", "token", "a", "--tokens", tokens.toString()).exitCode()).isZero();
        assertThat(run("security", "token", "b", "--tokens", tokens.toString()).exitCode()).isZero();
        List<String> lines = Files.readAllLines(tokens, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("a:");
        assertThat(lines.get(1)).startsWith("b:");
    }
}
