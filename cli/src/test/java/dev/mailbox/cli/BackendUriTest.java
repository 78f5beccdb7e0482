package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The mailbox commands against real Redis and a real SQS-compatible server, by URI. */
class BackendUriTest {

    /** Runs mailboxctl, which must succeed; returns {stdout, stderr}. */
    private static String[] run(String... args) {
        CliRun r = CliRun.of(args);
        assertThat(r.exitCode()).as("%s: %s", String.join(" ", args), r.err()).isZero();
        return new String[] {r.out(), r.err()};
    }

    private static void roundTrip(String uri) {
        run("send", uri, "one", "two");
        assertThat(run("count", uri)[0]).contains(" 2");
        assertThat(run("receive", uri, "-n", "1", "--wait-ms", "2000", "-o", "json")[0]).contains("\"body\" : \"one\"");
        assertThat(run("purge", uri)[0]).containsPattern("[12]");
        assertThat(run("count", uri, "-o", "json")[0]).contains("\"count\" : 0");
    }

    @Test
    @DisplayName("redis://host:port/name")
    void redis() {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            roundTrip("redis://" + redis.host() + ":" + redis.port() + "/cli-" + UUID.randomUUID());
        }
    }

    @Test
    @DisplayName("sqs://queue?endpoint=... on embedded ElasticMQ")
    void sqs() {
        ElasticMqServer sqs = ElasticMqServer.shared();
        roundTrip("sqs://cli-" + UUID.randomUUID().toString().substring(0, 8) + "?region=us-east-1&create&endpoint="
                + sqs.endpoint());
    }

    @Test
    @DisplayName("memory:name lives for one command")
    void memory() {
        run("send", "memory:x", "gone");
        assertThat(run("count", "memory:x")[0]).contains(" 0");
    }

    @Test
    @DisplayName("a node's memory backend opens a mailbox whose name ends with .fifo as a FIFO mailbox, any other as a"
            + " standard one")
    void memoryFifoByName() {
        try (NodeBackend memory = NodeBackend.parse("memory")) {
            try (var fifo = memory.open("orders.fifo@node-a"); var standard = memory.open("orders@node-a")) {
                assertThat(fifo.capabilities().fifo()).isTrue();
                assertThat(standard.capabilities().fifo()).isFalse();
            }
        }
    }

    @Test
    @DisplayName("a node's SQS backend opens an id ending with .fifo as a FIFO mailbox on the queue of that name")
    void sqsFifoByName() {
        ElasticMqServer server = ElasticMqServer.shared();
        String queue = "node-" + UUID.randomUUID().toString().substring(0, 8);
        try (NodeBackend sqs = NodeBackend.parse("sqs://?region=us-east-1&create&endpoint=" + server.endpoint())) {
            try (var fifo = sqs.open(queue + ".fifo"); var standard = sqs.open(queue)) {
                assertThat(fifo.capabilities().fifo()).isTrue();
                assertThat(standard.capabilities().fifo()).isFalse();
                fifo.send("x".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        dev.mailbox.api.SendOptions.defaults().withGroupId("g"));
                assertThat(fifo.approximateCount()).isEqualTo(1);
                assertThat(standard.approximateCount()).as("another queue").isZero();
            }
        }
    }

    @Test
    @DisplayName("a backend URI's password never shows where the node prints its backend")
    void passwordHidden() {
        try (NodeBackend redis = NodeBackend.parse("redis://default:hunter2@127.0.0.1:6379/0");
             NodeBackend sqs = NodeBackend.parse("sqs://?region=us-east-1&access-key=AK&secret-key=s3cret")) {
            assertThat(redis.toString()).doesNotContain("hunter2").contains("127.0.0.1:6379");
            assertThat(sqs.toString()).doesNotContain("s3cret");
        }
        assertThat(NodeBackend.redact("node://127.0.0.1:9000/orders@node-a")).as("an id with '@' is not a password")
                .isEqualTo("node://127.0.0.1:9000/orders@node-a");
        assertThat(NodeBackend.redact("redis-cluster://127.0.0.1:7000,127.0.0.1:7001"))
                .isEqualTo("redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
        assertThat(NodeBackend.redact("redis://u:TOP@SECRET@h:1/x")).doesNotContain("TOP").doesNotContain("SECRET");
        assertThat(NodeBackend.redact("redis://:TOP/SECRET@h:1/x")).doesNotContain("TOP").doesNotContain("SECRET");
        assertThat(NodeBackend.redact("rediss://user:pw@h:1")).isEqualTo("rediss://user:***@h:1");
        assertThat(NodeBackend.redact("sqs://q?secret%2Dkey=s3cret&region=r")).doesNotContain("s3cret")
                .contains("region=r");
    }

    @Test
    @DisplayName("redis://:PASSWORD@host:port/name authenticates with the password the URI gives")
    void redisWithPassword() {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            redis.call("CONFIG", "SET", "requirepass", "s3cret-pw"); // after start: the testkit's readiness PING has none
            roundTrip("redis://:s3cret-pw@" + redis.host() + ":" + redis.port() + "/cli-" + UUID.randomUUID());
        }
    }

    @Test
    @DisplayName("a malformed URI is refused without echoing the secret key or password it holds")
    void refusedUriHidesSecrets() {
        for (String uri : new String[] {"sqs://?region=us-east-1&access-key=AK&secret-key=TOPSECRET",
                "redis://:TOPSECRET@127.0.0.1:6379", "nope://:TOPSECRET@x/y?secret-key=TOPSECRET"}) {
            StringWriter err = new StringWriter();
            var cli = MailboxCtl.commandLine();
            cli.setOut(new PrintWriter(new StringWriter(), true));
            cli.setErr(new PrintWriter(err, true));
            int code = cli.execute("send", uri, "x");
            assertThat(code).as(uri).isEqualTo(2);
            assertThat(err.toString()).as(uri).startsWith("mailboxctl: ").doesNotContain("TOPSECRET");
        }
        for (String uri : new String[] {"nope://:TOPSECRET@x", "redis://:TOPSECRET@/0", "redis://u:TOP@SECRET@h:1/x",
            "redis://:TOP/SECRET@h:1/x", "sqs://q?region=us-east-1&secret%2Dkey=TOPSECRET&bad=%"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> NodeBackend.parse(uri))
                    .isInstanceOf(IllegalArgumentException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("TOPSECRET"));
        }
    }
}
