package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMDCAdapter;

/** {@code --log-format json}: every line a process writes to stderr is one JSON object with the expected fields. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class JsonLogsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    @DisplayName("coordinator start --log-format json: every stderr line is a JSON object, and the node's Raft "
            + "state transition to leader is one, with node_id, from, to and term")
    void coordinatorLogsJson(@TempDir Path dir) throws Exception {
        List<JsonNode> lines = runCoordinator(dir, "--log-format", "json");
        assertThat(lines).as("stderr lines").isNotEmpty();
        for (JsonNode line : lines) {
            assertThat(line.has("time") && line.has("level") && line.has("logger") && line.has("thread")
                    && line.has("message")).as("fields of " + line).isTrue();
            assertThat(line.get("level").asText()).isIn("trace", "debug", "info", "warn", "error");
            assertThat(java.time.Instant.parse(line.get("time").asText())).isNotNull();
        }
        JsonNode toLeader = lines.stream().filter(l -> l.get("message").asText().equals("raft state transition")
                && l.path("to").asText().equals("leader")).findFirst().orElseThrow(() -> new AssertionError(
                "no transition to leader in " + lines));
        assertThat(toLeader.get("level").asText()).isEqualTo("info");
        assertThat(toLeader.get("node_id").asText()).isEqualTo("n1");
        assertThat(toLeader.get("from").asText()).isIn("follower", "candidate");
        assertThat(toLeader.get("term").isNumber()).as("the term is a JSON number").isTrue();
        assertThat(toLeader.get("term").asLong()).isPositive();
        assertThat(toLeader.get("logger").asText()).isEqualTo("dev.mailbox.coordination.server.CoordinatorNode");
    }

    @Test
    @DisplayName("the config file's log-format=json key does the same")
    void configKey(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("n1.properties");
        Files.writeString(config, "log-format=json\n");
        List<JsonNode> lines = runCoordinator(dir, "--config", config.toString());
        assertThat(lines).anySatisfy(l -> assertThat(l.get("message").asText()).isEqualTo("raft state transition"));
    }

    @Test
    @DisplayName("a log format other than text or json is a usage error naming the flag, for coordinator and node")
    void badFormat() {
        for (String command : List.of("coordinator", "node")) {
            StringWriter err = new StringWriter();
            int code = MailboxCtl.commandLine().setErr(new PrintWriter(err)).execute(command, "start", "--log-format",
                    "xml");
            assertThat(code).isEqualTo(2);
            assertThat(err.toString()).contains("--log-format (key log-format) must be text or json, was 'xml'");
        }
    }

    @Test
    @DisplayName("a line holds the message formatted, the exception's stack trace, MDC entries and key-values, "
            + "with quotes, backslashes and newlines escaped")
    void lineFormat() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        BasicMDCAdapter mdc = new BasicMDCAdapter();
        JsonLogProvider.JsonLogger log = new JsonLogProvider.JsonLogger("t.logger", Level.INFO,
                new PrintStream(bytes, true, StandardCharsets.UTF_8), mdc);
        mdc.put("request", "r-1");
        log.warn("a \"quoted\" {} with\na newline\\", "value", new IllegalStateException("boom"));
        mdc.clear();
        log.atInfo().addKeyValue("node_id", "n1").addKeyValue("term", 7L).addKeyValue("ok", true)
                .log("state {}", "changed");
        log.debug("below the threshold");
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(2);
        JsonNode first = JSON.readTree(lines[0]);
        assertThat(first.get("level").asText()).isEqualTo("warn");
        assertThat(first.get("logger").asText()).isEqualTo("t.logger");
        assertThat(first.get("message").asText()).isEqualTo("a \"quoted\" value with\na newline\\");
        assertThat(first.get("exception").asText()).startsWith("java.lang.IllegalStateException: boom")
                .contains("at dev.mailbox.cli.JsonLogsTest");
        assertThat(first.get("request").asText()).isEqualTo("r-1");
        assertThat(first.get("thread").asText()).isEqualTo(Thread.currentThread().getName());
        JsonNode second = JSON.readTree(lines[1]);
        assertThat(second.get("message").asText()).isEqualTo("state changed");
        assertThat(second.get("node_id").asText()).isEqualTo("n1");
        assertThat(second.get("term").isNumber()).isTrue();
        assertThat(second.get("term").asLong()).isEqualTo(7);
        assertThat(second.get("ok").isBoolean()).isTrue();
        assertThat(second.has("request")).isFalse();
    }

    /** Starts a standalone coordinator child with these arguments, waits until it leads, stops it, parses stderr. */
    private static List<JsonNode> runCoordinator(Path dir, String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), MailboxCtl.class.getName(),
                "coordinator", "start", "--id", "n1", "--raft", "127.0.0.1:" + freePort(),
                "--control-plane", "127.0.0.1:" + freePort(), "--data-dir", dir.resolve("n1").toString(),
                // the warm-up's throwaway members would log their own elections first (as JSON too)
                "--warm-up", "false"));
        cmd.addAll(List.of(extra));
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // started (its shutdown hook is in place) and leading
            while (!Files.readString(err).contains("\"to\":\"leader\"")
                    || !Files.readString(out).contains("coordinator n1 of cluster")) {
                if (!p.isAlive() || System.nanoTime() - deadline > 0) {
                    throw new AssertionError("no transition to leader logged; stdout:\n" + Files.readString(out)
                            + "\nstderr:\n" + Files.readString(err));
                }
                Thread.sleep(50); // another process writes the file: nothing to wait on
            }
        } finally {
            p.destroy(); // SIGTERM: the shutdown hook stops the node, and logs as it goes
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(err, StandardCharsets.UTF_8)) {
            try {
                JsonNode node = JSON.readTree(line);
                assertThat(node.isObject()).as(line).isTrue();
                lines.add(node);
            } catch (IOException e) {
                throw new AssertionError("a stderr line that is not JSON: " + line, e);
            }
        }
        return lines;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
