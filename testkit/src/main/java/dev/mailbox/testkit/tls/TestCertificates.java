package dev.mailbox.testkit.tls;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority for tests: issues certificates and keys as PEM files (PKCS#8 keys), for
 * {@code 127.0.0.1} and {@code localhost}, usable for both server and client authentication, valid from
 * an hour ago for a day unless told otherwise (an expired one, for instance).
 */
public final class TestCertificates {

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    /**
     * A certificate and its key.
     *
     * @param certificate the PEM certificate file (the certificate, then the CA's)
     * @param key         the PEM PKCS#8 private key file
     */
    public record Issued(Path certificate, Path key) {
    }

    private final Path dir;
    private final String name;
    private final KeyPair caKeys;
    private final X509Certificate caCertificate;
    private final Path caFile;

    private TestCertificates(Path dir, String name) throws GeneralSecurityException, IOException, OperatorCreationException {
        this.dir = Files.createDirectories(dir);
        this.name = name;
        this.caKeys = keyPair();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, BigInteger.valueOf(SERIAL.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(30))), subject,
                caKeys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        this.caCertificate = sign(b, caKeys);
        this.caFile = dir.resolve(name + "-ca.pem");
        writePem(caFile, caCertificate);
    }

    /**
     * @param dir  where the files go
     * @param name the CA's name (and its files' prefix)
     * @return a new CA
     */
    public static TestCertificates create(Path dir, String name) {
        try {
            return new TestCertificates(dir, name);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a test CA: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the CA certificate's PEM file (what peers trust) */
    public Path caCertificate() {
        return caFile;
    }

    /**
     * @param commonName the subject's CN (the principal of a client certificate)
     * @return a certificate valid now, for 127.0.0.1 and localhost
     */
    public Issued issue(String commonName) {
        Instant now = Instant.now();
        return issue(commonName, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
    }

    /**
     * @param commonName the subject's CN
     * @param notBefore  the start of its validity
     * @param notAfter   its end (in the past for an expired certificate)
     * @return the files, named after the CN and a serial number
     */
    public Issued issue(String commonName, Instant notBefore, Instant notAfter) {
        try {
            KeyPair keys = keyPair();
            long serial = SERIAL.incrementAndGet();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(caCertificate, BigInteger.valueOf(serial),
                    Date.from(notBefore), Date.from(notAfter), new X500Name("CN=" + commonName), keys.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                    KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                    new GeneralName(GeneralName.iPAddress, InetAddress.getLoopbackAddress().getHostAddress()),
                    new GeneralName(GeneralName.dNSName, "localhost")}));
            X509Certificate certificate = sign(b, caKeys);
            String base = name + "-" + commonName.replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + serial;
            Path cert = dir.resolve(base + ".pem");
            Path key = dir.resolve(base + "-key.pem");
            writePem(cert, certificate, caCertificate);
            try (Writer w = Files.newBufferedWriter(key, StandardCharsets.US_ASCII);
                 JcaPEMWriter pem = new JcaPEMWriter(w)) {
                pem.writeObject(new JcaPKCS8Generator(keys.getPrivate(), null));
            }
            return new Issued(cert, key);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot issue a test certificate: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuer)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate());
        return new JcaX509CertificateConverter().getCertificate(b.build(signer));
    }

    private static void writePem(Path file, Object... objects) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII); JcaPEMWriter pem = new JcaPEMWriter(w)) {
            for (Object o : objects) {
                pem.writeObject(o);
            }
        }
    }
}
