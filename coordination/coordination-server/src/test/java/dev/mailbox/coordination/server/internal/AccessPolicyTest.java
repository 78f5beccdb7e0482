package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The access files: an empty one (or one of comments only) would lock every principal out, nodes and admins
 * included, so it is refused like one that does not parse: at start, and while running, where the rules in force
 * stay (issue 30, finding 7).
 */
class AccessPolicyTest {

    @TempDir
    Path dir;

    private static final String RULES = "admin admin *\nnode-a node *\n";

    @Test
    @DisplayName("an empty or comment-only rules or tokens file is refused at start, naming the file")
    void emptyFilesRefusedAtStart() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), AccessPolicy.tokenLine("admin", "t-admin") + "\n");
        for (String empty : new String[] {"", "\n  \n", "# nothing granted yet\n"}) {
            Path rules = Files.writeString(dir.resolve("rules"), empty);
            assertThatThrownBy(() -> new AccessPolicy(tokens, rules)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(rules.toString()).hasMessageContaining("holds no grants");
            Path rulesOk = Files.writeString(dir.resolve("rules-ok"), RULES);
            Path noTokens = Files.writeString(dir.resolve("tokens-empty"), empty);
            assertThatThrownBy(() -> new AccessPolicy(noTokens, rulesOk)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(noTokens.toString()).hasMessageContaining("holds no tokens");
        }
        assertThat(new AccessPolicy(null, Files.writeString(dir.resolve("rules"), RULES))
                .allows("admin", AccessPolicy.Permission.ADMIN, "*")).isTrue();
    }

    @Test
    @DisplayName("files emptied while running are not applied: the rules and tokens in force stay, as for a garbage "
            + "file")
    void emptiedWhileRunningKeepsTheOldRules() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), AccessPolicy.tokenLine("admin", "t-admin") + "\n"
                + AccessPolicy.tokenLine("node-a", "t-node") + "\n");
        Path rules = Files.writeString(dir.resolve("rules"), RULES);
        AtomicLong clock = new AtomicLong();
        AccessPolicy policy = new AccessPolicy(tokens, rules, clock::get);

        changeTo(rules, "", 10);
        changeTo(tokens, "", 10);
        clock.addAndGet(TimeUnit.SECONDS.toNanos(2)); // past the once-a-second check for changed files
        assertThat(policy.allows("node-a", AccessPolicy.Permission.NODE, "*")).isTrue();
        assertThat(policy.principalOfToken("t-node")).isEqualTo("node-a");

        changeTo(rules, "garbage\n", 20); // as before: a file that does not parse is not applied either
        clock.addAndGet(TimeUnit.SECONDS.toNanos(2));
        assertThat(policy.allows("admin", AccessPolicy.Permission.ADMIN, "*")).isTrue();

        changeTo(rules, "admin admin *\n", 30); // a good file is applied
        clock.addAndGet(TimeUnit.SECONDS.toNanos(2));
        assertThat(policy.allows("admin", AccessPolicy.Permission.ADMIN, "*")).isTrue();
        assertThat(policy.allows("node-a", AccessPolicy.Permission.NODE, "*")).isFalse();
    }

    /** Rewrites a file with a later modification time (a second's resolution on some file systems). */
    private static void changeTo(Path file, String content, int secondsLater) throws Exception {
        Files.writeString(file, content);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(secondsLater)));
    }
}
