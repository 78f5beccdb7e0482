package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets kept off the command line: {@code env:NAME} and {@code file:PATH} stand for the secret; a missing
 * variable or file is an error naming it; what holds a secret inline is recognized (and warned about).
 */
@DisplayName("Secrets from the environment or a file")
class SecretsTest {

    private static final Map<String, String> ENV = Map.of("SQS_KEYS", "AKIDA:secret-a:alice, AKIDB:secret-b",
            "EMPTY", " ");

    @Test
    @DisplayName("env:NAME and file:PATH are read (white space around dropped); anything else is the value itself")
    void read(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("uri"), "redis://:pw@127.0.0.1:6379\n");
        assertThat(Secrets.read("file:" + file, "--backend", ENV::get)).isEqualTo("redis://:pw@127.0.0.1:6379");
        assertThat(Secrets.read("env:SQS_KEYS", "--x", ENV::get)).startsWith("AKIDA:");
        assertThat(Secrets.read("memory", "--backend", ENV::get)).isEqualTo("memory");
        assertThat(Secrets.inline("memory")).isTrue();
        assertThat(Secrets.inline("env:X")).isFalse();
        assertThat(Secrets.inline("file:/x")).isFalse();
    }

    @Test
    @DisplayName("a variable not set or empty, a file missing or empty: refused, naming which")
    void missing(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> Secrets.read("env:NOPE", "--sqs-access-key", ENV::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--sqs-access-key")
                .hasMessageContaining("NOPE").hasMessageContaining("not set");
        assertThatThrownBy(() -> Secrets.read("env:EMPTY", "--x", ENV::get)).hasMessageContaining("empty");
        assertThatThrownBy(() -> Secrets.read("file:" + dir.resolve("none"), "--backend", ENV::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("none");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(() -> Secrets.read("file:" + empty, "--backend", ENV::get)).hasMessageContaining("empty");
    }

    @Test
    @DisplayName("access keys from a file (one a line, # comments) or a variable (comma-separated), next to inline ones")
    void accessKeys(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("keys"), "# the node's SQS keys\nAKIDOPS:ops-secret:ops\n\n"
                + "AKIDAPP:app-secret:app\n");
        assertThat(Secrets.accessKeys(List.of("file:" + file, "env:SQS_KEYS", "AKIDC:secret-c"), "--sqs-access-key",
                ENV::get)).containsExactly("AKIDOPS:ops-secret:ops", "AKIDAPP:app-secret:app", "AKIDA:secret-a:alice",
                "AKIDB:secret-b", "AKIDC:secret-c");
    }

    @Test
    @DisplayName("a URI holds a secret when it has a password or an SQS secret key")
    void uriSecrets() {
        assertThat(Secrets.uriHoldsSecret("redis://:pw@127.0.0.1:6379")).isTrue();
        assertThat(Secrets.uriHoldsSecret("redis://user:pw@127.0.0.1:6379/0")).isTrue();
        assertThat(Secrets.uriHoldsSecret("sqs://?region=us-east-1&access-key=K&secret-key=S")).isTrue();
        assertThat(Secrets.uriHoldsSecret("redis://127.0.0.1:6379")).isFalse();
        assertThat(Secrets.uriHoldsSecret("memory")).isFalse();
        assertThat(Secrets.uriHoldsSecret("sqs://orders?region=us-east-1&endpoint=http://127.0.0.1:9324")).isFalse();
    }

    @Test
    @DisplayName("a mailbox URI given as file:PATH is read from the file (a missing one is a usage error naming it)")
    void mailboxUriFromFile(@TempDir Path dir) throws Exception {
        Path uri = Files.writeString(dir.resolve("uri"), "memory:from-a-file\n");
        CliRun count = CliRun.of("count", "file:" + uri);
        assertThat(count.exitCode()).as(count.err()).isZero();
        assertThat(count.out()).containsPattern("from-a-file +0");
        CliRun missing = CliRun.of("count", "file:" + dir.resolve("none"));
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("none");
    }

    @Test
    @DisplayName("node start refuses --sqs-* options (or config keys) without --sqs-listen, before it starts anything")
    void sqsOptionsNeedSqsListen(@TempDir Path dir) throws Exception {
        CliRun key = CliRun.of("node", "start", "--coordinator", "127.0.0.1:1", "--sqs-access-key", "AKID:s3cr3t-value");
        assertThat(key.exitCode()).as(key.err()).isEqualTo(2);
        assertThat(key.err()).contains("--sqs-access-key").contains("--sqs-listen").doesNotContain("s3cr3t-value");
        CliRun tls = CliRun.of("node", "start", "--coordinator", "127.0.0.1:1", "--sqs-tls");
        assertThat(tls.exitCode()).as(tls.err()).isEqualTo(2);
        assertThat(tls.err()).contains("--sqs-tls").contains("--sqs-listen");
        Path config = Files.writeString(dir.resolve("node.properties"), "sqs-access-keys=AKID:secret\n");
        CliRun fromFile = CliRun.of("node", "start", "--coordinator", "127.0.0.1:1", "--config", config.toString());
        assertThat(fromFile.exitCode()).as(fromFile.err()).isEqualTo(2);
        assertThat(fromFile.err()).contains("key sqs-access-keys in --config").contains("--sqs-listen");
    }

    @Test
    @DisplayName("node and coordinator start with --require-security refuse plaintext metrics beyond loopback, and"
            + " create nothing")
    void plaintextMetricsRefused(@TempDir Path dir) throws Exception {
        CliRun node = CliRun.of("node", "start", "--coordinator", "127.0.0.1:1", "--require-security", "--metrics",
                "0.0.0.0:0");
        assertThat(node.exitCode()).as(node.err()).isEqualTo(2);
        assertThat(node.err()).contains("metrics").contains("plaintext").contains("--require-security");
        Path data = dir.resolve("data");
        CliRun coordinator = CliRun.of("coordinator", "start", "--data-dir", data.toString(), "--require-security",
                "--metrics", "0.0.0.0:0", "--warm-up", "false");
        assertThat(coordinator.exitCode()).as(coordinator.err()).isEqualTo(2);
        assertThat(coordinator.err()).contains("metrics").contains("plaintext");
        assertThat(Files.exists(data)).as("nothing created for a refused start").isFalse();
    }
}
