package dev.mailbox.cli;

import dev.mailbox.coordination.server.Access;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code mailboxctl security}: tokens for secured clusters. */
@Command(name = "security", description = "Tokens for secured coordinators and nodes.", mixinStandardHelpOptions = true,
        subcommands = {SecurityCommand.Token.class},
        footer = {"  mailboxctl security token app --append-to tokens"})
final class SecurityCommand {

    private SecurityCommand() {
    }

    @Command(name = "token", mixinStandardHelpOptions = true,
            description = {"Make a new random token for a principal: prints the token (give it to the principal), "
                    + "and adds its salted hash to the tokens file servers read (their --tokens), or prints that line "
                    + "to stderr."},
            footer = {"  mailboxctl security token app --append-to tokens > app.token",
                    "  mailboxctl security token node-a --append-to tokens > node-a.token"})
    static final class Token implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(paramLabel = "PRINCIPAL", description = "who the token is for (as named in the access rules)")
        String principal;
        @Option(names = "--append-to", paramLabel = "FILE", description = "append the hashed line to this tokens "
                + "file, created if missing (default: none, print the line to stderr)")
        Path tokens;
        /** The old name of --append-to, which the servers' --tokens (the file they read) made ambiguous. */
        @Option(names = "--tokens", hidden = true, paramLabel = "FILE")
        Path deprecatedTokens;

        @Override
        public Integer call() throws Exception {
            if (!principal.matches("[A-Za-z0-9_.@/-]{1,128}")) {
                throw new IllegalArgumentException("a principal is 1 to 128 characters of A-Z a-z 0-9 _ . @ / -, was '"
                        + principal + "'");
            }
            if (deprecatedTokens != null) {
                if (tokens != null) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "give --append-to, not both it and "
                            + "--tokens, its old name");
                }
                spec.commandLine().getErr().println("mailboxctl: security token --tokens is deprecated: say --append-to");
                tokens = deprecatedTokens;
            }
            String token = Access.newToken();
            String line = Access.tokenLine(principal, token);
            if (tokens != null) {
                // a file whose last line has no newline (edited by hand, written by a tool) would otherwise get
                // this line glued to that one, breaking both entries and the file the servers load
                String before = endsUnterminated(tokens) ? System.lineSeparator() : "";
                Files.writeString(tokens, before + line + System.lineSeparator(), StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } else {
                spec.commandLine().getErr().println(line);
            }
            spec.commandLine().getOut().println(token);
            return 0;
        }

        private static boolean endsUnterminated(Path file) throws java.io.IOException {
            if (!Files.exists(file)) {
                return false;
            }
            try (java.nio.channels.SeekableByteChannel ch = Files.newByteChannel(file)) {
                if (ch.size() == 0) {
                    return false;
                }
                java.nio.ByteBuffer last = java.nio.ByteBuffer.allocate(1);
                ch.position(ch.size() - 1).read(last);
                return last.get(0) != '\n';
            }
        }
    }
}
