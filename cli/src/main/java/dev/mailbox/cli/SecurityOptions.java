package dev.mailbox.cli;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.TlsFiles;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * How a command reaches coordinators and nodes that are secured: TLS (the CAs to trust, and a client
 * certificate for servers that require one) and/or a bearer token. Each option also has an environment
 * variable, so scripts need not repeat them.
 */
final class SecurityOptions {

    @Option(names = "--tls-ca", defaultValue = "${env:MAILBOXCTL_TLS_CA}",
            description = "trust servers whose certificates these CAs signed (PEM); turns TLS on (default: "
                    + "$MAILBOXCTL_TLS_CA, else none: plaintext)")
    Path ca;

    @Option(names = "--tls-cert", defaultValue = "${env:MAILBOXCTL_TLS_CERT}",
            description = "this client's certificate chain (PEM), for servers that require one (default: "
                    + "$MAILBOXCTL_TLS_CERT, else none)")
    Path cert;

    @Option(names = "--tls-key", defaultValue = "${env:MAILBOXCTL_TLS_KEY}",
            description = "its PKCS#8 private key (PEM) (default: $MAILBOXCTL_TLS_KEY, else none)")
    Path key;

    @Option(names = "--token", defaultValue = "${env:MAILBOXCTL_TOKEN}",
            description = "a bearer token to present; prefer --token-file: options show in process lists "
                    + "(default: $MAILBOXCTL_TOKEN, else none)")
    String token;

    @Option(names = "--token-file", defaultValue = "${env:MAILBOXCTL_TOKEN_FILE}",
            description = "a file whose first line is the bearer token to present (default: "
                    + "$MAILBOXCTL_TOKEN_FILE, else none)")
    Path tokenFile;

    /** @return the client security these options describe (plaintext, no token when none is given) */
    ClientSecurity clientSecurity() {
        if (token != null && !token.isEmpty() && !token.equals(System.getenv("MAILBOXCTL_TOKEN"))) {
            Secrets.warnInline("--token", "give --token-file or $MAILBOXCTL_TOKEN");
        }
        return clientSecurity(ca, cert, key, token, tokenFile);
    }

    /** The same, from values that may come from a config file. */
    static ClientSecurity clientSecurity(Path ca, Path cert, Path key, String token, Path tokenFile) {
        // an empty environment variable (MAILBOXCTL_TLS_CA= ...) means "not set", as in a shell
        ca = unlessEmpty(ca);
        cert = unlessEmpty(cert);
        key = unlessEmpty(key);
        tokenFile = unlessEmpty(tokenFile);
        token = token == null || token.isEmpty() ? null : token;
        ClientSecurity security = ClientSecurity.none();
        if (ca != null || cert != null) {
            TlsFiles.Builder tls = TlsFiles.builder();
            if (ca != null) {
                tls.trusted(ca);
            }
            if (cert != null || key != null) {
                if (cert == null || key == null) {
                    throw new IllegalArgumentException("--tls-cert and --tls-key go together");
                }
                tls.keyPair(cert, key);
            }
            security = security.withTls(tls.build());
        }
        if (token != null && tokenFile != null) {
            throw new IllegalArgumentException("give --token or --token-file, not both");
        }
        if (token != null) {
            security = security.withToken(token);
        } else if (tokenFile != null) {
            security = security.withTokenFile(tokenFile);
        }
        return security;
    }

    private static Path unlessEmpty(Path p) {
        return p == null || p.toString().isEmpty() ? null : p;
    }
}
