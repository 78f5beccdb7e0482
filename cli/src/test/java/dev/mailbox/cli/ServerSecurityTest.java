package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.server.SecurityKeys;
import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@code coordinator start} and {@code node start} read their security settings: a setting an operator gave is
 * never dropped for a weaker one. (TlsFiles reads no file when it is built, so paths need not exist here.)
 */
class ServerSecurityTest {

    private static Properties config(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    /** A node's security as {@code node start} reads it: the config file's keys, then the flags given. */
    private static ServerSecurity security(Properties file, String... flagValues) {
        Settings.Builder b = Settings.builder(SecurityKeys.NODE, Settings.Profile.PROCESS);
        for (Setting<?> s : SecurityKeys.NODE) {
            if (file.getProperty(s.key()) != null) {
                b.file(s, file.getProperty(s.key()));
            }
        }
        for (int i = 0; i < flagValues.length; i += 2) {
            String flag = flagValues[i];
            b.flag(SecurityKeys.NODE.stream().filter(s -> s.flag().equals(flag)).findFirst().orElseThrow(),
                    flagValues[i + 1]);
        }
        return new ServerSecurity(b.build());
    }

    @Test
    @DisplayName("a config file's tls-client-auth or require-security that is not true or false is refused, not "
            + "read as false")
    void strictBooleanKeys() {
        Properties yes = config("tls-cert", "cert.pem", "tls-key", "key.pem", "tls-ca", "ca.pem",
                "tls-client-auth", "yes");
        assertThatThrownBy(() -> security(yes).tls()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tls-client-auth").hasMessageContaining("'yes'");

        Properties trailingSpace = config("tls-cert", "cert.pem", "tls-key", "key.pem", "tls-ca", "ca.pem",
                "tls-client-auth", "true ");
        assertThat(security(trailingSpace).tls().requireClientCertificate())
                .as("'true ' (a trailing space the properties format keeps) is true").isTrue();

        assertThatThrownBy(() -> security(config("require-security", "1")).require())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("require-security");
        assertThat(security(config("require-security", "TRUE")).require()).isTrue();
        assertThat(security(config()).require()).isFalse();
    }

    @Test
    @DisplayName("--tls-client-auth without the server's TLS files is refused, not dropped for plaintext")
    void clientAuthWithoutTls() {
        ServerSecurity flag = security(config(), "--tls-client-auth", "true");
        assertThatThrownBy(flag::tls).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--tls-client-auth").hasMessageContaining("--tls-cert");

        ServerSecurity fromFile = security(config("tls-client-auth", "true"));
        assertThatThrownBy(fromFile::tls)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--tls-client-auth");
        assertThat(security(config("tls-client-auth", "false")).tls()).as("off is plaintext, as before").isNull();

        ServerSecurity noCa = security(config(), "--tls-cert", "cert.pem", "--tls-key", "key.pem",
                "--tls-client-auth", "true");
        assertThatThrownBy(noCa::tls).as("a usage error naming the flag, exit status 2")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--tls-ca");
    }

    @Test
    @DisplayName("coordinator start refused for its security settings creates no data dir, and says why")
    void refusedSecurityCreatesNothing(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("access");
        Files.writeString(rules, "ops admin\n"); // no namespaces: does not parse
        Path data = dir.resolve("data");
        StringWriter err = new StringWriter();
        var cli = MailboxCtl.commandLine();
        cli.setOut(new PrintWriter(new StringWriter(), true));
        cli.setErr(new PrintWriter(err, true));

        int code = cli.execute("coordinator", "start", "--data-dir", data.toString(), "--access", rules.toString(),
                "--warm-up", "false");

        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("line 1");
        assertThat(Files.exists(data)).as("nothing is created for a refused start").isFalse();

        // refused by the node itself: security required, none given
        CliRun required = CliRun.of("coordinator", "start", "--data-dir", data.toString(), "--require-security",
                "--control-plane", "0.0.0.0:0", "--warm-up", "false");
        assertThat(required.exitCode()).as(required.err()).isNotZero();
        assertThat(required.err()).contains("without TLS");
        assertThat(Files.exists(data)).as("nor for one the node refuses").isFalse();
    }
}
