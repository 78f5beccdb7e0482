package dev.mailbox.cli;

import dev.mailbox.coordination.server.CoordinatorKeys;
import dev.mailbox.coordination.settings.Setting;
import java.net.InetSocketAddress;

/**
 * The settings of the two server commands that belong to the process rather than to a builder: its operations
 * port, its log format, and a node's backend and coordinators. Each is defined once, like the builders' own
 * ({@link CoordinatorKeys}).
 */
final class CliKeys {

    private CliKeys() {
    }

    /** How a log line is written. */
    enum LogFormat {
        /** Plain lines, warnings and errors only. */
        TEXT,
        /** One JSON object per line, INFO and up. */
        JSON
    }

    /** The help of every command's {@code -c, --coordinator}, without its default. */
    static final String COORDINATOR_HELP = "control-plane address(es) of the coordinators, comma-separated";

    /** The operations port: metrics, health probes and the console. */
    static final Setting<InetSocketAddress> METRICS = Setting.address("metrics")
            .help("serve the operations port at HOST:PORT: Prometheus metrics at /metrics, probes at /health/live "
                    + "and /health/ready, the web console at /ui/ (https:// with the server's --tls-cert)")
            .defaults(s -> null, "none: no operations port").build();

    /** The log format. */
    static final Setting<LogFormat> LOG_FORMAT = Setting.choice("log-format", LogFormat.class)
            .help("text: plain lines, warnings and errors only; json: one JSON object per line on stderr (time, level, "
                    + "logger, thread, message, exception, and fields such as node_id), INFO and up")
            .defaults(LogFormat.TEXT).build();

    /** Where a node's mailboxes live. */
    static final Setting<String> BACKEND = Setting.text("backend").label("URI")
            .help("where mailboxes live: " + NodeBackend.HELP + "; or env:NAME or file:PATH holding the URI")
            .defaults("memory").build();

    /** The coordinators a node registers with. */
    static final Setting<String> COORDINATOR = Setting.text("coordinator").flags("-c", "--coordinator")
            .label("HOST:PORT[,HOST:PORT...]").help(COORDINATOR_HELP)
            .defaults(s -> System.getenv().getOrDefault("MAILBOXCTL_COORDINATOR", CoordinatorKeys.DEFAULT_CONTROL_PLANE),
                    "$MAILBOXCTL_COORDINATOR or " + CoordinatorKeys.DEFAULT_CONTROL_PLANE).build();
}
