package dev.mailbox.cli;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.SecurityKeys;
import dev.mailbox.coordination.settings.Settings;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * A server's security, for {@code coordinator start} and {@code node start}, from its {@link SecurityKeys}
 * settings: its certificate (served, and presented when it calls other servers), the CAs it trusts, whether it
 * requires client certificates, the tokens and access rules of its callers, and, for a node, its own token.
 */
final class ServerSecurity {

    private final Settings settings;

    /** @param settings the command's settings, holding {@link SecurityKeys}' */
    ServerSecurity(Settings settings) {
        this.settings = settings;
    }

    private @Nullable Path path(dev.mailbox.coordination.settings.Setting<Path> s) {
        return settings.settings().contains(s) ? settings.get(s) : null;
    }

    private boolean on(dev.mailbox.coordination.settings.Setting<Boolean> s) {
        return Boolean.TRUE.equals(settings.get(s));
    }

    /** @return the TLS files, or null for plaintext */
    @Nullable TlsFiles tls() {
        Path c = path(SecurityKeys.TLS_CERT);
        Path k = path(SecurityKeys.TLS_KEY);
        Path trusted = path(SecurityKeys.TLS_CA);
        boolean mutual = on(SecurityKeys.TLS_CLIENT_AUTH);
        if (c == null && k == null && trusted == null) {
            if (mutual) {
                // asked for mutual TLS: serving plaintext to anyone instead would be the opposite
                throw new IllegalArgumentException("--tls-client-auth needs the server's TLS: give --tls-cert, "
                        + "--tls-key and --tls-ca");
            }
            return null;
        }
        if (c == null || k == null) {
            throw new IllegalArgumentException("a server's TLS needs --tls-cert and --tls-key");
        }
        if (mutual && trusted == null) {
            throw new IllegalArgumentException("--tls-client-auth needs --tls-ca: the CAs that sign the clients' "
                    + "certificates");
        }
        TlsFiles.Builder b = TlsFiles.builder().keyPair(c, k);
        if (trusted != null) {
            b.trusted(trusted);
        }
        return b.requireClientCertificate(mutual).build();
    }

    /** @return the access rules, or null when authentication and authorization are off */
    @Nullable Access access() {
        Path rules = path(SecurityKeys.ACCESS);
        Path t = path(SecurityKeys.TOKENS);
        if (rules == null) {
            if (t != null) {
                throw new IllegalArgumentException("--tokens needs --access: the rules that say what each principal may do");
            }
            return null;
        }
        return Access.fromFiles(t, rules);
    }

    /** @return whether starting unsecured beyond loopback is an error */
    boolean require() {
        return on(SecurityKeys.REQUIRE_SECURITY);
    }

    /** @return how this server calls others: its certificate and CAs, and its token file, if any */
    ClientSecurity asClient() {
        TlsFiles tls = tls();
        return SecurityOptions.clientSecurity(tls == null ? null : tls.trusted(), tls == null ? null : tls.certificate(),
                tls == null ? null : tls.privateKey(), null, path(SecurityKeys.TOKEN_FILE));
    }

    /** @return an HTTPS context from this server's TLS files (metrics, SQS endpoint), or null without them */
    javax.net.ssl.@Nullable SSLContext httpsContext() {
        TlsFiles tls = tls();
        return tls == null ? null : dev.mailbox.coordination.internal.Tls.sslContext(tls);
    }
}
