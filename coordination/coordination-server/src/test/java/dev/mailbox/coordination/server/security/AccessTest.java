package dev.mailbox.coordination.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.proto.data.MailboxRequest;
import dev.mailbox.coordination.proto.data.MailboxServiceGrpc;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.coordination.wire.DataPlane;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.StderrCapture;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Authentication and per-namespace authorization on the control plane and the data plane, with tokens:
 * every refusal leaves the leases, routes and counts as they were, and no token or body reaches the logs.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class AccessTest {

    @TempDir
    static Path dir;

    private static final Map<String, String> TOKENS = new java.util.LinkedHashMap<>();
    private static StderrCapture captured;
    private static TestingCluster cluster;
    private static MailboxNode nodeA;
    private static MailboxNode nodeB;
    private static CoordinationClient admin;
    private static final List<AutoCloseable> CLOSE = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        captured = StderrCapture.start();
        StringBuilder tokens = new StringBuilder();
        for (String p : List.of("admin", "node-a", "node-b", "r1", "r2", "ca", "cb", "rd", "nobody")) {
            String token = Access.newToken();
            TOKENS.put(p, token);
            tokens.append(Access.tokenLine(p, token)).append('\n');
        }
        Path tokenFile = Files.writeString(dir.resolve("tokens"), tokens.toString());
        Path rules = Files.writeString(dir.resolve("rules"), """
                # principal role namespaces
                admin   admin   *
                node-a  node    *
                node-b  node    *
                r1      runner  a
                r2      runner  a
                ca      client  a
                cb      client  b
                rd      reader  *
                """);
        Access access = Access.fromFiles(tokenFile, rules);
        cluster = TestingCluster.builder().size(1).configure(b -> b.access(access))
                .clientSecurity(as("admin")).start();
        cluster.awaitLeader(Duration.ofSeconds(30));
        admin = cluster.client();
        nodeA = node("node-a", access);
        nodeB = node("node-b", access);
        for (String ns : List.of("a", "b")) {
            nodeA.publish(InMemoryMailbox.builder(ns + "@node-a", Codec.bytes()).build());
        }
        for (String ns : List.of("a@node-a", "b@node-a")) {
            nodeB.routingTable().orElseThrow().await(t -> t.route(ns).isPresent(), Duration.ofSeconds(10));
        }
    }

    private static MailboxNode node(String id, Access access) {
        CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).security(as(id)).build();
        CLOSE.add(c);
        MailboxNode n = MailboxNode.builder(id).coordinator(c).access(access).peerSecurity(as(id)).start();
        CLOSE.add(n);
        return n;
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

    private static CoordinationClient client(String principal) {
        CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).maxAttempts(2)
                .security(principal == null ? ClientSecurity.none() : as(principal)).build();
        CLOSE.add(c);
        return c;
    }

    private static RemoteMailbox<String> mailbox(String id, String principal, MailboxNode through) {
        RemoteMailbox<String> m = RemoteMailbox.builder(id, Codec.utf8()).node(through.address()).routeWait(Duration.ZERO)
                .security(principal == null ? ClientSecurity.none() : as(principal)).build();
        CLOSE.add(m);
        return m;
    }

    /** What a refusal must leave as it was. */
    private record State(List<Lease> leases, List<Route> routes, List<NodeInfo> nodes, long countA, long countB) {
    }

    private static State state() {
        return new State(admin.leases().list(""), admin.routes().list().routes(), admin.nodes().list(),
                mailbox("a@node-a", "admin", nodeA).approximateCount(), mailbox("b@node-a", "admin", nodeA).approximateCount());
    }

    @Test
    @DisplayName("no token, or one the server does not know: UNAUTHENTICATED on both planes, nothing changes")
    void unauthenticated() {
        State before = state();
        for (CoordinationClient c : List.of(client(null), CoordinationClient.builder().endpoints(cluster.endpoints())
                .maxAttempts(1).security(ClientSecurity.none().withToken("not-a-token")).build())) {
            assertThatThrownBy(() -> c.namespaces().create("sneaky", null, Map.of()))
                    .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                            .isEqualTo(CoordinationException.Reason.UNAUTHENTICATED));
            c.close();
        }
        assertThatThrownBy(() -> mailbox("a@node-a", null, nodeB).send("x")).isInstanceOf(MailboxException.class)
                .hasMessageContaining("UNAUTHENTICATED");
        assertThat(state()).isEqualTo(before);
        assertThat(admin.namespaces().get("sneaky")).isEmpty();
    }

    @Test
    @DisplayName("a client of namespace a cannot send to, receive from or purge b, through either node")
    void clientScopedToItsNamespace() {
        String secret = "body-" + Access.newToken();
        mailbox("a@node-a", "ca", nodeB).send(secret); // its own namespace, through the other node
        State before = state();
        for (MailboxNode through : List.of(nodeA, nodeB)) {
            RemoteMailbox<String> b = mailbox("b@node-a", "ca", through);
            assertThatThrownBy(() -> b.send("x")).isInstanceOf(MailboxException.class)
                    .hasMessageContaining("PERMISSION_DENIED").hasMessageContaining("'b'");
            assertThatThrownBy(() -> b.receive()).isInstanceOf(MailboxException.class).hasMessageContaining("PERMISSION_DENIED");
            assertThatThrownBy(b::purge).isInstanceOf(MailboxException.class).hasMessageContaining("PERMISSION_DENIED");
        }
        assertThat(state()).isEqualTo(before);
        List<Message<String>> got = mailbox("a@node-a", "ca", nodeB).receive(ReceiveOptions.defaults()
                .withWaitTime(Duration.ofSeconds(2)));
        assertThat(got).extracting(Message::body).containsExactly(secret);
        got.get(0).acknowledge();
        assertThat(captured.text()).as("bodies never reach the logs").doesNotContain(secret);
    }

    @Test
    @DisplayName("a runner cannot take another's runner id, release its lease, or revoke anything")
    void runnerScopedToItsLeases() {
        CoordinationClient r1 = client("r1");
        CoordinationClient r2 = client("r2");
        Lease held = r1.leases().acquire("a@work", new LeaseHolder("r1/worker", "n", "127.0.0.1:1"));
        State before = state();
        assertThatThrownBy(() -> r2.leases().release(held)).isInstanceOfSatisfying(CoordinationException.class,
                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
        assertThatThrownBy(() -> r2.leases().renew(held)).isInstanceOfSatisfying(CoordinationException.class,
                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
        assertThatThrownBy(() -> r2.leases().revoke("a@work")).isInstanceOfSatisfying(CoordinationException.class,
                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
        assertThatThrownBy(() -> r2.leases().acquire("a@other", new LeaseHolder("r1", "n", "127.0.0.1:1")))
                .isInstanceOfSatisfying(CoordinationException.class, e -> assertThat(e.reason())
                        .isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
        assertThatThrownBy(() -> r1.leases().acquire("b@work", new LeaseHolder("r1", "n", "127.0.0.1:1")))
                .as("a namespace it has no grant in").isInstanceOf(CoordinationException.class);
        assertThat(state()).isEqualTo(before);
        assertThat(r1.leases().release(held).state().name()).isEqualTo("RELEASED");
    }

    @Test
    @DisplayName("without the node role nobody registers a node or publishes a route")
    void nodeRoleNeeded() {
        State before = state();
        for (String p : List.of("ca", "r1", "rd")) {
            CoordinationClient c = client(p);
            assertThatThrownBy(() -> c.nodes().register(new NodeInfo(p, "127.0.0.1:9", "", "", List.of(), Map.of(),
                    false, 0), Duration.ofSeconds(10))).isInstanceOfSatisfying(CoordinationException.class,
                    e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.PERMISSION_DENIED));
        }
        assertThatThrownBy(() -> client("ca").leases().acquire("a@fake", new LeaseHolder("ca", "fake", "127.0.0.1:9")))
                .as("a client cannot publish a route").isInstanceOf(CoordinationException.class);
        assertThatThrownBy(() -> client("node-b").nodes().register(new NodeInfo("node-z", "127.0.0.1:9", "", "",
                List.of(), Map.of(), false, 0), Duration.ofSeconds(10))).as("a node registers only as itself")
                .isInstanceOf(CoordinationException.class);
        assertThat(state()).isEqualTo(before);
    }

    @Test
    @DisplayName("the owner checks a forwarded call as its original caller's, and believes only nodes")
    void forwardedCallsAreCheckedAtTheOwner() {
        State before = state();
        // node B vouching for cb: the owner refuses a purge of a, which cb may not touch
        assertThat(purgeDirectly("node-b", "cb", "a@node-a")).contains("PERMISSION_DENIED");
        // a client naming someone else is not believed: ca naming admin still cannot purge b
        assertThat(purgeDirectly("ca", "admin", "b@node-a")).contains("PERMISSION_DENIED");
        assertThat(state()).isEqualTo(before);
        // node B vouching for ca, in ca's namespace: allowed
        assertThat(purgeDirectly("node-b", "ca", "a@node-a")).isEqualTo("OK");
    }

    @Test
    @DisplayName("audit lines for refusals and administrative actions; tokens never in the logs")
    void audit() {
        admin.namespaces().create("audited", null, Map.of());
        assertThatThrownBy(() -> client("rd").namespaces().create("nope", null, Map.of()))
                .isInstanceOf(CoordinationException.class);
        String log = captured.text();
        assertThat(log).contains("audit principal=admin action=CreateNamespace target=audited outcome=OK");
        assertThat(log).contains("audit principal=rd action=CreateNamespace target=nope outcome=REFUSED");
        for (Map.Entry<String, String> t : TOKENS.entrySet()) {
            assertThat(log).as("the token of " + t.getKey()).doesNotContain(t.getValue());
        }
    }

    /** A purge sent straight to the owner node as {@code caller}, naming {@code onBehalfOf}. */
    private static String purgeDirectly(String caller, String onBehalfOf, String mailbox) {
        ManagedChannel ch = NettyChannelBuilder.forTarget(nodeA.address()).usePlaintext().build();
        try {
            Metadata h = new Metadata();
            h.put(dev.mailbox.coordination.internal.Tls.AUTHORIZATION, "Bearer " + TOKENS.get(caller));
            h.put(DataPlane.ON_BEHALF_OF, onBehalfOf);
            MailboxServiceGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h))
                    .withDeadlineAfter(5, TimeUnit.SECONDS).purge(MailboxRequest.newBuilder().setMailbox(mailbox).build());
            return "OK";
        } catch (StatusRuntimeException e) {
            return e.getStatus().toString();
        } finally {
            ch.shutdownNow();
        }
    }
}
