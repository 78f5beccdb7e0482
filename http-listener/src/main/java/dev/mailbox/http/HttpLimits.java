package dev.mailbox.http;

import java.time.Duration;
import java.util.Objects;

/**
 * What one {@link HttpListener} lets its clients cost it, the same with and without TLS. Immutable: each
 * {@code with} method returns a copy, checked.
 *
 * <ul>
 *   <li><b>Connections</b>: at most {@link #maxConnections()} open at once, and
 *       {@link #maxConnectionsPerAddress()} from one client address; one past either is refused as it is
 *       accepted (plaintext: a {@code 503} with {@code Connection: close}; TLS: closed before the handshake).</li>
 *   <li><b>Time</b>: a request's line and headers (and, with TLS, the handshake before them) must arrive within
 *       {@link #headerTimeout()} of its first byte, and its body within {@link #bodyTimeout()} of its headers;
 *       a connection with no traffic for {@link #idleTimeout()} is closed. A client that trickles bytes is cut
 *       off by the deadlines, not by the idle timeout. An answer must be read whole within {@link #writeTimeout()}
 *       of being ready, or its connection is closed: a client that reads a trickle holds neither the connection nor
 *       the answer's memory for longer.</li>
 *   <li><b>Memory</b>: headers up to {@link #maxHeaderBytes()} (larger: {@code 431}); a body up to
 *       {@link #maxBodyBytes()} ({@code 413}, refused from its declared length before it is read), held against
 *       the listener's {@link BodyBudget} from before it is read until its answer is sent (none left, or the client
 *       holds its share: {@code 503} before reading); answers count against the same budget until sent, and are
 *       written to the socket in slices, so a large one costs no buffer of its size outside the heap.</li>
 *   <li><b>Threads</b>: I/O runs on a few threads of the listener's own and never waits for a client;
 *       {@link HttpHandler#handle} runs on {@link #workerThreads()} threads, with up to {@link #workerQueue()}
 *       more requests waiting for one (beyond: {@code 503} before the body is read).</li>
 * </ul>
 */
public final class HttpLimits {

    private static final HttpLimits DEFAULTS = new HttpLimits(1024, 256, Duration.ofSeconds(10), Duration.ofSeconds(30),
            Duration.ofSeconds(30), Duration.ofSeconds(30), 16 * 1024, 1024 * 1024, 16, 256);

    private final int maxConnections;
    private final int maxConnectionsPerAddress;
    private final Duration headerTimeout;
    private final Duration bodyTimeout;
    private final Duration idleTimeout;
    private final Duration writeTimeout;
    private final int maxHeaderBytes;
    private final int maxBodyBytes;
    private final int workerThreads;
    private final int workerQueue;

    private HttpLimits(int maxConnections, int maxConnectionsPerAddress, Duration headerTimeout, Duration bodyTimeout,
                       Duration idleTimeout, Duration writeTimeout, int maxHeaderBytes, int maxBodyBytes,
                       int workerThreads, int workerQueue) {
        this.maxConnections = range("maxConnections", maxConnections, 1, 1_000_000);
        this.maxConnectionsPerAddress = range("maxConnectionsPerAddress", maxConnectionsPerAddress, 1, 1_000_000);
        this.headerTimeout = time("headerTimeout", headerTimeout);
        this.bodyTimeout = time("bodyTimeout", bodyTimeout);
        this.idleTimeout = time("idleTimeout", idleTimeout);
        this.writeTimeout = time("writeTimeout", writeTimeout);
        this.maxHeaderBytes = range("maxHeaderBytes", maxHeaderBytes, 1024, 1024 * 1024);
        this.maxBodyBytes = range("maxBodyBytes", maxBodyBytes, 0, 1024 * 1024 * 1024);
        this.workerThreads = range("workerThreads", workerThreads, 1, 10_000);
        this.workerQueue = range("workerQueue", workerQueue, 0, 1_000_000);
    }

    /**
     * @return 1,024 connections, 256 per address, headers within 10 s, a body within 30 s, 30 s idle, an answer
     *         read within 30 s, 16 KiB of headers, 1 MiB of body, 16 worker threads with 256 requests waiting
     */
    public static HttpLimits defaults() {
        return DEFAULTS;
    }

