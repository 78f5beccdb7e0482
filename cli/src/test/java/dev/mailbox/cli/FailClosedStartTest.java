package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.tls.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operator mistakes that a coordinator or a node used to start with anyway (issue 30, findings 6 and 7): a key
 * its config file does not know, and a certificate with another certificate's key. Each is refused at start,
 * saying what is wrong, and leaves nothing behind.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FailClosedStartTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("coordinator start: an unknown key in --config is an error naming it and the nearest known key")
    void coordinatorUnknownKey() throws Exception {
        Path config = Files.writeString(dir.resolve("c.properties"), "id=n1\ninitial-cluster-sate=existing\n");
        String data = dir.resolve("data").toString();
        CliRun r = CliRun.of("coordinator", "start", "--data-dir", data, "--warm-up", "false", "--config",
                config.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("unknown key 'initial-cluster-sate' in " + config)
                .contains("did you mean 'initial-cluster-state'");
        assertThat(Files.exists(dir.resolve("data"))).as("nothing is created for a refused start").isFalse();
    }

    @Test
    @DisplayName("node start: an unknown key in --config is an error naming it and the nearest known key")
    void nodeUnknownKey() throws Exception {
        Path config = Files.writeString(dir.resolve("n.properties"), "id=node-a\nsqs-acess-keys=AKID:secret\n");
        CliRun r = CliRun.of("node", "start", "--config", config.toString(), "-c", "127.0.0.1:9");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("unknown key 'sqs-acess-keys' in " + config)
                .contains("did you mean 'sqs-access-keys'");
    }

    @Test
    @DisplayName("the nearest known key is the one fewest edits away")
    void nearest() {
        Set<String> keys = CoordinationCommands.Start.CONFIG_KEYS;
        assertThat(ConfigFile.nearest("initial-cluster-sate", keys)).isEqualTo("initial-cluster-state");
        assertThat(ConfigFile.nearest("datadir", keys)).isEqualTo("data-dir");
        assertThat(ConfigFile.nearest("tls_cert", keys)).isEqualTo("tls-cert");
        assertThat(ConfigFile.nearest("snapshotevery", keys)).isEqualTo("snapshot-every");
        assertThat(ConfigFile.distance("kitten", "sitting")).isEqualTo(3);
    }

    @Test
    @DisplayName("a certificate with another certificate's key: coordinator start and node start fail at once, naming "
            + "both files")
    void mismatchedKeyPair() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued a = ca.issue("coordinator");
        TestCertificates.Issued b = ca.issue("node-a");
        CliRun coordinator = CliRun.of("coordinator", "start", "--data-dir", dir.resolve("data").toString(),
                "--warm-up", "false", "--raft", "127.0.0.1:0", "--control-plane", "127.0.0.1:0",
                "--tls-cert", a.certificate().toString(), "--tls-key", b.key().toString(),
                "--tls-ca", ca.caCertificate().toString());
        assertThat(coordinator.exitCode()).isNotZero();
        assertThat(coordinator.err()).contains("does not belong to the certificate").contains(b.key().toString())
                .contains(a.certificate().toString());
        CliRun node = CliRun.of("node", "start", "--listen", "127.0.0.1:0", "-c", "127.0.0.1:9",
                "--tls-cert", b.certificate().toString(), "--tls-key", a.key().toString(),
                "--tls-ca", ca.caCertificate().toString());
        assertThat(node.exitCode()).isNotZero();
        assertThat(node.err()).contains("does not belong to the certificate").contains(a.key().toString());
    }
}
