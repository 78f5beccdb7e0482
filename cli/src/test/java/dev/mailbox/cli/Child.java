package dev.mailbox.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@code mailboxctl} child JVM for tests that need real processes: started, watched, signalled, killed. */
final class Child {

    private final Process process;
    private final Path output;

    private Child(Process process, Path output) {
        this.process = process;
        this.output = output;
    }

    /**
     * @param output where its stdout and stderr go
     * @param args   mailboxctl's arguments
     * @return the running child
     */
    static Child start(Path output, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), MailboxCtl.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        return new Child(p, output);
    }

    /** Waits until its output holds {@code text}, or fails naming what it printed. */
    void awaitOutput(String text, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (output().contains(text)) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("child exited (" + process.exitValue() + ") before printing '" + text + "':\n"
                        + output());
            }
            try {
                Thread.sleep(50); // polling a file another process writes: nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("child did not print '" + text + "' within " + timeout + ":\n" + output());
    }

    String output() throws IOException {
        return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
    }

    long pid() {
        return process.pid();
    }

    /** SIGSTOP or SIGCONT. */
    void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
        kill.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGKILL, and waits for it to be gone. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGTERM (its shutdown hook runs), and waits. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        return process.waitFor();
    }
}
