package dev.mailbox.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code mailboxctl}: the command line for mailboxes (and, later, the coordinator).
 * Run with {@code java -jar cli/target/mailboxctl.jar --help}.
 */
@Command(name = "mailboxctl",
        mixinStandardHelpOptions = true,
        versionProvider = MailboxCtl.Version.class,
        description = "Work with Mailbox mailboxes.",
        subcommands = {DemoCommand.class, CommandLine.HelpCommand.class})
public final class MailboxCtl implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** @return the configured command line, for embedding and tests */
    public static CommandLine commandLine() {
        return new CommandLine(new MailboxCtl());
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Reads the version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = MailboxCtl.class.getPackage().getImplementationVersion();
            return new String[] {"mailboxctl " + (v == null ? "development build" : v)};
        }
    }
}
