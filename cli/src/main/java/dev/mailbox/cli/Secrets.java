package dev.mailbox.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * Values that hold secrets (SQS access keys, backend and mailbox URIs with a password or a secret key, tokens) may
 * name where the secret is instead of holding it, so that it stays out of the process list ({@code ps},
 * {@code /proc/PID/cmdline}) and the shell's history: {@code env:NAME} reads environment variable NAME, and
 * {@code file:PATH} reads the file (surrounding white space dropped). A secret given inline on the command line is
 * used, with a warning.
 */
final class Secrets {

    static final String HELP = "a secret may be given as env:NAME (read from that environment variable) or file:PATH"
            + " (read from that file) instead of inline, where other users of the host can read it in the process"
            + " list";

    private Secrets() {
    }

    /**
     * @param given what the operator gave: {@code env:NAME}, {@code file:PATH} or the value itself
     * @param what  what it is, for messages ({@code --sqs-access-key})
     * @param env   the environment ({@code System::getenv})
     * @return the value, read from where it was named
     * @throws IllegalArgumentException if the variable is not set or the file cannot be read, or either is empty
     */
    static String read(String given, String what, UnaryOperator<@Nullable String> env) {
        if (given.startsWith("env:")) {
            String name = given.substring(4);
            String value = env.apply(name);
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(what + " names environment variable " + name + ", which is "
                        + (value == null ? "not set" : "empty"));
            }
            return value.strip();
        }
        if (given.startsWith("file:")) {
            Path path = Path.of(given.substring(5));
            String value;
            try {
                value = Files.readString(path, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException(what + " names file " + path + ", which cannot be read: " + e);
            }
            if (value.isBlank()) {
                throw new IllegalArgumentException(what + " names file " + path + ", which is empty");
            }
            return value.strip();
        }
        return given;
    }

    /** @return whether the value was given inline rather than as {@code env:} or {@code file:} */
    static boolean inline(String given) {
        return !given.startsWith("env:") && !given.startsWith("file:");
    }

    /**
     * Reads SQS access keys, each {@code KEY_ID:SECRET[:PRINCIPAL]}; a value from a variable or a file may hold
     * several, one per line or separated by commas, with {@code #} comment lines.
     *
     * @param given the values as given (each inline, {@code env:NAME} or {@code file:PATH})
     * @param what  the option or key, for messages
     * @param env   the environment
     * @return the keys
     */
    static List<String> accessKeys(List<String> given, String what, UnaryOperator<@Nullable String> env) {
        List<String> keys = new ArrayList<>();
        for (String g : given) {
            if (inline(g)) {
                keys.add(g);
                continue;
            }
            for (String line : read(g, what, env).split("\\R")) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                for (String k : l.split(",")) {
                    if (!k.isBlank()) {
                        keys.add(k.strip());
                    }
                }
            }
        }
        return keys;
    }

    /**
     * Logs that a secret was given on the command line, naming the option and how to give it instead.
     *
     * @param what    the option that held it
     * @param instead how to give it instead
     */
    static void warnInline(String what, String instead) {
        LoggerFactory.getLogger(Secrets.class).warn("{} holds a secret on the command line, where other users of this"
                + " host can read it (ps, /proc); {} instead", what, instead);
    }

    /** As {@link #warnInline(String, String)}, for an option that takes {@code env:NAME} and {@code file:PATH}. */
    static void warnInline(String what) {
        warnInline(what, "give env:NAME or file:PATH");
    }

    /**
     * @param uri a backend or mailbox URI as given (not {@code env:} or {@code file:})
     * @return whether it holds a password ({@code redis://[USER]:PASSWORD@}) or an SQS secret key
     */
    static boolean uriHoldsSecret(String uri) {
        return !NodeBackend.redact(uri).equals(uri);
    }

    /**
     * A URI given on the command line: read from where {@code env:} or {@code file:} names, or taken as given,
     * with a warning if it holds a password or a secret key.
     *
     * @param given the URI as given
     * @param what  the option or argument, for messages
     * @return the URI
     */
    static String uri(String given, String what) {
        if (!inline(given)) {
            return read(given, what, System::getenv);
        }
        if (uriHoldsSecret(given)) {
            warnInline(what + " " + NodeBackend.redact(given));
        }
        return given;
    }
}
