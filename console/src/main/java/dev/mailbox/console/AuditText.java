package dev.mailbox.console;

/** Audit values as one token each, as the coordination server writes them, so a line always parses. */
final class AuditText {

    private AuditText() {
    }

    static String quote(String value) {
        if (value.chars().anyMatch(c -> c == ' ' || c == '"' || c == '=' || c < 0x20)) {
            return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"").replaceAll("\\p{Cntrl}", "?") + '"';
        }
        return value;
    }
}
