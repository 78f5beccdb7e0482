package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The start-up check: loopback may run open; beyond it, a warning, or with requireSecurity a refusal. */
class SecurityCheckTest {

    private static final InetSocketAddress ANY = new InetSocketAddress("0.0.0.0", 0);
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress("127.0.0.1", 0);

    @Test
    @DisplayName("beyond loopback without TLS and access rules, requireSecurity refuses, naming what is missing")
    void refusesBeyondLoopback() {
        assertThatThrownBy(() -> Security.check("node n", false, false, true, LOOPBACK, ANY))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("node n listens on")
                .hasMessageContaining("without TLS and access rules");
        assertThatThrownBy(() -> Security.check("node n", true, false, true, ANY))
                .hasMessageContaining("without access rules").hasMessageNotContaining("TLS");
        assertThatThrownBy(() -> Security.check("node n", false, true, true, ANY))
                .hasMessageContaining("without TLS").hasMessageNotContaining("access rules");
    }

    @Test
    @DisplayName("loopback may run open even when security is required; both TLS and access pass anywhere; otherwise a warning only")
    void passes() {
        assertThatCode(() -> Security.check("node n", false, false, true, LOOPBACK,
                InetSocketAddress.createUnresolved("localhost", 1))).doesNotThrowAnyException();
        assertThatCode(() -> Security.check("node n", true, true, true, ANY)).doesNotThrowAnyException();
        assertThatCode(() -> Security.check("node n", false, false, false, ANY)).doesNotThrowAnyException();
    }

    @Test
    @DisplayName("a mailbox node told to require security does not start unsecured on a wildcard address")
    void nodeRefusesToStart() {
        try (CoordinationClient client = CoordinationClient.builder().endpoint("127.0.0.1:1").build()) {
            assertThatThrownBy(() -> MailboxNode.builder("open").listen(ANY).coordinator(client).requireSecurity(true)
                    .start()).isInstanceOf(IllegalStateException.class).hasMessageContaining("mailbox node open");
        }
    }
}
