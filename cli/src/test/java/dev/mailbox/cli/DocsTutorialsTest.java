package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Message;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every shell block of docs/tutorials runs as a reader pastes it (see {@link ReadmeBlock#runPasted}): the blocks of
 * a tutorial one after another in one bash, alias line included. Where a tutorial needs Redis at 127.0.0.1:6379,
 * this test's own redis-server stands in for it, and that address is the only text replaced.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class DocsTutorialsTest {

    private static final String REDIS = "redis://127.0.0.1:6379";

    /** The tutorials this class runs; every tutorial with a shell block must be one of them. */
    private static final Set<String> RUN = Set.of("docs/tutorials/first-mailbox-in-a-test.md",
            "docs/tutorials/first-redis-service.md", "docs/tutorials/run-a-cluster.md");

    @TempDir
    Path dir;

    /** The Redis tutorial's body, as its service reads it. */
    record Order(String id, String item, int quantity) {
    }

    @Test
    @DisplayName("every tutorial that shows a shell block is run here")
    void everyTutorialWithShellBlocksIsRun() {
        Set<String> withShell = Docs.pages().stream().filter(p -> p.name().startsWith("docs/tutorials/"))
                .filter(p -> !shellBlocks(p.name()).isEmpty()).map(Docs.Page::name).collect(Collectors.toSet());
        assertThat(withShell).isEqualTo(RUN);
    }

    @Test
    @DisplayName("first mailbox in a test: the build block and mailboxctl tour run as pasted")
    void firstMailbox() throws Exception {
        ReadmeBlock.Outcome run = ReadmeBlock.runPasted(dir, shellBlocks("docs/tutorials/first-mailbox-in-a-test.md"), 2);
        assertThat(run.finished()).as("finished; output:%n%s", run.output()).isTrue();
        assertThat(run.exitValue()).as("exit status; output:%n%s", run.output()).isZero();
        assertThat(run.output()).contains("is stale").contains("acknowledged; count is now 0")
                .contains("dead-lettered").contains("stopped cleanly: true");
    }

    @Test
    @DisplayName("first Redis service: what the shell sends, the service's JSON codec reads")
    void firstRedisService() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            List<String> blocks = shellBlocks("docs/tutorials/first-redis-service.md").stream()
                    .map(b -> b.replace(REDIS, redis.uri())).toList();
            ReadmeBlock.Outcome run = ReadmeBlock.runPasted(dir, blocks, 2);
            assertThat(run.finished()).as("finished; output:%n%s", run.output()).isTrue();
            assertThat(run.exitValue()).as("exit status; output:%n%s", run.output()).isZero();
            assertThat(run.output().lines()).as("count prints the mailbox's count, 1").anyMatch(l -> l.matches("orders\\s+1"));
            try (RedisMailbox<Order> orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class))
                    .uri(redis.uri()).build()) {
                assertThat(orders.receive()).extracting(Message::body).containsExactly(new Order("o-3", "tea", 1));
            }
        }
    }

    @Test
    @DisplayName("run a cluster: HELLO through node B, AGAIN after node A and its runner are killed")
    void runACluster() throws Exception {
        ReadmeBlock.assumePortsFree(List.of(7011, 7012, 7013, 7111, 7112, 7113, 9011, 9012));
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            List<String> blocks = shellBlocks("docs/tutorials/run-a-cluster.md").stream()
                    .map(b -> b.replace(REDIS, redis.uri())).toList();
            ReadmeBlock.Outcome run = ReadmeBlock.runPasted(dir, blocks, 5);
            assertThat(run.finished()).as("finished; output:%n%s", run.output()).isTrue();
            assertThat(run.exitValue()).as("exit status; output:%n%s", run.output()).isZero();
            assertThat(run.output()).contains("LEADER").contains("FOLLOWER").contains("HELLO").contains("AGAIN")
                    .contains("node-b");
            String r2 = Files.readString(Path.of("/tmp/mailbox-cluster/r2.log"), StandardCharsets.UTF_8);
            assertThat(r2).as("r2 took over").contains("acquired the lease of orders");
        }
    }

    private static List<String> shellBlocks(String page) {
        return Docs.page(page).blocks().stream().filter(b -> b.language().equals("bash")).map(Docs.Block::text).toList();
    }
}
