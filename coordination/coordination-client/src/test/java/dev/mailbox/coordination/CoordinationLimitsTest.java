package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Limits;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The rules themselves, at their edges; LimitsAgreementTest (server) shows every entry point applies them. */
class CoordinationLimitsTest {

    @Test
    @DisplayName("namespace names and node ids: 1 to 80 letters, digits, '.', '_', '-', starting with a letter or digit")
    void names() {
        assertThat(CoordinationLimits.namespaceProblem("orders")).isNull();
        assertThat(CoordinationLimits.namespaceProblem("a".repeat(80))).isNull();
        assertThat(CoordinationLimits.namespaceProblem("a".repeat(81))).contains("1 to 80");
        assertThat(CoordinationLimits.namespaceProblem("-x")).contains("starting with a letter or digit");
        assertThat(CoordinationLimits.namespaceProblem("")).isNotNull();
        assertThat(CoordinationLimits.namespaceProblem("a@b")).isNotNull();
        assertThat(CoordinationLimits.nodeIdProblem("node-a.eu_1")).isNull();
        assertThat(CoordinationLimits.nodeIdProblem("node a")).contains("node id must be");
    }

    @Test
    @DisplayName("a LeasePolicy of durations too long (or too negative) for a long of milliseconds is refused naming "
            + "the duration and its rule, not with an ArithmeticException")
    void hugePolicyDurations() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        Duration hugeNegative = Duration.ofSeconds(Long.MIN_VALUE);
        assertThatThrownBy(() -> new LeasePolicy(huge, Duration.ofSeconds(1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl must be between");
        assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(10), huge, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeat interval must be");
        assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(10), hugeNegative, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeat interval must be");
        assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(10), Duration.ofSeconds(3), huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grace must be");
        assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(10), Duration.ofSeconds(3), hugeNegative))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grace must be");
        assertThat(new LeasePolicy(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(10)).ttl())
                .isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    @DisplayName("a mailbox id is namespace@node or a bare namespace, and is always an extended mailbox name")
    void mailboxIds() {
        assertThat(CoordinationLimits.mailboxIdProblem("orders@node-a")).isNull();
        assertThat(CoordinationLimits.mailboxIdProblem("orders")).isNull();
        assertThat(CoordinationLimits.mailboxIdProblem("_nodes@node-a")).as("the reserved namespace parses").isNull();
        assertThat(CoordinationLimits.acquirableProblem("_nodes@node-a")).contains("reserved");
        for (String bad : List.of("a@b@c", "@b", "a@", "", " x", "a@b c")) {
            assertThat(CoordinationLimits.mailboxIdProblem(bad)).as(bad).isNotNull();
        }
        String longest = "n".repeat(80) + "@" + "m".repeat(80);
        assertThat(CoordinationLimits.mailboxIdProblem(longest)).isNull();
        assertThat(Limits.mailboxNameProblem(longest, true)).as("an extended mailbox name").isNull();
        assertThatThrownBy(() -> CoordinationLimits.requireMailboxId("a@b@c"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'namespace@node'");
    }

    @Test
    @DisplayName("runner ids and addresses: printable, no spaces; addresses are host:port with a port of 1 to 65535")
    void holders() {
        assertThat(CoordinationLimits.holderProblem("runner-1/host", "node-a", "10.0.0.1:7000")).isNull();
        assertThat(CoordinationLimits.holderProblem("[::1]:x", "n", "[::1]:7000")).isNull();
        assertThat(CoordinationLimits.addressProblem("host")).contains("host:port");
        assertThat(CoordinationLimits.addressProblem("host:0")).contains("1 to 65535");
        assertThat(CoordinationLimits.addressProblem("host:65536")).contains("1 to 65535");
        assertThat(CoordinationLimits.runnerIdProblem("has space")).contains("without spaces");
        assertThat(CoordinationLimits.runnerIdProblem("r".repeat(257))).contains("1 to 256");
        assertThatThrownBy(() -> new LeaseHolder("r", "n", "nowhere")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host:port");
    }

    @Test
    @DisplayName("TTLs of 1 s to 10 min; a policy's heartbeat is shorter than its TTL and its grace at most the TTL")
    void time() {
        assertThat(CoordinationLimits.ttlProblem(1_000)).isNull();
        assertThat(CoordinationLimits.ttlProblem(600_000)).isNull();
        assertThat(CoordinationLimits.ttlProblem(999)).contains("between PT1S and PT10M");
        assertThat(CoordinationLimits.ttlProblem(600_001)).contains("between");
        assertThat(CoordinationLimits.requestedTtlProblem(0)).as("0: the namespace's policy").isNull();
        assertThat(CoordinationLimits.policyProblem(10_000, 3_000, 2_000)).isNull();
        assertThat(CoordinationLimits.policyProblem(10_000, 10_000, 0)).contains("heartbeat interval");
        assertThat(CoordinationLimits.policyProblem(10_000, 1_000, 10_001)).contains("grace");
        assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(5), Duration.ofSeconds(6), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeat interval");
        assertThatThrownBy(() -> CoordinationLimits.requireTtl(Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl must be");
    }

    @Test
    @DisplayName("labels, node fields and request ids are bounded, so nothing a caller stores can grow without limit")
    void bounds() {
        Map<String, String> many = new HashMap<>();
        for (int i = 0; i <= CoordinationLimits.MAX_LABELS; i++) {
            many.put("k" + i, "v");
        }
        assertThat(CoordinationLimits.labelsProblem(many)).contains("at most 32 labels");
        assertThat(CoordinationLimits.labelsProblem(Map.of("k", "v".repeat(1_025)))).contains("label 'k'");
        assertThat(CoordinationLimits.labelsProblem(Map.of("", "v"))).contains("label key");
        assertThat(CoordinationLimits.labelsProblem(Map.of("team", "payments"))).isNull();
        assertThat(CoordinationLimits.nodeProblem("n", "h:1", "r".repeat(129), "", List.of(), Map.of()))
                .contains("region");
        assertThat(CoordinationLimits.nodeProblem("n", "h:1", "", "", List.of("a b"), Map.of())).contains("capability");
        assertThat(CoordinationLimits.requestIdProblem("x".repeat(65))).contains("at most 64");
        assertThat(CoordinationLimits.leaseRefProblem("a@b", 0, 1)).contains("positive");
    }
}
