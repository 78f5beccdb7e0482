package dev.mailbox.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * What {@code mailboxctl}'s exit statuses mean, said once: every command's help ends with the statuses it can
 * end with, and docs/reference/exit-codes.md is generated from the same list. It also gives every command's help
 * its "Examples:" heading, over the examples the command declares as its footer.
 */
final class ExitStatus {

    /** The command did what it was asked. */
    static final int OK = 0;
    /** The command ran and failed. */
    static final int FAILED = 1;
    /** The command line was wrong: nothing was done. */
    static final int USAGE = 2;
    /** A coordinator stopped after a fatal error (EX_SOFTWARE, sysexits.h). */
    static final int FATAL = 70;

    /** What each status means, by status (a key may name two: "130, 143"). */
    static final Map<String, String> MEANINGS = meanings();

    /** The commands that serve until they are stopped. */
    static final Set<String> SERVERS = Set.of("mailboxctl coordinator start", "mailboxctl node start",
            "mailboxctl runner");

    private ExitStatus() {
    }

    private static Map<String, String> meanings() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Integer.toString(OK), "success");
        m.put(Integer.toString(FAILED), "the command ran and failed: a backend or the coordinators refused it or "
                + "could not be reached, or a --wait-ms ran out (one line on stderr says why)");
        m.put(Integer.toString(USAGE), "a usage error: an unknown flag, or an argument or setting missing, malformed "
                + "or out of range; nothing was done (stderr says what, with the usage)");
        m.put(Integer.toString(FATAL), "coordinator start only: the coordinator stopped after a fatal error (out of "
                + "memory, its Raft server stopped by itself); its supervisor should restart it");
        m.put("130, 143", "a server command (coordinator start, node start, runner) stopped by Ctrl-C or SIGTERM, "
                + "after shutting down cleanly (a node releases its registration, a runner its lease): 128 plus the "
                + "signal's number");
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * @param qualifiedName a command's full name: {@code mailboxctl node start}
     * @return the statuses it can end with, and what each means
     */
    static Map<String, String> of(String qualifiedName) {
        Map<String, String> m = new LinkedHashMap<>();
        MEANINGS.forEach((status, meaning) -> {
            boolean server = SERVERS.contains(qualifiedName);
            if ((status.equals(Integer.toString(FATAL)) && !qualifiedName.equals("mailboxctl coordinator start"))
                    || (status.startsWith("130") && !server)) {
                return;
            }
            m.put(status, meaning);
        });
        return m;
    }

    /**
     * Gives a command and each of its subcommands an "Examples:" heading over the examples in its footer, and an
     * "Exit status:" section.
     *
     * @param line the command line
     */
    static void addSections(CommandLine line) {
        CommandSpec spec = line.getCommandSpec();
        UsageMessageSpec usage = spec.usageMessage();
        if (line.getCommand() instanceof CommandLine.HelpCommand && usage.footer().length == 0) {
            usage.footer("  mailboxctl help", "  mailboxctl help receive", "  mailboxctl help leases list");
        }
        if (usage.footer().length > 0) {
            usage.footerHeading("%nExamples:%n");
        }
        usage.exitCodeListHeading("%nExit status:%n");
        Map<String, String> list = new LinkedHashMap<>();
        of(spec.qualifiedName()).forEach((status, meaning) -> list.put(" " + status, meaning));
        usage.exitCodeList(list);
        for (CommandLine sub : line.getSubcommands().values()) {
            if (sub.getCommandSpec().usageMessage().exitCodeList().isEmpty()) {
                addSections(sub);
            }
        }
    }
}
