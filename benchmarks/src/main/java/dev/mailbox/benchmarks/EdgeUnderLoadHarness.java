package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.sqsendpoint.AccessKey;
import dev.mailbox.sqsendpoint.AccessKeyStore;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import dev.mailbox.testkit.http.HostileHttp;
import dev.mailbox.testkit.tls.TestCertificates;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Signed SQS calls against the endpoint's HTTP edge, idle and under each hostile load of issue 30: 256 clients
 * sending unsigned 4 MiB bodies over and over; 300 connections trickling a header line a second (plaintext, then
 * TLS; these phases last at most 8 s, since the endpoint closes a connection whose headers take over 10 s); 2,000
 * signed long polls kept outstanding (answered ones are sent again at once). The endpoint runs in a
 * child JVM with a small heap (default 256 MiB), over in-memory queues, with a plaintext and a TLS listener; this
 * JVM plays one client that sends signed SendMessage calls one after another for the phase's length, and the
 * light attackers (one thread each); the 256 body senders run in a third JVM, so as not to starve the measuring
 * thread of its own JVM. It prints each phase's latency percentiles (and errors: a call that failed counts as
 * one, with its time).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.EdgeUnderLoadHarness [--seconds 20] [--heap 256m]
 * </pre>
 *
 * On one machine the attackers and the measured client share its CPU with the endpoint: the figures are what a
 * client sees while the endpoint and its attackers compete for the cores, an upper bound on the endpoint's own.
 */
public final class EdgeUnderLoadHarness {

    private static final String KEY_ID = "AKIDEDGEHARNESS";
    private static final String SECRET = "edge-harness-secret";

    private EdgeUnderLoadHarness() {
    }

