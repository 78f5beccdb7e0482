package dev.mailbox.coordination.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.server.CoordinatorNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.testkit.tls.TestCertificates;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** TLS on the control plane and between coordinators, with certificates made by the test. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TlsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    @DisplayName("only clients that trust the server's CA get through: plaintext, another CA and an expired server "
            + "certificate are refused")
    void serverCertificate() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates other = TestCertificates.create(dir, "other");
        TestCertificates.Issued server = ca.issue("coordinator");
        try (CoordinatorNode node = standalone(TlsFiles.builder().keyPair(server.certificate(), server.key())
                .trusted(ca.caCertificate()).build())) {
            String endpoint = endpoint(node);
            try (CoordinationClient good = client(endpoint, ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(ca.caCertificate()).build()))) {
                TestingCluster.await(PATIENCE, () -> good.cluster().status().isLeader(), "the node leads");
                good.namespaces().create("over-tls", null, Map.of());
            }
            try (CoordinationClient plain = client(endpoint, ClientSecurity.none())) {
                assertThatThrownBy(() -> plain.namespaces().list()).isInstanceOf(CoordinationException.class);
            }
            try (CoordinationClient stranger = client(endpoint, ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(other.caCertificate()).build()))) {
                assertThatThrownBy(() -> stranger.namespaces().list()).isInstanceOf(CoordinationException.class);
            }
        }
        TestCertificates.Issued expired = ca.issue("coordinator", Instant.now().minus(Duration.ofDays(2)),
                Instant.now().minus(Duration.ofDays(1)));
        try (CoordinatorNode node = standalone(TlsFiles.builder().keyPair(expired.certificate(), expired.key())
                .trusted(ca.caCertificate()).build());
             CoordinationClient client = client(endpoint(node), ClientSecurity.none().withTls(TlsFiles.builder()
                     .trusted(ca.caCertificate()).build()))) {
            assertThatThrownBy(() -> client.namespaces().list()).isInstanceOf(CoordinationException.class);
        }
    }

    @Test
    @DisplayName("mutual TLS: no client certificate, or one from another CA, is refused; the right one works")
    void clientCertificates() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates other = TestCertificates.create(dir, "other");
        TestCertificates.Issued server = ca.issue("coordinator");
        TestCertificates.Issued alice = ca.issue("alice");
        TestCertificates.Issued mallory = other.issue("mallory");
        try (CoordinatorNode node = standalone(TlsFiles.builder().keyPair(server.certificate(), server.key())
                .trusted(ca.caCertificate()).requireClientCertificate(true).build())) {
            String endpoint = endpoint(node);
            try (CoordinationClient good = client(endpoint, ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(ca.caCertificate()).keyPair(alice.certificate(), alice.key()).build()))) {
                TestingCluster.await(PATIENCE, () -> good.cluster().status().isLeader(), "the node leads");
            }
            try (CoordinationClient anonymous = client(endpoint, ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(ca.caCertificate()).build()))) {
                assertThatThrownBy(() -> anonymous.cluster().status()).isInstanceOf(CoordinationException.class);
            }
            try (CoordinationClient wrong = client(endpoint, ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(ca.caCertificate()).keyPair(mallory.certificate(), mallory.key()).build()))) {
                assertThatThrownBy(() -> wrong.cluster().status()).isInstanceOf(CoordinationException.class);
            }
        }
    }

    @Test
    @DisplayName("rotation: replacing the certificate files changes what new connections get, without a restart")
    void rotation() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued first = ca.issue("first");
        TestCertificates.Issued second = ca.issue("second");
        Path cert = dir.resolve("server.pem");
        Path key = dir.resolve("server-key.pem");
        Files.copy(first.certificate(), cert);
        Files.copy(first.key(), key);
        try (CoordinatorNode node = standalone(TlsFiles.builder().keyPair(cert, key).trusted(ca.caCertificate())
                .build())) {
            int port = node.controlPlaneAddress().getPort();
            assertThat(presented(port)).isEqualTo("first");
            Path tmpCert = dir.resolve("server.pem.new");
            Path tmpKey = dir.resolve("server-key.pem.new");
            Files.copy(second.certificate(), tmpCert);
            Files.copy(second.key(), tmpKey);
            Files.move(tmpKey, key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.move(tmpCert, cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            TestingCluster.await(PATIENCE, () -> "second".equals(presented(port)), "new connections get the new certificate");
            try (CoordinationClient client = client(endpoint(node), ClientSecurity.none().withTls(TlsFiles.builder()
                    .trusted(ca.caCertificate()).build()))) {
                TestingCluster.await(PATIENCE, () -> client.cluster().status().isLeader(), "it still serves");
            }
        }
    }

    @Test
    @DisplayName("three coordinators form a cluster over mutual TLS; one with a certificate from another CA cannot join "
            + "or disturb it")
    void peersOverTls() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "cluster");
        TestCertificates other = TestCertificates.create(dir, "rogue");
        TestCertificates.Issued member = ca.issue("coordinator");
        TlsFiles tls = TlsFiles.builder().keyPair(member.certificate(), member.key()).trusted(ca.caCertificate())
                .requireClientCertificate(true).build();
        ClientSecurity clientSecurity = ClientSecurity.none().withTls(TlsFiles.builder().trusted(ca.caCertificate())
                .keyPair(member.certificate(), member.key()).build());
        try (TestingCluster cluster = TestingCluster.builder().size(3).configure(b -> b.tls(tls))
                .clientSecurity(clientSecurity).start()) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();
            client.namespaces().create("before", null, Map.of());
            String leader = cluster.awaitLeader(PATIENCE);
            long term = cluster.status(leader).orElseThrow().term();
            var group = dev.mailbox.coordination.server.internal.RaftGateway.group(cluster.name(), cluster.peers())
                    .getGroupId();
            // the Raft port answers a peer with the cluster's certificate...
            assertThat(dev.mailbox.coordination.server.internal.Membership.probe(group, cluster.peers(), "probe",
                    dev.mailbox.coordination.server.internal.RaftGateway.parameters(tls))).isPresent();
            // ...and neither plaintext nor a certificate from another CA
            assertThat(dev.mailbox.coordination.server.internal.Membership.probe(group, cluster.peers(), "probe",
                    dev.mailbox.coordination.server.internal.RaftGateway.parameters(null))).isEmpty();
            TestCertificates.Issued impostor = other.issue("coordinator");
            TlsFiles rogueTls = TlsFiles.builder().keyPair(impostor.certificate(), impostor.key())
                    .trusted(other.caCertificate()).requireClientCertificate(true).build();
            assertThat(dev.mailbox.coordination.server.internal.Membership.probe(group, cluster.peers(), "probe",
                    dev.mailbox.coordination.server.internal.RaftGateway.parameters(rogueTls))).isEmpty();

            // an impostor that campaigns with the cluster's group id and peers gets nowhere
            java.util.Map<String, InetSocketAddress> withRogue = new java.util.LinkedHashMap<>(cluster.peers());
            int roguePort;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                roguePort = s.getLocalPort();
            }
            withRogue.put("n9", new InetSocketAddress("127.0.0.1", roguePort));
            try (CoordinatorNode n = CoordinatorNode.builder("n9").cluster(cluster.name()).peers(withRogue)
                    .dataDir(Files.createDirectories(dir.resolve("rogue"))).electionTimeout(Duration.ofMillis(100))
                    .tls(rogueTls).start()) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                while (System.nanoTime() < until) {
                    assertThat(n.isLeader()).as("the impostor never leads").isFalse();
                    Thread.sleep(100); // observing for a while: the impostor campaigns every 100-200 ms
                }
                assertThat(cluster.status(leader).orElseThrow().term()).as("the cluster's term did not move")
                        .isEqualTo(term);
                client.namespaces().create("during", null, Map.of());
            }
            cluster.awaitIdenticalState(PATIENCE);
        }
    }

    @Test
    @DisplayName("a certificate and a key that do not belong together stop a coordinator, a mailbox node and a client "
            + "at start, naming both files, instead of failing every handshake later")
    void mismatchedKeyPair() throws Exception {
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued coordinator = ca.issue("coordinator");
        TestCertificates.Issued other = ca.issue("other");
        TlsFiles wrong = TlsFiles.builder().keyPair(coordinator.certificate(), other.key()).trusted(ca.caCertificate())
                .build();
        assertThatThrownBy(() -> standalone(wrong)).hasMessageContaining("does not belong to the certificate")
                .hasMessageContaining(other.key().toString()).hasMessageContaining(coordinator.certificate().toString());
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient plain = cluster.client();
            assertThatThrownBy(() -> dev.mailbox.coordination.server.MailboxNode.builder("node-a").coordinator(plain)
                    .tls(wrong).start()).hasMessageContaining("does not belong to the certificate")
                    .hasMessageContaining(other.key().toString());
            assertThat(plain.nodes().list()).as("the node registered nothing").isEmpty();
        }
        assertThatThrownBy(() -> client("127.0.0.1:9", ClientSecurity.none().withTls(wrong)))
                .hasMessageContaining("does not belong to the certificate");
        // the right pair still loads
        try (CoordinatorNode node = standalone(TlsFiles.builder().keyPair(other.certificate(), other.key())
                .trusted(ca.caCertificate()).build())) {
            assertThat(presented(node.controlPlaneAddress().getPort())).isEqualTo("other");
        }
    }

    private CoordinatorNode standalone(TlsFiles tls) throws Exception {
        int raft;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            raft = s.getLocalPort();
        }
        return CoordinatorNode.builder("n1").peer("n1", new InetSocketAddress("127.0.0.1", raft))
                .dataDir(Files.createTempDirectory(dir, "n1")).tls(tls).start();
    }

    private static String endpoint(CoordinatorNode node) {
        return "127.0.0.1:" + node.controlPlaneAddress().getPort();
    }

    private static CoordinationClient client(String endpoint, ClientSecurity security) {
        return CoordinationClient.builder().endpoint(endpoint).security(security).maxAttempts(2)
                .callTimeout(Duration.ofSeconds(2)).build();
    }

    /** The CN of the certificate the server presents to a new connection. */
    private static String presented(int port) {
        try {
            SSLContext trustAll = SSLContext.getInstance("TLS");
            trustAll.init(null, new TrustManager[] {new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public void checkServerTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, null);
            try (SSLSocket socket = (SSLSocket) trustAll.getSocketFactory().createSocket("127.0.0.1", port)) {
                socket.setSoTimeout(5_000);
                socket.setEnabledProtocols(new String[] {"TLSv1.2", "TLSv1.3"});
                socket.startHandshake();
                X509Certificate c = (X509Certificate) socket.getSession().getPeerCertificates()[0];
                return dev.mailbox.coordination.internal.Tls.principalOf(c);
            }
        } catch (Exception e) {
            return "error: " + e;
        }
    }
}
