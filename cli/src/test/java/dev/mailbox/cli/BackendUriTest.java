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

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cli = MailboxCtl.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        assertThat(code).as("%s: %s", String.join(" ", args), err).isZero();
        return new String[] {out.toString(), err.toString()};
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
}
