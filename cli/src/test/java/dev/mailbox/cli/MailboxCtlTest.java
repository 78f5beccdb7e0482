package dev.mailbox.cli;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;


import static org.assertj.core.api.Assertions.assertThat;

class MailboxCtlTest {

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    @DisplayName("tour walks through send, redelivery, a stale handle, ack and dead-lettering")
    void tour() {
        CliRun r = run("tour", "--visibility-ms", "200");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("sent message")
                .contains("delivery=1 body=Order[id=o-1")
                .contains("while it is in flight, another receive gets: []")
                .contains("delivery=2 body=Order[id=o-1")
                .containsPattern("refused: receipt handle \\S+ of message \\S+ in mailbox 'orders' is stale")
                .contains("acknowledged; count is now 0")
                .contains("receive 3: nothing left in 'orders' (count 0)")
                .contains("'orders-dlq' holds")
                .contains("orders: 0, orders-dlq: 0")
                .contains("answer: Quote[orderId=q-1, cents=2700]")
                .contains("answer: Quote[orderId=q-2, cents=450]")
                .contains("error:  request")
                .contains("java.lang.IllegalArgumentException: quantity must be positive, was -2")
                .contains("mainloop.DeadlineExceeded")
                .contains("stopped cleanly: true; 'quotes' holds 0");
    }

    @Test
    @DisplayName("tour refuses an out-of-range option with a message naming it")
    void tourBadOption() {
        CliRun r = run("tour", "--visibility-ms", "0");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--visibility-ms must be between 1 and 60000");
    }

    @Test
    @DisplayName("without a subcommand it prints usage listing demo")
    void usage() {
        CliRun r = run();

        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("mailboxctl").contains("demo").contains("tour").contains("coordinator")
                .contains("leases").contains("routes").contains("namespaces").contains("nodes").contains("send");
    }

    @Test
    @DisplayName("a file that does not exist is named as missing, not printed bare")
    void missingFile() {
        CliRun config = run("coordinator", "start", "--config", "/nonexistent/mailbox.properties");
        assertThat(config.exitCode()).isNotZero();
        assertThat(config.err()).contains("/nonexistent/mailbox.properties").containsIgnoringCase("no such file");

        CliRun backup = run("cluster", "import", "/nonexistent/backup.snap", "-c", "127.0.0.1:1");
        assertThat(backup.exitCode()).isNotZero();
        assertThat(backup.err()).contains("/nonexistent/backup.snap").containsIgnoringCase("no such file");
    }

    @Test
    @DisplayName("routes watch refuses a negative --for-ms instead of watching forever")
    void negativeWatchDuration() {
        CliRun r = run("routes", "watch", "--for-ms", "-5", "-c", "127.0.0.1:1", "--timeout-ms", "200");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--for-ms").contains("-5");
    }

    @Test
    @DisplayName("call without a BODY is a usage error naming it, not a NullPointerException")
    void callWithoutBody() {
        CliRun r = run("call", "node://127.0.0.1:1/orders");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("BODY").doesNotContain("NullPointer").doesNotContain("null");
    }

    @Test
    @DisplayName("node start refuses a config file's idle-close-ms that is not a number, naming the key")
    void badIdleCloseKey(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path config = dir.resolve("node.properties");
        java.nio.file.Files.writeString(config, "idle-close-ms=5m\n");
        CliRun r = run("node", "start", "--config", config.toString(), "-c", "127.0.0.1:1");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("idle-close-ms").contains("'5m'");
    }

    @Test
    @DisplayName("node start refuses a max-waiting-receives out of range, from the flag or the config file, naming it")
    void badMaxWaitingReceives(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        CliRun flag = run("node", "start", "--max-waiting-receives", "0", "-c", "127.0.0.1:1");
        assertThat(flag.exitCode()).isEqualTo(2);
        assertThat(flag.err()).contains("--max-waiting-receives").contains("'0'").contains("1000000");
        java.nio.file.Path config = dir.resolve("node.properties");
        java.nio.file.Files.writeString(config, "max-waiting-receives=lots\n");
        CliRun key = run("node", "start", "--config", config.toString(), "-c", "127.0.0.1:1");
        assertThat(key.exitCode()).isEqualTo(2);
        assertThat(key.err()).contains("max-waiting-receives").contains("'lots'");
    }
}
