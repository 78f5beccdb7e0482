package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.TlsFiles;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NegotiationType;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jspecify.annotations.Nullable;

/**
 * TLS for every channel of this project: key and trust managers that read PEM files and read them again
 * when they change (so certificates rotate without a restart), the gRPC contexts and channels built on
 * them, and the bearer-token header. Used by the client, the servers and the command line.
 */
public final class Tls {

    /** The header a bearer token travels in. */
    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final long RECHECK_NANOS = 1_000_000_000L;

    private Tls() {
    }

    /**
     * A channel to a server, with TLS and a token as the security says.
     *
     * @param target   {@code host:port}
     * @param security how to connect
     * @return a builder the caller finishes
     */
    public static NettyChannelBuilder channel(String target, ClientSecurity security) {
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(target);
        TlsFiles tls = security.tls();
        if (tls == null) {
            b.usePlaintext();
        } else {
            b.negotiationType(NegotiationType.TLS).sslContext(clientContext(tls));
        }
        if (security.hasToken()) {
            b.intercept(new BearerToken(tokenSource(security)));
        }
        return b;
    }

    /**
     * @param tls a server's files
     * @return its gRPC server context, requiring client certificates if the files say so
     */
    public static SslContext serverContext(TlsFiles tls) {
        try {
            return GrpcSslContexts.configure(io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder
                            .forServer(keyManager(tls)))
                    .trustManager(trustManager(tls))
                    .clientAuth(tls.requireClientCertificate() ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL).build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set up TLS from " + tls + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param tls a client's files
     * @return its gRPC client context
     */
    public static SslContext clientContext(TlsFiles tls) {
        try {
            var b = GrpcSslContexts.forClient().trustManager(trustManager(tls));
            if (tls.certificate() != null) {
                b.keyManager(keyManager(tls));
            }
            return b.build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set up TLS from " + tls + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param tls a server's files
     * @return a JDK context (for the HTTPS metrics endpoint)
     */
    public static SSLContext sslContext(TlsFiles tls) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new javax.net.ssl.KeyManager[] {keyManager(tls)},
                    new javax.net.ssl.TrustManager[] {trustManager(tls)}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /**
     * @param tls files with a certificate and key
     * @return a key manager that follows the files
     * @throws IllegalArgumentException if the files do not name a certificate and key
     */
    public static X509ExtendedKeyManager keyManager(TlsFiles tls) {
        if (tls.certificate() == null || tls.privateKey() == null) {
            throw new IllegalArgumentException("TLS needs a certificate and key here: " + tls);
        }
        return new ReloadingKeyManager(tls.certificate(), tls.privateKey());
    }

    /**
     * @param tls files, with or without trusted CAs
     * @return a trust manager that follows the CA file, or the JDK's default trust when there is none
     */
    public static X509ExtendedTrustManager trustManager(TlsFiles tls) {
        return new ReloadingTrustManager(tls.trusted());
    }

    /**
     * @param certificate a peer's certificate
     * @return the principal it names: its subject's common name, or else its first DNS or e-mail
     *         subject alternative name, or else the whole subject
     */
    public static String principalOf(X509Certificate certificate) {
        Matcher cn = Pattern.compile("(?:^|,)\\s*CN=([^,]+)").matcher(certificate.getSubjectX500Principal().getName());
        if (cn.find()) {
            return cn.group(1).trim();
        }
        try {
            if (certificate.getSubjectAlternativeNames() != null) {
                for (List<?> san : certificate.getSubjectAlternativeNames()) {
                    int type = (Integer) san.get(0);
                    if (type == 1 || type == 2) { // rfc822Name, dNSName
                        return String.valueOf(san.get(1));
                    }
                }
            }
        } catch (CertificateException e) {
            // an unreadable extension: fall back to the subject
        }
        return certificate.getSubjectX500Principal().getName();
    }

    // --- PEM -------------------------------------------------------------------------------------------

    static List<X509Certificate> certificates(Path file) {
        try (var in = Files.newInputStream(file)) {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("no PEM certificate in " + file);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read certificates from " + file + ": " + e.getMessage(), e);
        } catch (CertificateException e) {
            throw new IllegalArgumentException("not PEM certificates: " + file + " (" + e.getMessage() + ")", e);
        }
    }

    static PrivateKey privateKey(Path file) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the private key " + file + ": " + e.getMessage(), e);
        }
        Matcher m = Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----")
                .matcher(pem);
        if (!m.find()) {
            throw new IllegalArgumentException("no unencrypted PKCS#8 private key (-----BEGIN PRIVATE KEY-----) in "
                    + file + "; convert with: openssl pkcs8 -topk8 -nocrypt -in KEY -out " + file);
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not this algorithm
            }
        }
        throw new IllegalArgumentException("the private key in " + file + " is neither RSA, EC nor EdDSA");
    }

    /**
     * Checks that a private key belongs to a certificate, by signing with the one and verifying with the other. A
     * pair that does not match loads without complaint, and then every handshake fails: a server would start and
     * refuse every client, a client would retry for ever (issue 30, finding 7).
     *
     * @throws IllegalArgumentException naming both files, if they do not belong together
     */
    static void requireMatch(PrivateKey key, X509Certificate certificate, Path certificateFile, Path keyFile) {
        java.security.PublicKey expected = certificate.getPublicKey();
        String mismatch = "the private key " + keyFile + " does not belong to the certificate " + certificateFile
                + " (" + certificate.getSubjectX500Principal().getName() + "): every TLS handshake would fail. Give "
                + "the key the certificate was issued for";
        if (!key.getAlgorithm().equals(expected.getAlgorithm())
                && !(isEdDsa(key.getAlgorithm()) && isEdDsa(expected.getAlgorithm()))) {
            throw new IllegalArgumentException(mismatch + " (the key is " + key.getAlgorithm() + ", the certificate's "
                    + expected.getAlgorithm() + ")");
        }
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA: the key names its own signature
        };
        byte[] probe = "mailbox key check".getBytes(StandardCharsets.US_ASCII);
        boolean matches;
        try {
            java.security.Signature signer = java.security.Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            java.security.Signature verifier = java.security.Signature.getInstance(algorithm);
            verifier.initVerify(expected);
            verifier.update(probe);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(mismatch + " (" + e.getMessage() + ")", e);
        }
        if (!matches) {
            throw new IllegalArgumentException(mismatch);
        }
    }

