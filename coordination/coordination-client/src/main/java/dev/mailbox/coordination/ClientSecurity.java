package dev.mailbox.coordination;

import java.nio.file.Path;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How a client proves who it is and checks whom it talks to, for {@link CoordinationClient},
 * {@link RemoteMailbox} and the calls mailbox nodes make to each other: TLS (the trusted CAs, and a
 * client certificate for servers that require one) and/or a bearer token. The token is sent on every
 * call in the {@code authorization} header; send it only over TLS, or on loopback. A token file is
 * read again when it changes.
 */
public final class ClientSecurity {

    private static final ClientSecurity NONE = new ClientSecurity(null, null, null);

    private final @Nullable TlsFiles tls;
    private final @Nullable String token;
    private final @Nullable Path tokenFile;

    private ClientSecurity(@Nullable TlsFiles tls, @Nullable String token, @Nullable Path tokenFile) {
        this.tls = tls;
        this.token = token;
        this.tokenFile = tokenFile;
    }

    /** @return plaintext, no token: for loopback and tests */
    public static ClientSecurity none() {
        return NONE;
    }

    /**
     * @param files the trusted CAs, and a client certificate if servers require one
     * @return this security with TLS
     */
    public ClientSecurity withTls(TlsFiles files) {
        return new ClientSecurity(Objects.requireNonNull(files, "files"), token, tokenFile);
    }

    /**
     * @param bearerToken the token, as given by whoever runs the servers
     * @return this security with the token
     * @throws IllegalArgumentException if it is blank or holds characters a header cannot
     */
    public ClientSecurity withToken(String bearerToken) {
        Objects.requireNonNull(bearerToken, "bearerToken");
        if (bearerToken.isBlank() || !bearerToken.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new IllegalArgumentException("a token must be printable ASCII without spaces");
        }
        return new ClientSecurity(tls, bearerToken, null);
    }

    /**
     * @param file a file whose first line is the token (read again when the file changes)
     * @return this security with the token from the file
     */
    public ClientSecurity withTokenFile(Path file) {
        return new ClientSecurity(tls, null, Objects.requireNonNull(file, "file"));
    }

    /** @return the TLS files, or null for plaintext */
    public @Nullable TlsFiles tls() {
        return tls;
    }

    /** @return the token given directly, or null */
    public @Nullable String token() {
        return token;
    }

    /** @return the token file, or null */
    public @Nullable Path tokenFile() {
        return tokenFile;
    }

    /** @return whether calls carry a token */
    public boolean hasToken() {
        return token != null || tokenFile != null;
    }

    @Override
    public String toString() {
        return "ClientSecurity[tls=" + tls + ", token=" + (token != null ? "(given)" : tokenFile != null
                ? "(file " + tokenFile + ")" : "none") + "]";
    }
}
