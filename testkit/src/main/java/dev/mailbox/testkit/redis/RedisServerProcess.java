package dev.mailbox.testkit.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code redis-server} process for tests, bound to 127.0.0.1 on a free port with its own
 * temporary data directory. It is stopped by its own PID ({@link #close()}, or a JVM shutdown hook as
 * a last resort) and can be killed with SIGKILL and restarted on the same port and directory to test
 * crash recovery.
 *
 * <pre>{@code
 * try (RedisServerProcess redis = RedisServerProcess.start()) {
 *     JedisPooled client = new JedisPooled(redis.host(), redis.port());
 *     ...
 * }
 * }</pre>
 *
 * The executable comes from {@code $MAILBOX_REDIS_SERVER} (a path, or {@code bundled}), else the PATH,
 * else the binary bundled in the embedded-redis jar that the testkit depends on (Linux and macOS on
 * x86-64 and arm64); {@link #available()} says whether any of them exists.
 */
public final class RedisServerProcess implements AutoCloseable {

    private final Path binary;
    private final int port;
    private final Path dir;
    private final Map<String, String> config;
    private final Thread shutdownHook;
    private Process process;

    private RedisServerProcess(Path binary, int port, Path dir, Map<String, String> config) {
        this.binary = binary;
        this.port = port;
        this.dir = dir;
        this.config = config;
        this.shutdownHook = new Thread(this::destroyQuietly, "redis-" + port + "-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** @return whether a redis-server executable can be found */
    public static boolean available() {
        return RedisBinary.find().isPresent();
    }

    /**
     * Starts a standalone server with persistence off.
     *
     * @return the running server
     */
    public static RedisServerProcess start() {
        return start(Map.of());
    }

    /**
     * Starts a server with extra configuration, for example {@code appendonly yes}.
     *
     * @param extraConfig configuration directives, name to value
     * @return the running server
     */
    public static RedisServerProcess start(Map<String, String> extraConfig) {
        Path binary = RedisBinary.find().orElseThrow(() -> new IllegalStateException(
                "no redis-server: none on the PATH, and the binary bundled with the testkit has no build for "
                        + System.getProperty("os.name") + "/" + System.getProperty("os.arch")
                        + "; install one (apt-get install redis-server) or set MAILBOX_REDIS_SERVER to its path"));
        Map<String, String> config = new LinkedHashMap<>();
        config.put("save", "");
        config.put("appendonly", "no");
        config.putAll(extraConfig);
        try {
            Path dir = Files.createTempDirectory("mailbox-redis-");
            RedisServerProcess server = new RedisServerProcess(binary, freePort(), dir, config);
            server.launch();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return always 127.0.0.1 */
    public String host() {
        return "127.0.0.1";
    }

    /** @return the port the server listens on */
    public int port() {
        return port;
    }

    /** @return {@code redis://127.0.0.1:PORT} */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** @return the server's data directory */
    public Path dataDirectory() {
        return dir;
    }

    /** @return the server's PID, or -1 when it is not running */
    public synchronized long pid() {
        return process != null && process.isAlive() ? process.pid() : -1;
    }

    /** Kills the server with SIGKILL, as a crash would, and waits until it is gone. */
    public synchronized void kill() {
        if (process != null) {
            process.destroyForcibly();
            waitFor(process);
            process = null;
        }
    }

    /** Starts the server again on the same port and data directory (after {@link #kill()}). */
    public synchronized void restart() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("redis on port " + port + " is still running");
        }
        launch();
    }

    /**
     * Sends a command to the server.
     *
     * @param args the command and its arguments
     * @return the reply (String, Long, List or null)
     */
    public Object call(Object... args) {
        return Resp.call(port, args);
    }

    /** Stops the server and deletes its data directory. */
    @Override
    public synchronized void close() {
        destroyQuietly();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook itself is running
        }
        deleteRecursively(dir);
    }

    @Override
    public String toString() {
        return "redis-server[" + uri() + ", pid " + pid() + "]";
    }

    private synchronized void launch() {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary.toString());
        cmd.add("--port");
        cmd.add(String.valueOf(port));
        cmd.add("--bind");
        cmd.add("127.0.0.1");
        cmd.add("--dir");
        cmd.add(dir.toString());
        cmd.add("--daemonize");
        cmd.add("no");
        cmd.add("--protected-mode");
        cmd.add("no");
        config.forEach((k, v) -> {
            cmd.add("--" + k);
            cmd.add(v);
        });
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + binary, e);
        }
        awaitReady();
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        RuntimeException last = null;
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited with " + process.exitValue()
                        + "; see " + dir.resolve("redis.log"));
            }
            try {
                if ("PONG".equals(Resp.call(port, "PING"))) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e; // not listening yet, or still loading its data
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING", last);
    }

    private synchronized void destroyQuietly() {
        if (process != null) {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    waitFor(process);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    private static void waitFor(Process p) {
        try {
            p.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory; the OS cleans it eventually
        }
    }

}