    private static boolean isEdDsa(String algorithm) {
        return algorithm.equals("EdDSA") || algorithm.equals("Ed25519") || algorithm.equals("Ed448");
    }

    /** The state of one file: reload when it changes. */
    private static final class Watched {
        private final Path file;
        private @Nullable FileTime modified;
        private long size = -1;

        Watched(Path file) {
            this.file = file;
        }

        boolean changed() {
            try {
                FileTime m = Files.getLastModifiedTime(file);
                long s = Files.size(file);
                boolean changed = !m.equals(modified) || s != size;
                modified = m;
                size = s;
                return changed;
            } catch (IOException e) {
                return false; // mid-replacement: keep what we have
            }
        }
    }

    /** Re-reads a certificate chain and key when either file changes. */
    private static final class ReloadingKeyManager extends X509ExtendedKeyManager {
        private final Watched certificate;
        private final Watched key;
        private volatile X509ExtendedKeyManager delegate;
        private volatile long checkedAt;

        ReloadingKeyManager(Path certificate, Path key) {
            this.certificate = new Watched(certificate);
            this.key = new Watched(key);
            this.certificate.changed();
            this.key.changed();
            this.delegate = load(certificate, key);
            this.checkedAt = System.nanoTime();
        }

        private static X509ExtendedKeyManager load(Path certificate, Path key) {
            try {
                PrivateKey privateKey = privateKey(key);
                List<X509Certificate> chain = certificates(certificate);
                requireMatch(privateKey, chain.get(0), certificate, key);
                KeyStore store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                store.setKeyEntry("key", privateKey, new char[0], chain.toArray(new Certificate[0]));
                KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                f.init(store, new char[0]);
                return (X509ExtendedKeyManager) f.getKeyManagers()[0];
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalArgumentException("cannot use " + certificate + " with " + key + ": " + e.getMessage(), e);
            }
        }

