package dev.mailbox.coordination.server.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: one line per state-changing administrative action and per refused call, on the
 * {@code dev.mailbox.audit} logger, as {@code key=value} pairs. It names the principal, the action, the
 * target (a namespace, mailbox or node id) and the outcome; never a token, a secret or a message body.
 */
public final class Audit {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mailbox.audit");

    private Audit() {
    }

    /**
     * @param principal who
     * @param action    the method
     * @param target    what it acted on
     * @param outcome   OK, or the status code
     */
    public static void action(String principal, String action, String target, String outcome) {
        LOG.info("audit principal={} action={} target={} outcome={}", quote(principal), action, quote(target), outcome);
    }

    /**
     * @param principal who (or "?" before authentication)
     * @param action    the method
     * @param target    what it would have acted on
     * @param why       the reason it was refused
     */
    public static void refused(String principal, String action, String target, String why) {
        LOG.warn("audit principal={} action={} target={} outcome=REFUSED reason={}", quote(principal), action,
                quote(target), quote(why));
    }

    /** Values as one token: quoted when they hold spaces, quotes or '=', so a line always parses. */
    private static String quote(String value) {
        if (value.chars().anyMatch(c -> c == ' ' || c == '"' || c == '=' || c < 0x20)) {
            return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"").replaceAll("\\p{Cntrl}", "?") + '"';
        }
        return value;
    }
}
