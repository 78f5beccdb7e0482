package dev.mailbox.cli;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.server.Access;
import java.nio.file.Path;
import java.util.Properties;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * A server's security, for {@code coordinator start} and {@code node start}: its certificate (served, and
 * presented when it calls other servers), the CAs it trusts, whether it requires client certificates, the
 * tokens and access rules of its callers, and, for a node, its own token. Each option has a config-file key
 * of the same name without the dashes.
 */
final class ServerSecurity {

    @Option(names = "--tls-cert", description = "this server's certificate chain (PEM); turns TLS on")
    Path cert;
    @Option(names = "--tls-key", description = "its PKCS#8 private key (PEM)")
    Path key;
    @Option(names = "--tls-ca", description = "the CAs (PEM) that sign the cluster's and clients' certificates")
    Path ca;
    @Option(names = "--tls-client-auth", description = "require client certificates signed by --tls-ca (mutual TLS)")
    Boolean clientAuth;
    @Option(names = "--tokens", description = "the tokens file (principal:salt:hash lines; see: security token)")
    Path tokens;
    @Option(names = "--access", description = "the access rules file (principal role namespaces); turns "
            + "authentication and authorization on")
    Path access;
    @Option(names = "--token-file", description = "for a node: the file holding its own token, for its calls to the "
            + "coordinators and to other nodes")
    Path tokenFile;
    @Option(names = "--require-security", description = "refuse to start without TLS and --access when listening "
            + "beyond loopback (default: a loud warning)")
    Boolean require;

    private @Nullable Path path(@Nullable Path option, Properties p, String key) {
        return option != null ? option : p.getProperty(key) == null ? null : Path.of(p.getProperty(key));
    }

    private boolean flag(@Nullable Boolean option, Properties p, String key) {
        return option != null ? option : booleanKey(p, key);
    }

    /**
     * A config file's true/false key, read strictly: a security setting spelled "yes" or "1" is an error, never
     * silently false (which would turn mutual TLS or the security requirement off).
     *
     * @return the key's value, false when absent
     * @throws IllegalArgumentException naming the key, for any other value
     */
    static boolean booleanKey(Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null) {
            return false;
        }
        String t = v.trim().toLowerCase(java.util.Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException("key " + key + " in --config must be true or false, was '" + v + "'");
        }
        return t.equals("true");
    }

    /** @return the TLS files, or null for plaintext */
    @Nullable TlsFiles tls(Properties p) {
        Path c = path(cert, p, "tls-cert");
        Path k = path(key, p, "tls-key");
        Path trusted = path(ca, p, "tls-ca");
        boolean mutual = flag(clientAuth, p, "tls-client-auth");
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
    @Nullable Access access(Properties p) {
        Path rules = path(access, p, "access");
        Path t = path(tokens, p, "tokens");
        if (rules == null) {
            if (t != null) {
                throw new IllegalArgumentException("--tokens needs --access: the rules that say what each principal may do");
            }
            return null;
        }
        return Access.fromFiles(t, rules);
    }

    /** @return whether starting unsecured beyond loopback is an error */
    boolean require(Properties p) {
        return flag(require, p, "require-security");
    }

    /** @return how this server calls others: its certificate and CAs, and its token file, if any */
    ClientSecurity asClient(Properties p) {
        TlsFiles tls = tls(p);
        return SecurityOptions.clientSecurity(tls == null ? null : tls.trusted(), tls == null ? null : tls.certificate(),
                tls == null ? null : tls.privateKey(), null, path(tokenFile, p, "token-file"));
    }

    /** @return an HTTPS context from this server's TLS files (metrics, SQS endpoint), or null without them */
    javax.net.ssl.@Nullable SSLContext httpsContext(Properties p) {
        TlsFiles tls = tls(p);
        return tls == null ? null : dev.mailbox.coordination.internal.Tls.sslContext(tls);
    }
}
