package dev.mailbox.coordination;

import java.nio.file.Path;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where a process's TLS material lives, as PEM files: its certificate chain and private key (PKCS#8,
 * unencrypted: {@code -----BEGIN PRIVATE KEY-----}; convert others with
 * {@code openssl pkcs8 -topk8 -nocrypt}), and the CA certificates it trusts to sign its peers'. The files
 * are read when a connection is set up, and read again when they change (checked at most once a second),
 * so replacing them rotates certificates without a restart; connections already open keep theirs.
 *
 * <p>A server needs a certificate and key; it verifies client certificates against the trusted CAs when
 * {@link Builder#requireClientCertificate} is set (mutual TLS). A client needs the trusted CAs, and a
 * certificate and key of its own when its server requires one. Certificates must name the address
 * clients dial (a subject alternative name for {@code 127.0.0.1}, a host name, ...): clients verify it.
 */
public final class TlsFiles {

    private final @Nullable Path certificate;
    private final @Nullable Path privateKey;
    private final @Nullable Path trusted;
    private final boolean requireClientCertificate;

    private TlsFiles(Builder b) {
        this.certificate = b.certificate;
        this.privateKey = b.privateKey;
        this.trusted = b.trusted;
        this.requireClientCertificate = b.requireClientCertificate;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the certificate chain file, or null for a client without a certificate */
    public @Nullable Path certificate() {
        return certificate;
    }

    /** @return the private key file, or null for a client without a certificate */
    public @Nullable Path privateKey() {
        return privateKey;
    }

    /** @return the trusted CA certificates file, or null to trust the JDK's default CAs */
    public @Nullable Path trusted() {
        return trusted;
    }

    /** @return whether a server with these files requires (and verifies) client certificates */
    public boolean requireClientCertificate() {
        return requireClientCertificate;
    }

    @Override
    public String toString() {
        return "TlsFiles[certificate=" + certificate + ", key=" + (privateKey == null ? null : "(set)") + ", trusted="
                + trusted + ", requireClientCertificate=" + requireClientCertificate + "]";
    }

    /** Builds {@link TlsFiles}. */
    public static final class Builder {
        private @Nullable Path certificate;
        private @Nullable Path privateKey;
        private @Nullable Path trusted;
        private boolean requireClientCertificate;

        private Builder() {
        }

        /**
         * @param certificateChain PEM certificates, this process's first
         * @param key              its PEM private key (PKCS#8)
         * @return this builder
         */
        public Builder keyPair(Path certificateChain, Path key) {
            this.certificate = Objects.requireNonNull(certificateChain, "certificateChain");
            this.privateKey = Objects.requireNonNull(key, "key");
            return this;
        }

        /**
         * @param caCertificates PEM certificates of the CAs whose signatures this process accepts
         * @return this builder
         */
        public Builder trusted(Path caCertificates) {
            this.trusted = Objects.requireNonNull(caCertificates, "caCertificates");
            return this;
        }

        /**
         * @param require for a server: refuse clients without a certificate signed by a trusted CA (mutual TLS)
         * @return this builder
         */
        public Builder requireClientCertificate(boolean require) {
            this.requireClientCertificate = require;
            return this;
        }

        /**
         * @return the files
         * @throws IllegalStateException if client certificates are required but no trusted CAs are given
         */
        public TlsFiles build() {
            if (requireClientCertificate && trusted == null) {
                throw new IllegalStateException("requireClientCertificate needs trusted(caCertificates) to verify them");
            }
            return new TlsFiles(this);
        }
    }
}
