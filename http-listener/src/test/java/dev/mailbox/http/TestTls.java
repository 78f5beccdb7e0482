package dev.mailbox.http;

import dev.mailbox.testkit.tls.TestCertificates;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A server context and a client context that trusts it, from the testkit's test CA. */
record TestTls(SSLContext server, SSLContext client) {

    static TestTls create(Path dir) throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued issued = ca.issue("server");
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        Collection<? extends Certificate> chain;
        try (ByteArrayInputStream in = new ByteArrayInputStream(Files.readAllBytes(issued.certificate()))) {
            chain = x509.generateCertificates(in);
        }
        String pem = Files.readString(issued.key(), StandardCharsets.US_ASCII);
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("server", key, new char[0], chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);

        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (ByteArrayInputStream in = new ByteArrayInputStream(Files.readAllBytes(ca.caCertificate()))) {
            trust.setCertificateEntry("ca", x509.generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
        return new TestTls(server, client);
    }
}
