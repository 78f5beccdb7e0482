package dev.mailbox.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code mailboxctl}: the command line for mailboxes and the coordinator.
 * Run with {@code java -jar cli/target/mailboxctl.jar --help}.
 */
@Command(name = "mailboxctl",
        mixinStandardHelpOptions = true,
        versionProvider = MailboxCtl.Version.class,
        description = "Work with Mailbox mailboxes and the coordinator.",
        footer = {"  mailboxctl tour", "  mailboxctl send memory:orders hello", "  mailboxctl help node start",
                "  mailboxctl --version"},
        subcommands = {DemoCommand.class, TourCommand.class,
                CoordinationCommands.Coordinator.class, CoordinationCommands.Cluster.class,
                CoordinationCommands.Leases.class, CoordinationCommands.Routes.class,
                CoordinationCommands.Namespaces.class, CoordinationCommands.Nodes.class, NodeCommand.class,
                MailboxCommands.Send.class, MailboxCommands.Call.class, MailboxCommands.Receive.class, MailboxCommands.Count.class,
                MailboxCommands.Purge.class, RunnerCommand.class, SecurityCommand.class, CommandLine.HelpCommand.class})
public final class MailboxCtl implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        JsonLogProvider.choose(args); // before anything logs: SLF4J binds its backend once
        System.exit(commandLine().execute(args));
    }

    /** @return the configured command line, for embedding and tests */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new MailboxCtl());
        // a refusal from a backend or the coordinator is a message for the user, not a stack trace
        cli.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("mailboxctl: " + message(e));
            line.getErr().flush();
            return e instanceof IllegalArgumentException ? ExitStatus.USAGE : ExitStatus.FAILED;
        });
        ExitStatus.addSections(cli);
        return cli;
    }

    /** @return what a failure says to the operator; a file error names the file and what is wrong with it */
    static String message(Exception e) {
        if (e instanceof java.nio.file.NoSuchFileException f) {
            return "no such file: " + f.getFile();
        }
        if (e instanceof java.nio.file.AccessDeniedException f) {
            return "permission denied: " + f.getFile();
        }
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() == null) {
            return "cannot use file " + f.getFile() + ": " + e.getClass().getSimpleName();
        }
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * The version, the commit it was built from and the Java runtime it runs on, read from the manifest of the jar
     * that holds this class (the build writes Implementation-Version and SCM-Revision into it): the same in
     * {@code cli/target/mailboxctl.jar} and in the distribution's {@code lib/}.
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            java.util.jar.Attributes manifest = ownManifest();
            String v = manifest == null ? null : manifest.getValue("Implementation-Version");
            String commit = manifest == null ? null : manifest.getValue("SCM-Revision");
            return new String[] {"mailboxctl " + (v == null || v.isBlank() ? "development build" : v),
                    "commit " + (commit == null || commit.isBlank() ? "unknown" : commit),
                    "java " + Runtime.version() + " at " + System.getProperty("java.home")};
        }

        /** @return the main attributes of the manifest of the jar this class was loaded from, or null (classes dir) */
        static java.util.jar.Attributes ownManifest() {
            java.net.URL self = MailboxCtl.class.getResource(MailboxCtl.class.getSimpleName() + ".class");
            if (self == null || !"jar".equals(self.getProtocol())) {
                return null;
            }
            try {
                java.net.JarURLConnection jar = (java.net.JarURLConnection) self.openConnection();
                java.util.jar.Manifest m = jar.getManifest();
                return m == null ? null : m.getMainAttributes();
            } catch (java.io.IOException e) {
                return null;
            }
        }
    }
}
