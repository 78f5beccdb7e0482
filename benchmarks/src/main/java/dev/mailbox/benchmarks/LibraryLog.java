package dev.mailbox.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Keeps library logging (Ratis, gRPC, ElasticMQ, Jedis) out of a harness's output: a harness prints
 * figures on stdout, and the libraries' INFO chatter and the stack traces they log while a killed node
 * closes would bury them. Everything the libraries log goes to a file instead; at exit the harness says
 * where it is and how many warnings and errors it holds, so a warning that matters is not lost.
 *
 * <p>Call {@link #toFile(String)} first thing in {@code main}, before anything creates a logger. A
 * {@code -Dorg.slf4j.simpleLogger.logFile=...} given on the command line wins.
 */
final class LibraryLog {

    private static final String LOG_FILE = "org.slf4j.simpleLogger.logFile";

    private LibraryLog() {
    }

    /**
     * Sends slf4j-simple's output to a new temporary file named after the harness.
     *
     * @param harness the harness's name, used in the file name
     */
    static void toFile(String harness) {
        if (System.getProperty(LOG_FILE) != null) {
            return;
        }
        Path file;
        try {
            file = Files.createTempFile("mailbox-" + harness + "-", ".log");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the library log file", e);
        }
        System.setProperty(LOG_FILE, file.toString());
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "info");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> summarise(file), "library-log-summary"));
    }

    private static void summarise(Path file) {
        long warnings = 0;
        long errors = 0;
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            for (String line : lines) {
                if (line.contains(" WARN ")) {
                    warnings++;
                } else if (line.contains(" ERROR ")) {
                    errors++;
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // a summary is a courtesy; the file is still there to read
        }
        System.err.printf("library log: %s (%d warnings, %d errors)%n", file, warnings, errors);
    }
}