    /**
     * @param args {@code --seconds N} per phase (default 20), {@code --heap SIZE} of the endpoint's JVM (default
     *             256m); {@code --serve CERT KEY} is the child's own mode
     * @throws Exception if the harness cannot run
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--serve")) {
            serve(Path.of(args[1]), Path.of(args[2]));
            return;
        }
        if (args.length == 2 && args[0].equals("--attack-bodies")) {
            attackWithBodies(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])));
            return;
        }
        LibraryLog.toFile("edge-under-load");
        Options options = new Options(args);
        Duration phase = Duration.ofSeconds(options.integer("--seconds", 20));
        String heap = options.string("--heap", "256m");
        Path dir = Files.createTempDirectory("mailbox-edge-harness");
        TestCertificates ca = TestCertificates.create(dir, "ca");
        TestCertificates.Issued cert = ca.issue("sqs");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap, "-XX:+ExitOnOutOfMemoryError", "-cp", System.getProperty("java.class.path"),
                EdgeUnderLoadHarness.class.getName(), "--serve", cert.certificate().toString(), cert.key().toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            int plainPort = Integer.parseInt(out.readLine().replace("PLAIN ", "").trim());
            int tlsPort = Integer.parseInt(out.readLine().replace("TLS ", "").trim());
            InetSocketAddress plain = new InetSocketAddress("127.0.0.1", plainPort);
            InetSocketAddress tls = new InetSocketAddress("127.0.0.1", tlsPort);
            TrustManagerFactory trust = trust(ca.caCertificate());
            SSLContext clientTls = SSLContext.getInstance("TLS");
            clientTls.init(null, trust.getTrustManagers(), null);
            try (SqsClient overPlain = client(URI.create("http://127.0.0.1:" + plainPort), null);
                 SqsClient overTls = client(URI.create("https://127.0.0.1:" + tlsPort), trust)) {
                String measured = overPlain.createQueue(r -> r.queueName("measured")).queueUrl();
                String measuredTls = overTls.getQueueUrl(r -> r.queueName("measured")).queueUrl();
                String polled = overPlain.createQueue(r -> r.queueName("polled")).queueUrl();
                System.out.printf(Locale.ROOT, "Mailbox SQS edge under load: endpoint in a child JVM (-Xmx%s), %d-second"
                        + " phases, signed SendMessage calls from one client thread, JDK %s, %d cores%n%n", heap,
                        phase.toSeconds(), System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
                System.out.printf(Locale.ROOT, "%-44s %8s %9s %9s %9s %7s%n", "phase", "calls", "p50 ms", "p99 ms",
                        "max ms", "errors");
                measure("idle (HTTP)", overPlain, measured, phase, () -> { });
                measure("idle (HTTPS)", overTls, measuredTls, phase, () -> { });
                // 256 threads would starve this JVM's one measuring thread: they attack from a JVM of their own
                Process attackers = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp", System.getProperty("java.class.path"), EdgeUnderLoadHarness.class.getName(),
                        "--attack-bodies", Integer.toString(plainPort)).redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
                try {
                    BufferedReader said = new BufferedReader(new InputStreamReader(attackers.getInputStream(),
                            StandardCharsets.UTF_8));
                    said.readLine(); // "ATTACKING": its threads are sending
                    measure("256 clients x unsigned 4 MiB bodies (HTTP)", overPlain, measured, phase, () -> { });
                    attackers.getOutputStream().close();
                    System.out.printf(Locale.ROOT, "    (unsigned bodies: %s)%n", said.readLine());
                } finally {
                    attackers.destroy();
                    attackers.waitFor();
                }
                // the endpoint closes a connection whose headers take over 10 s: measure while they are all open
                Duration slowPhase = phase.compareTo(Duration.ofSeconds(8)) > 0 ? Duration.ofSeconds(8) : phase;
                try (HostileHttp.SlowClients slow = slowloris(plain, null)) {
                    measure("300 slow connections (HTTP)", overPlain, measured, slowPhase, () -> System.out.printf(
                            Locale.ROOT, "    (slow connections still open: %d)%n", slow.open()));
                }
                try (HostileHttp.SlowClients slow = slowloris(tls, clientTls)) {
                    measure("300 slow connections (HTTPS)", overTls, measuredTls, slowPhase, () -> System.out.printf(
                            Locale.ROOT, "    (slow connections still open: %d)%n", slow.open()));
                }
                try (Attack a = longPolls(plain, polled)) {
                    measure("2,000 signed long polls outstanding (HTTP)", overPlain, measured, phase, a::check);
                }
            }
            System.out.printf(Locale.ROOT, "%nendpoint JVM %s%n", child.isAlive() ? "still running"
                    : "EXITED with status " + child.exitValue());
        } finally {
            child.getOutputStream().close();
            child.destroy();
            child.waitFor();
        }
    }

    /** The child: a signed endpoint on HTTP and one on HTTPS, over one in-memory directory, until stdin ends. */
    private static void serve(Path cert, Path key) throws Exception {
        QueueDirectory queues = QueueDirectory.inMemory(name -> InMemoryMailbox.builder(name, Codec.bytes())
                .maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build());
        AccessKeyStore keys = AccessKeyStore.of(new AccessKey(KEY_ID, SECRET, "harness"));
        try (SqsEndpoint plain = SqsEndpoint.builder().queues(queues).credentials(keys).start();
             SqsEndpoint tls = SqsEndpoint.builder().queues(queues).credentials(keys).tls(serverContext(cert, key))
                     .start()) {
            System.out.println("PLAIN " + plain.address().getPort());
            System.out.println("TLS " + tls.address().getPort());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the harness closes our input
            }
        }
    }

    // ---- measuring

    private static void measure(String name, SqsClient client, String queue, Duration phase, Runnable check) {
        List<Long> nanos = new ArrayList<>();
        int errors = 0;
        long end = System.nanoTime() + phase.toNanos();
        while (System.nanoTime() - end < 0) {
            long start = System.nanoTime();
            try {
                client.sendMessage(r -> r.queueUrl(queue).messageBody("measured"));
            } catch (RuntimeException e) {
                errors++;
            }
            nanos.add(System.nanoTime() - start);
        }
        check.run();
        client.purgeQueue(r -> r.queueUrl(queue));
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf(Locale.ROOT, "%-44s %8d %9.2f %9.2f %9.2f %7d%n", name, sorted.length, ms(sorted, 0.50),
                ms(sorted, 0.99), sorted[sorted.length - 1] / 1e6, errors);
    }

    private static double ms(long[] sorted, double quantile) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)] / 1e6;
    }

    // ---- the attacks

    /** Attacker threads that run until closed; {@link #check()} says how much they got through. */
    private static final class Attack implements AutoCloseable {
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicLong rounds = new AtomicLong();
        private final AtomicLong refused = new AtomicLong();
        private final List<Runnable> afterwards = new ArrayList<>();
        private volatile boolean stop;
        private final String what;

        Attack(String what) {
            this.what = what;
        }

        void start(Runnable round, int threadCount) {
            for (int i = 0; i < threadCount; i++) {
                Thread t = new Thread(() -> {
                    while (!stop) {
                        round.run();
                        rounds.incrementAndGet();
                    }
                }, "attacker-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        void afterwards(Runnable cleanUp) {
            afterwards.add(cleanUp);
        }

        void check() {
            System.out.printf(Locale.ROOT, "    (%s: %d attack requests meanwhile)%n", what, rounds.get());
        }

        @Override
        public void close() {
            stop = true;
            for (Thread t : threads) {
                t.interrupt();
                try {
                    t.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            afterwards.forEach(Runnable::run);
        }
    }

    /** The attackers' JVM: 256 threads sending unsigned 4 MiB bodies over and over, until stdin ends. */
    private static void attackWithBodies(InetSocketAddress server) throws Exception {
        try (Attack a = bodies(server)) {
            System.out.println("ATTACKING");
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the harness closes our input
            }
            System.out.println(a.rounds.get() + " attack requests meanwhile, " + a.refused.get()
                    + " of them cut off before their whole body was sent");
            System.out.flush();
        }
    }

    private static Attack bodies(InetSocketAddress server) {
        Attack a = new Attack("unsigned bodies");
        byte[] chunk = new byte[64 * 1024];
        int[] next = {0};
        a.start(() -> {
            InetAddress from = HostileHttp.loopback(1000 + (next[0]++ & 7));
            try (Socket s = HostileHttp.connect(server, from, null)) {
                OutputStream o = s.getOutputStream();
                o.write(("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                        + "Content-Length: " + (4 << 20) + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                for (int n = 0; n < 4 << 20; n += chunk.length) {
                    o.write(chunk);
                }
                HostileHttp.readAnswer(s, Duration.ofSeconds(30));
            } catch (IOException refused) {
                a.refused.incrementAndGet(); // refused from its headers: the server closed while it was still sending
            }
        }, 256);
        return a;
    }

    private static HostileHttp.SlowClients slowloris(InetSocketAddress server, SSLContext tls) {
        List<InetAddress> from = IntStream.range(0, 30).mapToObj(i -> HostileHttp.loopback(2000 + i)).toList();
        return HostileHttp.SlowClients.open(server, tls, 300, from, Duration.ofSeconds(1));
    }

    /** 2,000 connections each with a signed 20-second ReceiveMessage outstanding; one answered is sent again. */
    private static Attack longPolls(InetSocketAddress server, String queue) throws IOException {
        byte[] poll = ("Action=ReceiveMessage&QueueUrl=" + queue + "&WaitTimeSeconds=20").getBytes(StandardCharsets.UTF_8);
        Attack a = new Attack("long polls");
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            Socket s = HostileHttp.connect(server, HostileHttp.loopback(3000 + i % 4), null);
            HostileHttp.write(s, signedPoll(server, poll));
            sockets.add(s);
        }
        a.start(() -> {
            // one sweep over the sockets: those answered get their next poll (a consumer that polls again at once)
            byte[] drain = new byte[8192];
            boolean any = false;
            for (int i = 0; i < sockets.size(); i++) {
                Socket s = sockets.get(i);
                try {
                    InputStream in = s.getInputStream();
                    if (in.available() > 0) {
                        in.read(drain);
                        HostileHttp.write(s, signedPoll(server, poll));
                        any = true;
                    }
                } catch (IOException e) {
                    try {
                        s.close();
                        Socket again = HostileHttp.connect(server, HostileHttp.loopback(3000 + i % 4), null);
                        HostileHttp.write(again, signedPoll(server, poll));
                        sockets.set(i, again);
                    } catch (IOException gone) {
                        // try again next sweep
                    }
                }
            }
            if (!any) {
                try {
                    Thread.sleep(5); // nothing answered in this sweep: do not spin
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, 1);
        a.afterwards(() -> sockets.forEach(s -> {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }));
        return a;
    }

    private static String signedPoll(InetSocketAddress server, byte[] body) {
        URI endpoint = URI.create("http://127.0.0.1:" + server.getPort());
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)
                .putHeader("Content-Type", "application/x-www-form-urlencoded; charset=utf-8").build();
        var signed = AwsV4HttpSigner.create().sign(r -> r.identity(AwsCredentialsIdentity.create(KEY_ID, SECRET))
                .request(request).payload(ContentStreamProvider.fromByteArray(body))
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1"));
        StringBuilder head = new StringBuilder("POST / HTTP/1.1\r\nContent-Length: " + body.length + "\r\n");
        signed.request().headers().forEach((k, v) -> {
            if (!k.equalsIgnoreCase("content-length")) {
                head.append(k).append(": ").append(v.get(0)).append("\r\n");
            }
        });
        if (signed.request().headers().keySet().stream().noneMatch(k -> k.equalsIgnoreCase("host"))) {
            head.append("Host: ").append(endpoint.getAuthority()).append("\r\n");
        }
        return head.append("\r\n").append(new String(body, StandardCharsets.UTF_8)).toString();
    }

    // ---- clients and certificates

    private static SqsClient client(URI url, TrustManagerFactory trust) {
        UrlConnectionHttpClient.Builder http = UrlConnectionHttpClient.builder()
                .socketTimeout(Duration.ofSeconds(30));
        if (trust != null) {
            http.tlsTrustManagersProvider(trust::getTrustManagers);
        }
        return SqsClient.builder().endpointOverride(url).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(KEY_ID, SECRET)))
                .httpClientBuilder(http).build();
    }

    private static TrustManagerFactory trust(Path caCertificate) throws Exception {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(
                new ByteArrayInputStream(Files.readAllBytes(caCertificate))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        return tmf;
    }

    private static SSLContext serverContext(Path cert, Path key) throws Exception {
        Certificate[] chain = CertificateFactory.getInstance("X.509")
                .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(cert))).toArray(new Certificate[0]);
        String pem = Files.readString(key, StandardCharsets.US_ASCII);
        var privateKey = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(
                Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""))));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("sqs", privateKey, new char[0], chain);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return context;
    }
}
