package dev.mailbox.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Stands in for {@code /opt/mailboxctl/bin/mailboxctl} when DeploymentManifestsTest runs the commands of the
 * Kubernetes manifests and systemd units on one machine: it receives the argument list exactly as the pod's or
 * unit's command line produced it, moves every address and path onto this machine, and runs mailboxctl with it.
 * Nothing else changes: a flag mailboxctl does not know still fails.
 *
 * <p>Addresses: each {@code HOST:PORT} in an argument (or in the {@code --config} file it names) becomes the
 * loopback address the test assigned to that host and port (looked up by the whole host, then by its first DNS
 * label: {@code mailbox-coordinator-1.mailbox-coordinator} is the pod {@code mailbox-coordinator-1}); a
 * {@code 0.0.0.0:PORT} is this process's own ({@code LOOPBACK_SELF}). An address the test did not assign fails the
 * start. Paths under {@code /etc/mailbox} go to the test's files (this process's own, {@code etc.SELF}, if the
 * test gave it some: a host's certificate), under {@code /var/lib/mailbox} to a directory of this process's own.
 *
 * <p>Arguments: the mapping file (properties: {@code HOST:PORT=127.0.0.1:PORT}, {@code etc=DIR}, {@code var=DIR}),
 * then mailboxctl's arguments.
 */
final class LoopbackLauncher {

    private static final Pattern ADDRESS = Pattern.compile("(?<![A-Za-z0-9.-])([A-Za-z0-9][A-Za-z0-9.-]*):(\\d{1,5})(?!\\d)");

    private final Properties map;
    private final String self;

    LoopbackLauncher(Properties map, String self) {
        this.map = map;
        this.self = self;
    }

    public static void main(String[] args) throws IOException {
        Properties map = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
            map.load(in);
        }
        String self = System.getenv("LOOPBACK_SELF");
        LoopbackLauncher launcher = new LoopbackLauncher(map, self);
        List<String> mapped = new ArrayList<>();
        List<String> rest = List.of(args).subList(1, args.length);
        for (int i = 0; i < rest.size(); i++) {
            String a = rest.get(i);
            if (a.equals("--config") && i + 1 < rest.size()) {
                mapped.add(a);
                mapped.add(launcher.configCopy(rest.get(++i)));
            } else if (a.startsWith("--config=")) {
                mapped.add("--config=" + launcher.configCopy(a.substring("--config=".length())));
            } else {
                mapped.add(launcher.map(a));
            }
        }
        System.out.println("loopback: mailboxctl " + String.join(" ", mapped));
        MailboxCtl.main(mapped.toArray(String[]::new));
    }

    /** @return the argument with its addresses and paths moved onto this machine */
    String map(String argument) {
        Matcher m = ADDRESS.matcher(argument);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String host = m.group(1);
            String port = m.group(2);
            String key = host.equals("0.0.0.0") ? self + ":" + port : host + ":" + port;
            String to = map.getProperty(key);
            if (to == null && host.contains(".") && !host.equals("0.0.0.0")) {
                to = map.getProperty(host.substring(0, host.indexOf('.')) + ":" + port);
            }
            if (to == null) {
                throw new IllegalArgumentException("loopback: no address assigned to " + key + " (in '" + argument + "')");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(to));
        }
        m.appendTail(out);
        return out.toString().replace("/etc/mailbox", map.getProperty("etc." + self, map.getProperty("etc")))
                .replace("/var/lib/mailbox", map.getProperty("var") + "/" + self);
    }

    /** A copy of a {@code --config} file with each value mapped, in this process's directory. */
    private String configCopy(String path) throws IOException {
        Path source = Path.of(map(path));
        StringBuilder copy = new StringBuilder();
        for (String line : Files.readAllLines(source, StandardCharsets.UTF_8)) {
            int eq = line.indexOf('=');
            copy.append(line.isBlank() || line.startsWith("#") || eq < 0 ? line
                    : line.substring(0, eq + 1) + map(line.substring(eq + 1))).append('\n');
        }
        Path dir = Files.createDirectories(Path.of(map.getProperty("var"), self));
        Path target = dir.resolve(source.getFileName());
        Files.writeString(target, copy, StandardCharsets.UTF_8);
        return target.toString();
    }
}
