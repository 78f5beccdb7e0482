package dev.mailbox.cli;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.server.CoordinatorKeys;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Where the coordinator cluster is: {@code --coordinator host:port[,host:port...]}. */
final class CoordinatorOptions {

    @Option(names = {"-c", "--coordinator"}, paramLabel = "HOST:PORT[,HOST:PORT...]",
            defaultValue = "${env:MAILBOXCTL_COORDINATOR:-" + CoordinatorKeys.DEFAULT_CONTROL_PLANE + "}",
            description = CliKeys.COORDINATOR_HELP + " (default: $MAILBOXCTL_COORDINATOR or "
                    + CoordinatorKeys.DEFAULT_CONTROL_PLANE + ")")
    String coordinator;

    @Option(names = "--timeout-ms", defaultValue = "5000", description = "how long each call to a coordinator may "
            + "take before it is tried again or given up (default: ${DEFAULT-VALUE})")
    long timeoutMillis;

    @Mixin
    SecurityOptions security;

    List<String> endpoints() {
        return Arrays.stream(coordinator.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    CoordinationClient client() {
        return CoordinationClient.builder().endpoints(endpoints()).callTimeout(Duration.ofMillis(timeoutMillis))
                .maxAttempts(3).security(security.clientSecurity()).build();
    }
}
