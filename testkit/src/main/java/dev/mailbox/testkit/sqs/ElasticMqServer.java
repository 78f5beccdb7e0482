package dev.mailbox.testkit.sqs;

import java.net.InetSocketAddress;
import java.net.URI;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;

/**
 * An embedded ElasticMQ (an SQS-compatible server) in this JVM, on a free port of 127.0.0.1.
 *
 * <p>ElasticMQ is an optional dependency of the testkit: add
 * {@code org.elasticmq:elasticmq-rest-sqs_2.13} to your test scope to use this class. Point an SQS
 * client at {@link #endpoint()} with any region and any static credentials.
 */
public final class ElasticMqServer implements AutoCloseable {

    private static ElasticMqServer shared;

    private final SQSRestServer server;
    private final URI endpoint;

    private ElasticMqServer() {
        this.server = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
        InetSocketAddress address = server.waitUntilStarted().localAddress();
        this.endpoint = URI.create("http://127.0.0.1:" + address.getPort());
    }

    /**
     * Starts a server of its own; the caller stops it with {@link #close()}.
     *
     * @return the started server
     */
    public static ElasticMqServer start() {
        return new ElasticMqServer();
    }

    /**
     * One server for the whole JVM, started on first use and stopped when the JVM exits.
     *
     * @return the shared server
     */
    public static synchronized ElasticMqServer shared() {
        if (shared == null) {
            ElasticMqServer s = new ElasticMqServer();
            // bounded: stopping waits for open long polls (up to 20 s each), which would hold up the
            // JVM's exit (surefire then waits 30 s before killing the fork)
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                Thread stop = new Thread(s::close, "elasticmq-stop-wait");
                stop.setDaemon(true);
                stop.start();
                try {
                    stop.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "elasticmq-stop"));
            shared = s;
        }
        return shared;
    }

    /**
     * @return the HTTP endpoint, {@code http://127.0.0.1:<port>}
     */
    public URI endpoint() {
        return endpoint;
    }

    /** Stops the server. */
    @Override
    public void close() {
        server.stopAndWait();
    }
}
