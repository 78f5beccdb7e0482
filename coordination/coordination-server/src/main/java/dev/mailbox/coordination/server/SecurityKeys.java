package dev.mailbox.coordination.server;

import dev.mailbox.coordination.settings.Setting;
import java.nio.file.Path;
import java.util.List;

/**
 * A server's security settings, each defined once (see {@link CoordinatorKeys}): the TLS files it serves and
 * trusts, its callers' tokens and access rules, whether it refuses to start unsecured, and, for a mailbox node,
 * the token it presents when it calls others. {@code mailboxctl coordinator start} and {@code node start} read
 * them; the builders take what they make ({@link dev.mailbox.coordination.TlsFiles}, {@link Access}) and
 * {@link #REQUIRE_SECURITY}.
 */
public final class SecurityKeys {

    private SecurityKeys() {
    }

    /** The server's certificate chain. */
    public static final Setting<Path> TLS_CERT = Setting.path("tls-cert")
            .help("this server's certificate chain (PEM), served, and presented when it calls other servers; turns "
                    + "TLS on").defaults(s -> null, "none: plaintext").build();

    /** Its private key. */
    public static final Setting<Path> TLS_KEY = Setting.path("tls-key")
            .help("its PKCS#8 private key (PEM)").build();

    /** The CAs it trusts. */
    public static final Setting<Path> TLS_CA = Setting.path("tls-ca")
            .help("the CAs (PEM) that sign the cluster's and clients' certificates").build();

    /** Whether clients must present certificates. */
    public static final Setting<Boolean> TLS_CLIENT_AUTH = Setting.onOff("tls-client-auth")
            .help("require client certificates signed by --tls-ca (mutual TLS)").build();

    /** The tokens of its callers. */
    public static final Setting<Path> TOKENS = Setting.path("tokens")
            .help("the tokens file this server checks callers' tokens against (principal:salt:hash lines; mailboxctl "
                    + "security token --append-to writes them); needs --access").build();

    /** What each caller may do. */
    public static final Setting<Path> ACCESS = Setting.path("access")
            .help("the access rules file (principal role namespaces); turns authentication and authorization on")
            .defaults(s -> null, "none: anyone may do anything").build();

    /** Whether to refuse to start unsecured beyond loopback. */
    public static final Setting<Boolean> REQUIRE_SECURITY = Setting.onOff("require-security").name("requireSecurity")
            .help("refuse to start without TLS and --access when listening beyond loopback, rather than start with a "
                    + "loud warning").build();

    /** A mailbox node's own token. */
    public static final Setting<Path> TOKEN_FILE = Setting.path("token-file")
            .help("the file whose first line is this node's own token, for its calls to the coordinators and to "
                    + "other nodes").build();

    /** A coordinator's security settings. */
    public static final List<Setting<?>> COORDINATOR = List.of(TLS_CERT, TLS_KEY, TLS_CA, TLS_CLIENT_AUTH, TOKENS,
            ACCESS, REQUIRE_SECURITY);

    /** A mailbox node's security settings: a coordinator's and its own token. */
    public static final List<Setting<?>> NODE = List.of(TLS_CERT, TLS_KEY, TLS_CA, TLS_CLIENT_AUTH, TOKENS, ACCESS,
            REQUIRE_SECURITY, TOKEN_FILE);
}