    private static int range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
        }
        return value;
    }

    private static Duration time(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.compareTo(Duration.ofMillis(10)) < 0 || value.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException(name + " must be between 10 ms and 1 h, was " + value);
        }
        return value;
    }

    /** @return a copy allowing this many open connections in all */
    public HttpLimits withMaxConnections(int max) {
        return new HttpLimits(max, maxConnectionsPerAddress, headerTimeout, bodyTimeout, idleTimeout, writeTimeout,
                maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy allowing this many open connections from one client address */
    public HttpLimits withMaxConnectionsPerAddress(int max) {
        return new HttpLimits(maxConnections, max, headerTimeout, bodyTimeout, idleTimeout, writeTimeout,
                maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy giving a request this long from its first byte to the end of its headers */
    public HttpLimits withHeaderTimeout(Duration timeout) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, timeout, bodyTimeout, idleTimeout,
                writeTimeout, maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy giving a body this long to arrive once its headers have */
    public HttpLimits withBodyTimeout(Duration timeout) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, timeout, idleTimeout,
                writeTimeout, maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy closing connections with no traffic for this long */
    public HttpLimits withIdleTimeout(Duration timeout) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, bodyTimeout, timeout,
                writeTimeout, maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /**
     * @return a copy closing a connection whose answer has not been taken whole by its client this long after it was
     *         ready (the answer is dropped, its memory given back)
     */
    public HttpLimits withWriteTimeout(Duration timeout) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, bodyTimeout, idleTimeout,
                timeout, maxHeaderBytes, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy allowing request lines and headers of this many bytes */
    public HttpLimits withMaxHeaderBytes(int max) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, bodyTimeout, idleTimeout,
                writeTimeout, max, maxBodyBytes, workerThreads, workerQueue);
    }

    /** @return a copy allowing bodies of this many bytes */
    public HttpLimits withMaxBodyBytes(int max) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, bodyTimeout, idleTimeout,
                writeTimeout, maxHeaderBytes, max, workerThreads, workerQueue);
    }

    /** @return a copy running handlers on this many threads, with up to {@code queue} requests waiting for one */
    public HttpLimits withWorkers(int threads, int queue) {
        return new HttpLimits(maxConnections, maxConnectionsPerAddress, headerTimeout, bodyTimeout, idleTimeout,
                writeTimeout, maxHeaderBytes, maxBodyBytes, threads, queue);
    }

    /** @return the most connections open at once */
    public int maxConnections() {
        return maxConnections;
    }

    /** @return the most connections open at once from one client address */
    public int maxConnectionsPerAddress() {
        return maxConnectionsPerAddress;
    }

    /** @return how long a request may take from its first byte to the end of its headers */
    public Duration headerTimeout() {
        return headerTimeout;
    }

    /** @return how long a body may take to arrive once the headers have */
    public Duration bodyTimeout() {
        return bodyTimeout;
    }

    /** @return how long a connection may go without traffic */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** @return how long a client may take to read an answer whole, from when it is ready */
    public Duration writeTimeout() {
        return writeTimeout;
    }

    /** @return the largest request line and headers, in bytes */
    public int maxHeaderBytes() {
        return maxHeaderBytes;
    }

    /** @return the largest body, in bytes */
    public int maxBodyBytes() {
        return maxBodyBytes;
    }

    /** @return how many threads run handlers */
    public int workerThreads() {
        return workerThreads;
    }

    /** @return how many requests may wait for a worker thread */
    public int workerQueue() {
        return workerQueue;
    }

    @Override
    public String toString() {
        return "HttpLimits[connections " + maxConnections + " (" + maxConnectionsPerAddress + " per address), headers "
                + headerTimeout.toMillis() + " ms, body " + bodyTimeout.toMillis() + " ms, idle "
                + idleTimeout.toMillis() + " ms, answer " + writeTimeout.toMillis() + " ms, header bytes " + maxHeaderBytes
                + ", body bytes " + maxBodyBytes
                + ", workers " + workerThreads + " + " + workerQueue + " waiting]";
    }
}
