package dev.mailbox.testkit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds a redis-server executable: {@code $MAILBOX_REDIS_SERVER} if set (a path, or {@code bundled} to
 * force the bundled binary), else the PATH, else the one bundled in embedded-redis.
 */
final class RedisBinary {

    private static volatile Path cached;

    private RedisBinary() {
    }

    static Optional<Path> find() {
        Path p = cached;
        if (p != null) {
            return Optional.of(p);
        }
        String override = System.getenv("MAILBOX_REDIS_SERVER");
        Optional<Path> found;
        if (override == null || override.isBlank()) {
            found = onPath().or(RedisBinary::bundled);
        } else if (override.equals("bundled")) {
            found = bundled();
        } else {
            found = Optional.of(Path.of(override)).filter(Files::isExecutable);
        }
        found.ifPresent(f -> cached = f);
        return found;
    }

    private static Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The embedded-redis jar ships binaries as resources; copy the one for this platform out. */
    private static Optional<Path> bundled() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String resource;
        if (os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"))) {
            resource = "redis-server-6.2.6-v5-linux-amd64";
        } else if (os.contains("linux") && arch.equals("aarch64")) {
            resource = "redis-server-6.2.7-linux-arm64";
        } else if (os.contains("mac") && arch.equals("aarch64")) {
            resource = "redis-server-6.2.6-v5-darwin-arm64";
        } else if (os.contains("mac")) {
            resource = "redis-server-6.2.6-v5-darwin-amd64";
        } else {
            return Optional.empty();
        }
        try (InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                return Optional.empty();
            }
            Path dir = Files.createTempDirectory("mailbox-redis-bin");
            dir.toFile().deleteOnExit(); // registered first so it is deleted last, once empty
            Path target = dir.resolve("redis-server");
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            if (!target.toFile().setExecutable(true)) {
                return Optional.empty();
            }
            target.toFile().deleteOnExit();
            return Optional.of(target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the bundled redis-server", e);
        }
    }
}
