package dev.mailbox.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One run of mailboxctl in this JVM, as a shell would see it: the exit code and what it printed.
 *
 * @param exitCode the exit code
 * @param out      what it printed on standard output
 * @param err      what it printed on standard error
 */
record CliRun(int exitCode, String out, String err) {

    /** Runs {@code mailboxctl args...}. */
    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cli = MailboxCtl.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
