package dev.mailbox.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what the process writes to {@code System.err} (where slf4j-simple logs, and so the audit log) while
 * still passing it through to the real stderr, for tests that assert on log lines: audit entries written, secrets
 * never written. {@link #start()} replaces {@code System.err}; {@link #close()} puts the previous one back. Not
 * for tests that run concurrently with others that also replace {@code System.err}.
 */
public final class StderrCapture implements AutoCloseable {

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final PrintStream previous;

    private StderrCapture(PrintStream previous) {
        this.previous = previous;
    }

    /** @return a capture that has just replaced {@code System.err} */
    public static StderrCapture start() {
        StderrCapture c = new StderrCapture(System.err);
        System.setErr(new PrintStream(new Tee(c.captured, c.previous), true, StandardCharsets.UTF_8));
        return c;
    }

    /** @return everything written to {@code System.err} since {@link #start()}, as UTF-8 text */
    public String text() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    /** Puts back the {@code System.err} that was there before {@link #start()}. */
    @Override
    public void close() {
        System.setErr(previous);
    }

    /** Writes to the capture and to the real stream, one write at a time so lines do not interleave. */
    private static final class Tee extends OutputStream {
        private final ByteArrayOutputStream capture;
        private final OutputStream real;

        Tee(ByteArrayOutputStream capture, OutputStream real) {
            this.capture = capture;
            this.real = real;
        }

        @Override
        public void write(int b) throws IOException {
            synchronized (capture) {
                capture.write(b);
                real.write(b);
            }
        }

        @Override
        public void write(byte[] bytes, int off, int len) throws IOException {
            synchronized (capture) {
                capture.write(bytes, off, len);
                real.write(bytes, off, len);
            }
        }
    }
}
