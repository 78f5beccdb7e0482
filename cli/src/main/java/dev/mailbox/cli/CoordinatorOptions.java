package dev.mailbox.cli;

import dev.mailbox.coordination.CoordinationClient;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Where the coordinator cluster is: {@code --coordinator host:port[,host:port...]}. */
final class CoordinatorOptions {

    @Option(names = {"-c", "--coordinator"}, defaultValue = "${env:MAILBOXCTL_COORDINATOR:-127.0.0.1:7100}",
            description = "control-plane address(es) of the coordinator nodes, comma-separated "
                    + "(default: $MAILBOXCTL_COORDINATOR or ${DEFAULT-VALUE})")
    String coordinator;

    @Option(names = "--timeout-ms", defaultValue = "5000", description = "per-call timeout (default: ${DEFAULT-VALUE})")
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
