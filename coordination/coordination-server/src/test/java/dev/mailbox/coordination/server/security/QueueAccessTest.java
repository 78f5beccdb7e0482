package dev.mailbox.coordination.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.QueueChange;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.Queues;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.testkit.StderrCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may read and write queue records: a queue named N is a mailbox named N for the access rules. Writes need
 * admin on N or the node role; reads any grant on N; a node that names the caller it acts for has that caller
 * checked instead; refusals are PERMISSION_DENIED, change nothing, and are audited.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class QueueAccessTest {

    @TempDir
    static Path dir;

    private static final Map<String, String> TOKENS = new LinkedHashMap<>();
    private static StderrCapture captured;
    private static TestingCluster cluster;
    private static CoordinationClient admin;
    private static final List<AutoCloseable> CLOSE = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        captured = StderrCapture.start();
        StringBuilder tokens = new StringBuilder();
        for (String p : List.of("admin", "node-a", "qa", "ca", "rd", "nobody")) {
            String token = Access.newToken();
            TOKENS.put(p, token);
            tokens.append(Access.tokenLine(p, token)).append('\n');
        }
        Path tokenFile = Files.writeString(dir.resolve("tokens"), tokens.toString());
        Path rules = Files.writeString(dir.resolve("rules"), """
                admin   admin   *
                node-a  node    *
                qa      admin   orders*
                ca      client  a
                rd      reader  *
                nobody  runner  elsewhere
                """);
        Access access = Access.fromFiles(tokenFile, rules);
        cluster = TestingCluster.builder().size(1).configure(b -> b.access(access)).clientSecurity(as("admin")).start();
        cluster.awaitLeader(Duration.ofSeconds(30));
        admin = cluster.client();
        for (String name : List.of("0-x1", "0-x2", "0-x3", "0-x4", "0-x5", "a", "b", "orders-1")) {
            admin.queues().createIfAbsent(new QueueInfo(name, Map.of(), Map.of("t", "1"), 0, 0));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (int i = CLOSE.size() - 1; i >= 0; i--) {
            CLOSE.get(i).close();
        }
        cluster.close();
        captured.close();
    }

    private static ClientSecurity as(String principal) {
        return ClientSecurity.none().withToken(TOKENS.get(principal));
    }

    private static Queues queues(String principal) {
        CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).maxAttempts(2)
                .security(as(principal)).build();
        CLOSE.add(c);
        return c.queues();
    }

    private static void denied(ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(CoordinationException.class,
                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
    }

    /** Every record, as the admin reads it: what a refusal must leave as it was. */
    private static List<QueueInfo> state() {
        return admin.queues().list("", "", 1000).stream().map(n -> admin.queues().get(n).orElseThrow()).toList();
    }

    private static QueueChange tag(String key) {
        return new QueueChange(Map.of(), Set.of(), Map.of(key, "v"), Set.of(), 0);
    }

    @Test
    @DisplayName("a client, a reader or a stranger may not create, change or delete a queue: PERMISSION_DENIED, "
            + "nothing changes")
    void writesNeedAdminOrNode() {
        List<QueueInfo> before = state();
        denied(() -> queues("ca").createIfAbsent(new QueueInfo("a-new", Map.of(), Map.of(), 0, 0)));
        denied(() -> queues("ca").update("a", tag("mine")));
        denied(() -> queues("ca").delete("a"));
        denied(() -> queues("rd").update("b", tag("mine")));
        denied(() -> queues("nobody").delete("orders-1"));
        denied(() -> queues("qa").update("b", tag("mine")));
        assertThat(state()).isEqualTo(before);
        assertThat(queues("qa").update("orders-1", tag("by-qa"))).as("admin of orders*").isPresent();
        admin.queues().update("orders-1", new QueueChange(Map.of(), Set.of(), Map.of(), Set.of("by-qa"), 0));
    }

    @Test
    @DisplayName("reading a queue needs a grant on its namespace; a list shows only the queues the caller may read, "
            + "in full pages")
    void readsAndListsFollowGrants() {
        assertThat(queues("ca").get("a")).isPresent();
        denied(() -> queues("ca").get("b"));
        denied(() -> queues("nobody").get("a"));
        assertThat(queues("ca").list("", "", 1)).as("past five names it may not see").containsExactly("a");
        assertThat(queues("ca").list("", "", 1000)).containsExactly("a");
        assertThat(queues("qa").list("", "", 1000)).contains("orders-1").allMatch(n -> n.startsWith("orders"));
        assertThat(queues("nobody").list("", "", 1000)).isEmpty();
        assertThat(queues("rd").list("", "", 1000)).contains("0-x1", "a", "b", "orders-1");
    }

    @Test
    @DisplayName("a node manages queues for its SQS callers; when it names the caller, that caller is checked, and "
            + "only a node is believed")
    void nodesVouchForTheirCallers() {
        Queues node = queues("node-a");
        assertThat(node.createIfAbsent(new QueueInfo("n-1", Map.of(), Map.of(), 0, 0)).name()).isEqualTo("n-1");
        List<QueueInfo> before = state();
        denied(() -> node.onBehalfOf("ca").createIfAbsent(new QueueInfo("a-2", Map.of(), Map.of(), 0, 0)));
        denied(() -> node.onBehalfOf("qa").update("b", tag("x")));
        denied(() -> node.onBehalfOf("nobody").get("a"));
        denied(() -> queues("ca").onBehalfOf("admin").createIfAbsent(new QueueInfo("zz", Map.of(), Map.of(), 0, 0)));
        assertThat(state()).isEqualTo(before);
        assertThat(node.onBehalfOf("qa").createIfAbsent(new QueueInfo("orders-2", Map.of(), Map.of(), 0, 0)).name())
                .isEqualTo("orders-2");
        assertThat(node.onBehalfOf("ca").get("a")).isPresent();
        assertThat(node.onBehalfOf("ca").list("", "", 10)).containsExactly("a");
        assertThat(node.delete("n-1")).isPresent();

        String log = captured.text();
        assertThat(log).contains("audit principal=\"qa via node-a\" action=CreateQueue target=orders-2 outcome=OK");
        assertThat(log).contains("audit principal=node-a action=DeleteQueue target=n-1 outcome=OK");
        assertThat(log).contains("audit principal=\"ca via node-a\" action=CreateQueue target=a-2 outcome=REFUSED");
        for (Map.Entry<String, String> t : TOKENS.entrySet()) {
            assertThat(log).as("the token of " + t.getKey()).doesNotContain(t.getValue());
        }
    }
}