        private X509ExtendedKeyManager current() {
            long now = System.nanoTime();
            if (now - checkedAt > RECHECK_NANOS) {
                synchronized (this) {
                    if (now - checkedAt > RECHECK_NANOS) {
                        checkedAt = now;
                        boolean c = certificate.changed();
                        boolean k = key.changed();
                        if (c || k) {
                            try {
                                delegate = load(certificate.file, key.file);
                            } catch (RuntimeException e) {
                                // half-written files: keep the old pair and try again on the next check
                            }
                        }
                    }
                }
            }
            return delegate;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return current().getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return current().chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return current().chooseEngineClientAlias(keyType, issuers, engine);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current().getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return current().chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return delegate.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return delegate.getPrivateKey(alias);
        }
    }

    /** Re-reads the trusted CA file when it changes; without one, the JDK's default trust. */
    private static final class ReloadingTrustManager extends X509ExtendedTrustManager {
        private final @Nullable Watched file;
        private volatile X509ExtendedTrustManager delegate;
        private volatile long checkedAt;

        ReloadingTrustManager(@Nullable Path trusted) {
            this.file = trusted == null ? null : new Watched(trusted);
            if (file != null) {
                file.changed();
            }
            this.delegate = load(trusted);
            this.checkedAt = System.nanoTime();
        }

        private static X509ExtendedTrustManager load(@Nullable Path trusted) {
            try {
                KeyStore store = null;
                if (trusted != null) {
                    store = KeyStore.getInstance("PKCS12");
                    store.load(null, null);
                    int i = 0;
                    for (X509Certificate c : certificates(trusted)) {
                        store.setCertificateEntry("ca-" + i++, c);
                    }
                }
                TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                f.init(store);
                return (X509ExtendedTrustManager) f.getTrustManagers()[0];
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalArgumentException("cannot trust " + trusted + ": " + e.getMessage(), e);
            }
        }

        private X509ExtendedTrustManager current() {
            long now = System.nanoTime();
            if (file != null && now - checkedAt > RECHECK_NANOS) {
                synchronized (this) {
                    if (now - checkedAt > RECHECK_NANOS) {
                        checkedAt = now;
                        if (file.changed()) {
                            try {
                                delegate = load(file.file);
                            } catch (RuntimeException e) {
                                // half-written file: keep the old CAs
                            }
                        }
                    }
                }
            }
            return delegate;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            current().checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            current().checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current().checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return current().getAcceptedIssuers();
        }
    }

    // --- tokens ----------------------------------------------------------------------------------------

    private static java.util.function.Supplier<String> tokenSource(ClientSecurity security) {
        String given = security.token();
        if (given != null) {
            return () -> given;
        }
        Path file = Objects.requireNonNull(security.tokenFile());
        Watched watched = new Watched(file);
        String[] cached = new String[1];
        return () -> {
            synchronized (cached) {
                if (cached[0] == null || watched.changed()) {
                    try {
                        String first = Files.readAllLines(file, StandardCharsets.UTF_8).stream().map(String::trim)
                                .filter(l -> !l.isEmpty()).findFirst().orElseThrow(() ->
                                        new IllegalArgumentException("the token file " + file + " is empty"));
                        cached[0] = first;
                    } catch (IOException e) {
                        if (cached[0] == null) {
                            throw new UncheckedIOException("cannot read the token file " + file, e);
                        }
                    }
                }
                return cached[0];
            }
        };
    }

    /** Puts the bearer token on every call. */
    private static final class BearerToken implements ClientInterceptor {
        private final java.util.function.Supplier<String> token;

        BearerToken(java.util.function.Supplier<String> token) {
            this.token = token;
        }

        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<A> listener, Metadata headers) {
                    headers.put(AUTHORIZATION, "Bearer " + token.get());
                    super.start(listener, headers);
                }
            };
        }
    }
}
