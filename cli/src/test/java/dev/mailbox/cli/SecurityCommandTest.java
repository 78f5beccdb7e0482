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

        CliRun r = run("security", "token", "app", "--append-to", tokens.toString());

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
        assertThat(run("security", "token", "a", "--append-to", tokens.toString()).exitCode()).isZero();
        assertThat(run("security", "token", "b", "--append-to", tokens.toString()).exitCode()).isZero();
        List<String> lines = Files.readAllLines(tokens, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("a:");
        assertThat(lines.get(1)).startsWith("b:");
    }

    @Test
    @DisplayName("--tokens, the old name of --append-to, still appends, says it is deprecated, and is hidden from help")
    void deprecatedTokensName() throws Exception {
        Path tokens = dir.resolve("tokens");
        CliRun r = run("security", "token", "old", "--tokens", tokens.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.err()).contains("--tokens is deprecated").contains("--append-to");
        assertThat(Files.readAllLines(tokens, StandardCharsets.UTF_8)).singleElement()
                .satisfies(l -> assertThat(l).startsWith("old:"));

        CliRun both = run("security", "token", "x", "--tokens", tokens.toString(), "--append-to", tokens.toString());
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(Files.readAllLines(tokens, StandardCharsets.UTF_8)).as("nothing appended").hasSize(1);

        assertThat(run("security", "token", "--help").out()).contains("--append-to=FILE").doesNotContain("--tokens=");
    }
}
