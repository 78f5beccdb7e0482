package dev.mailbox.cli;

import java.io.PrintStream;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventAware;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * An SLF4J backend that writes one JSON object per line to standard error: {@code time} (ISO-8601, UTC),
 * {@code level} (lower case), {@code logger}, {@code thread}, {@code message}, {@code exception} (the
 * stack trace, when there is one), then the MDC's entries and the event's key-values (such as
 * {@code node_id}, {@code from}, {@code to}, {@code term}) as fields of their own. Numbers and booleans
 * stay JSON numbers and booleans. What a log shipper reads without a grok pattern.
 *
 * <p>{@code mailboxctl ... --log-format json} selects it (through SLF4J's {@code slf4j.provider} system
 * property, before any logger exists); otherwise slf4j-simple writes text as before. It logs INFO and up,
 * or the level {@code -Dorg.slf4j.simpleLogger.defaultLogLevel} names. A few dozen lines instead of a
 * logging framework: the cli needs nothing else from one.
 */
public final class JsonLogProvider implements SLF4JServiceProvider {

    /** The SLF4J property that names the provider to use. */
    static final String PROVIDER_PROPERTY = "slf4j.provider";

    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new BasicMDCAdapter();
    private ILoggerFactory loggers;

    /** Called by SLF4J. */
    public JsonLogProvider() {
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggers;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        Level threshold = level(System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "info"));
        Map<String, Logger> byName = new ConcurrentHashMap<>();
        PrintStream err = System.err;
        // Jetty (the HTTP listeners) says at INFO that it started and stopped: noise next to our own lines
        Level quiet = threshold.toInt() >= Level.WARN.toInt() ? threshold : Level.WARN;
        loggers = name -> byName.computeIfAbsent(name, n -> new JsonLogger(n,
                n.startsWith("org.eclipse.jetty.") ? quiet : threshold, err, mdc));
    }

    private static Level level(String name) {
        try {
            return Level.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return Level.INFO;
        }
    }

    /** Writes events at or above its threshold as JSON lines. */
    static final class JsonLogger extends LegacyAbstractLogger implements LoggingEventAware {
        private static final long serialVersionUID = 1L;
        private final transient Level threshold;
        private final transient PrintStream out;
        private final transient MDCAdapter mdc;

        JsonLogger(String name, Level threshold, PrintStream out, MDCAdapter mdc) {
            this.name = name;
            this.threshold = threshold;
            this.out = out;
            this.mdc = mdc;
        }

        private boolean on(Level level) {
            return level.toInt() >= threshold.toInt();
        }

        @Override
        public boolean isTraceEnabled() {
            return on(Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return on(Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return on(Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return on(Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return on(Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                                   Throwable throwable) {
            write(level, MessageFormatter.basicArrayFormat(pattern, arguments), throwable, null);
        }

        /** The fluent API's events, with their key-values. */
        @Override
        public void log(LoggingEvent event) {
            if (!on(event.getLevel())) {
                return;
            }
            Object[] args = event.getArgumentArray();
            write(event.getLevel(), args == null ? event.getMessage()
                    : MessageFormatter.basicArrayFormat(event.getMessage(), args), event.getThrowable(),
                    event.getKeyValuePairs());
        }

        private void write(Level level, String message, Throwable throwable, java.util.List<KeyValuePair> pairs) {
            StringBuilder b = new StringBuilder(256).append('{');
            field(b, "time", Instant.now().toString());
            field(b, "level", level.name().toLowerCase(Locale.ROOT));
            field(b, "logger", name);
            field(b, "thread", Thread.currentThread().getName());
            field(b, "message", message == null ? "" : message);
            if (throwable != null) {
                java.io.StringWriter trace = new java.io.StringWriter();
                throwable.printStackTrace(new java.io.PrintWriter(trace));
                field(b, "exception", trace.toString());
            }
            Map<String, String> context = mdc.getCopyOfContextMap();
            if (context != null) {
                context.forEach((k, v) -> field(b, k, v));
            }
            if (pairs != null) {
                for (KeyValuePair p : pairs) {
                    field(b, p.key, p.value);
                }
            }
            b.append('}');
            String line = b.toString();
            synchronized (out) {
                out.println(line);
                out.flush();
            }
        }

        private static void field(StringBuilder b, String key, Object value) {
            if (b.length() > 1) {
                b.append(',');
            }
            quote(b, key).append(':');
            if (value instanceof Boolean || value instanceof Integer || value instanceof Long || value instanceof Short
                    || value instanceof Byte || (value instanceof Double d && Double.isFinite(d))
                    || (value instanceof Float f && Float.isFinite(f))) {
                b.append(value);
            } else {
                quote(b, String.valueOf(value));
            }
        }

        static StringBuilder quote(StringBuilder b, String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> {
                        if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            return b.append('"');
        }
    }

    /**
     * Chooses the log format of this process from its arguments, before anything logs: {@code --log-format
     * json} (or {@code --log-format=json}, or {@code log-format=json} in the {@code --config} file) selects
     * this provider. Picocli validates the option itself later; this only looks.
     *
     * @param args the command line
     */
    static void choose(String[] args) {
        if (System.getProperty(PROVIDER_PROPERTY) != null) {
            return; // the operator chose a backend on the JVM's command line
        }
        String format = null;
        String config = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--log-format") && i + 1 < args.length) {
                format = args[i + 1];
            } else if (args[i].startsWith("--log-format=")) {
                format = args[i].substring("--log-format=".length());
            } else if (args[i].equals("--config") && i + 1 < args.length) {
                config = args[i + 1];
            } else if (args[i].startsWith("--config=")) {
                config = args[i].substring("--config=".length());
            }
        }
        if (format == null && config != null) {
            java.util.Properties p = new java.util.Properties();
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(config))) {
                p.load(in);
                format = p.getProperty("log-format");
            } catch (java.io.IOException | RuntimeException e) {
                return; // the command reports an unreadable --config itself
            }
        }
        if (format != null && format.trim().equalsIgnoreCase("json")) {
            System.setProperty(PROVIDER_PROPERTY, JsonLogProvider.class.getName());
            // SLF4J says which provider it loads in a plain line of its own: keep stderr all JSON
            if (System.getProperty("slf4j.internal.verbosity") == null) {
                System.setProperty("slf4j.internal.verbosity", "WARN");
            }
            // grpc-java logs through java.util.logging: its lines must be JSON too, not the console handler's
            java.util.logging.LogManager.getLogManager().reset();
            java.util.logging.Logger.getLogger("").addHandler(new JulBridge());
        }
    }

    /** Hands java.util.logging records to SLF4J, so that they come out as JSON lines like the rest. */
    static final class JulBridge extends java.util.logging.Handler {
        JulBridge() {
            setLevel(java.util.logging.Level.INFO);
        }

        @Override
        public void publish(java.util.logging.LogRecord r) {
            if (r == null || !isLoggable(r)) {
                return;
            }
            Logger log = org.slf4j.LoggerFactory.getLogger(r.getLoggerName() == null ? "jul" : r.getLoggerName());
            String message = r.getMessage();
            if (message != null && r.getParameters() != null && r.getParameters().length > 0) {
                try {
                    message = java.text.MessageFormat.format(message, r.getParameters());
                } catch (IllegalArgumentException e) {
                    // not a MessageFormat pattern: keep it as written
                }
            }
            int level = r.getLevel().intValue();
            Level to = level >= java.util.logging.Level.SEVERE.intValue() ? Level.ERROR
                    : level >= java.util.logging.Level.WARNING.intValue() ? Level.WARN
                    : level >= java.util.logging.Level.INFO.intValue() ? Level.INFO : Level.DEBUG;
            log.atLevel(to).setCause(r.getThrown()).log(message);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
