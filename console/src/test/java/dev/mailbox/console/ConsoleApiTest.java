package dev.mailbox.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.http.HttpListener;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The console's JSON API over a real listener: who may read and do what, what is audited, and how large an answer
 * can get. The source is a node's ({@link NodeConsoleSource}) over in-memory mailboxes, with the cluster lists a
 * stand-in for the coordinators (the browser test runs the console on a real cluster).
 */
@DisplayName("The console's API")
@org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
class ConsoleApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Tokens and grants as a rules file would give them; every audit line kept. */
    static final class Rules implements ConsoleAccess {
        final Map<String, String> tokens = new ConcurrentHashMap<>();
        final Map<String, Map<String, Set<Right>>> grants = new ConcurrentHashMap<>();
        final List<String> audit = new CopyOnWriteArrayList<>();

        Rules grant(String principal, String token, String namespace, Right... rights) {
            tokens.put(token, principal);
            grants.computeIfAbsent(principal, p -> new ConcurrentHashMap<>())
                    .put(namespace, rights.length == 0 ? EnumSet.noneOf(Right.class) : EnumSet.of(rights[0], rights));
            return this;
        }

        @Override
        public boolean enforced() {
            return true;
        }

        @Override
        public @Nullable String principalOfToken(String bearerToken) {
            return tokens.get(bearerToken);
        }

        @Override
        public boolean allows(String principal, Right right, String namespace) {
            Map<String, Set<Right>> g = grants.getOrDefault(principal, Map.of());
            return g.getOrDefault(namespace, Set.of()).contains(right) || g.getOrDefault("*", Set.of()).contains(right);
        }

        @Override
        public void audited(String principal, String action, String target, String outcome) {
            audit.add(principal + " " + action + " " + target + " " + outcome);
        }

        @Override
        public void refused(String principal, String action, String target, String reason) {
            audit.add(principal + " " + action + " " + target + " REFUSED " + reason);
        }
    }

    private final Map<String, Mailbox<byte[]>> mailboxes = new TreeMap<>();
    private final List<Lease> leases = new ArrayList<>();
    private final Rules rules = new Rules()
            .grant("root", "admin-token", "*", ConsoleAccess.Right.values())
            .grant("watcher", "reader-token", "*", ConsoleAccess.Right.READ, ConsoleAccess.Right.COUNT)
            .grant("orders-app", "client-token", "orders", ConsoleAccess.Right.COUNT, ConsoleAccess.Right.RECEIVE,
                    ConsoleAccess.Right.SEND, ConsoleAccess.Right.PURGE);
    private HttpListener listener;
    private final HttpClient http = HttpClient.newHttpClient();

    private final ConsoleSource cluster = new ConsoleSource() {
        @Override
        public String kind() {
            return "node";
        }

        @Override
        public String id() {
            return "node-a";
        }

        @Override
        public List<ClusterStatus> coordinators() {
            return List.of(new ClusterStatus("c1", "LEADER", "c1", 3, 40, 40, Map.of("c1", "127.0.0.1:7000"), null));
        }

        @Override
        public List<NamespaceInfo> namespaces() {
            return List.of();
        }

        @Override
        public List<NodeInfo> nodes() {
            return List.of(new NodeInfo("node-a", "127.0.0.1:9000", "", "", List.of(), Map.of(), true, 0));
        }

        @Override
        public List<Lease> leases() {
            return leases;
        }

        @Override
        public RoutingSnapshot routes() {
            return new RoutingSnapshot(1, List.of());
        }

        @Override
        public SortedSet<String> mailboxIds() {
            synchronized (mailboxes) {
                return Collections.unmodifiableSortedSet(new TreeSet<>(mailboxes.keySet()));
            }
        }

        @Override
        public Optional<Mailbox<byte[]>> mailbox(String mailboxId) {
            synchronized (mailboxes) {
                return Optional.ofNullable(mailboxes.get(mailboxId));
            }
        }
    };

    @BeforeEach
    void start() {
        Console console = Console.builder().access(rules).source(cluster).build();
        listener = Console.mount(HttpListener.builder("metrics"), console).start();
    }

    @AfterEach
    void stop() {
        listener.close();
        mailboxes.values().forEach(Mailbox::close);
    }

    private Mailbox<byte[]> add(Mailbox<byte[]> m) {
        synchronized (mailboxes) {
            mailboxes.put(m.name(), m);
        }
        return m;
    }

    private Mailbox<byte[]> mailbox(String name) {
        return add(InMemoryMailbox.builder(name, Codec.bytes()).build());
    }

    record Answer(int status, JsonNode json, HttpResponse<String> raw) {
    }

    private Answer call(String method, String pathAndQuery, @Nullable String token, boolean actionHeader) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(listener.url() + pathAndQuery))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (actionHeader) {
            b.header("X-Mailbox-Console", "1");
        }
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode json = r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")
                    ? JSON.readTree(r.body()) : JSON.createObjectNode();
            return new Answer(r.statusCode(), json, r);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private Answer get(String path, @Nullable String token) {
        return call("GET", path, token, false);
    }

    private Answer post(String path, @Nullable String token) {
        return call("POST", path, token, true);
    }

    @Test
    @DisplayName("serves the page without a token, and no data without one (401, audited)")
    void pageAndTokens() {
        Answer page = get("/ui/", null);
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.raw().body()).contains("<script src=\"console.js\"");
        assertThat(page.raw().headers().firstValue("Content-Security-Policy")).get().asString()
                .contains("script-src 'self'").contains("frame-ancestors 'none'");
        assertThat(get("/ui/console.js", null).status()).isEqualTo(200);
        assertThat(get("/ui", null).status()).isEqualTo(308);

        assertThat(get("/ui/api/cluster", null).status()).isEqualTo(401);
        Answer wrong = get("/ui/api/cluster", "not-a-token");
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.json().get("error").asText()).contains("not one this server knows");
        assertThat(rules.audit).anyMatch(l -> l.startsWith("? console:cluster - REFUSED unknown token"));
        assertThat(String.join("\n", rules.audit)).doesNotContain("not-a-token");

        Answer ok = get("/ui/api/whoami", "reader-token");
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.json().get("principal").asText()).isEqualTo("watcher");
        assertThat(get("/ui/api/cluster", "reader-token").json().at("/coordinators/0/role").asText())
                .isEqualTo("LEADER");
    }

    @Test
    @DisplayName("a reader sees counts but cannot purge, peek or redrive: refused 403, audited, nothing changes")
    void readerCannotAct() {
        Mailbox<byte[]> orders = mailbox("orders");
        orders.sendBatch(List.of(new byte[] {1}, new byte[] {2}));

        Answer list = get("/ui/api/mailboxes", "reader-token");
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json().at("/items/0/queued").asLong()).isEqualTo(2);

        Answer purge = post("/ui/api/purge?id=orders", "reader-token");
        assertThat(purge.status()).isEqualTo(403);
        assertThat(purge.json().get("error").asText()).contains("watcher may not purge mailbox 'orders'");
        assertThat(get("/ui/api/peek?id=orders", "reader-token").status()).isEqualTo(403);
        assertThat(orders.approximateCount()).isEqualTo(2);
        assertThat(rules.audit).anyMatch(l -> l.startsWith("watcher console:Purge orders REFUSED"));

        Answer done = post("/ui/api/purge?id=orders", "client-token");
        assertThat(done.status()).isEqualTo(200);
        assertThat(done.json().get("purged").asLong()).isEqualTo(2);
        assertThat(orders.approximateCount()).isZero();
        assertThat(rules.audit).contains("orders-app console:Purge orders OK");
    }

    @Test
    @DisplayName("rights are per namespace: a client of one namespace sees and purges only its mailboxes")
    void perNamespace() {
        mailbox("orders").send(new byte[] {1});
        Mailbox<byte[]> billing = mailbox("billing");
        billing.send(new byte[] {1});

        Answer list = get("/ui/api/mailboxes", "client-token");
        assertThat(list.json().get("items")).extracting(n -> n.get("id").asText()).containsExactly("orders");
        assertThat(post("/ui/api/purge?id=billing", "client-token").status()).isEqualTo(403);
        assertThat(billing.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("an action must be a POST with the console's header (a form on another site cannot send it)")
    void actionsNeedPostAndHeader() {
        Mailbox<byte[]> orders = mailbox("orders");
        orders.send(new byte[] {1});
        assertThat(get("/ui/api/purge?id=orders", "admin-token").status()).isEqualTo(405);
        assertThat(call("POST", "/ui/api/purge?id=orders", "admin-token", false).status()).isEqualTo(403);
        assertThat(orders.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("a redrive moves the dead letters back with their bodies and attributes, to the mailbox that sent them")
    void redrive() {
        Mailbox<byte[]> dlq = mailbox("orders-dlq");
        Mailbox<byte[]> orders = add(InMemoryMailbox.builder("orders", Codec.bytes())
                .redrivePolicy(RedrivePolicy.of(1, dlq)).build());
        for (int i = 0; i < 25; i++) {
            orders.send(("m" + i).getBytes(StandardCharsets.UTF_8), SendOptions.defaults().withAttribute("n", "" + i));
        }
        // one delivery each, never acknowledged: the next receive moves them all to the dead-letter mailbox
        while (!orders.receive(ReceiveOptions.defaults().withMaxMessages(10).withVisibilityTimeout(Duration.ZERO))
                .isEmpty()) {
            // delivered once, visible again at once
        }
        assertThat(orders.approximateCount()).isZero();
        assertThat(dlq.approximateCount()).isEqualTo(25);

        JsonNode rows = get("/ui/api/mailboxes", "admin-token").json().get("items");
        assertThat(rows).anySatisfy(r -> {
            assertThat(r.get("id").asText()).isEqualTo("orders");
            assertThat(r.get("deadLetterMailbox").asText()).isEqualTo("orders-dlq");
            assertThat(r.get("deadLetters").asLong()).isEqualTo(25);
        });
        assertThat(rows).anySatisfy(r -> assertThat(r.path("deadLettersOf").path(0).asText()).isEqualTo("orders"));

        assertThat(post("/ui/api/redrive?from=orders-dlq", "reader-token").status()).isEqualTo(403);
        assertThat(dlq.approximateCount()).isEqualTo(25);

        Answer moved = post("/ui/api/redrive?from=orders-dlq&max=20", "admin-token");
        assertThat(moved.status()).isEqualTo(200);
        assertThat(moved.json().get("to").asText()).isEqualTo("orders");
        assertThat(moved.json().get("moved").asInt()).isEqualTo(20);
        assertThat(dlq.approximateCount()).isEqualTo(5);
        assertThat(orders.approximateCount()).isEqualTo(20);
        var back = orders.receive(ReceiveOptions.defaults().withMaxMessages(1));
        assertThat(new String(back.get(0).body(), StandardCharsets.UTF_8)).isEqualTo("m0");
        assertThat(back.get(0).attributes()).containsEntry("n", "0");
        assertThat(rules.audit).contains("root console:Redrive orders-dlq->orders OK");
    }

    @Test
    @DisplayName("answers are bounded: pages of at most 200 rows, peeks of 50 messages with bodies cut to 4 KiB")
    void bounded() {
        for (int i = 0; i < 450; i++) {
            leases.add(new Lease(i, String.format("ns%03d", i), "r", "node-a", "127.0.0.1:1", 0, 1, LeaseState.ACTIVE,
                    10_000, 0, 0));
        }
        Answer first = get("/ui/api/leases?limit=1000", "admin-token");
        assertThat(first.status()).isEqualTo(400);
        first = get("/ui/api/leases?limit=200", "admin-token");
        assertThat(first.json().get("items")).hasSize(200);
        assertThat(first.json().get("total").asInt()).isEqualTo(450);
        assertThat(first.json().get("next").asText()).isEqualTo("ns199");
        Answer second = get("/ui/api/leases?limit=200&after=ns199", "admin-token");
        assertThat(second.json().at("/items/0/mailboxId").asText()).isEqualTo("ns200");

        for (int i = 0; i < 60; i++) {
            mailbox(String.format("box%02d", i));
        }
        assertThat(get("/ui/api/mailboxes", "admin-token").json().get("items")).hasSize(50);

        Mailbox<byte[]> big = mailbox("big");
        byte[] body = new byte[200_000];
        java.util.Arrays.fill(body, (byte) 'x');
        for (int i = 0; i < 55; i++) {
            big.send(body);
        }
        assertThat(get("/ui/api/peek?id=big&max=51", "admin-token").status()).isEqualTo(400);
        Answer peek = get("/ui/api/peek?id=big&max=50", "admin-token");
        assertThat(peek.json().get("messages")).hasSize(50);
        assertThat(peek.raw().body().length()).as("the answer's length").isLessThan(1 << 20);
        assertThat(peek.json().at("/messages/0/text").asText()).hasSize(4096);
        assertThat(peek.json().at("/messages/0/truncated").asBoolean()).isTrue();
        assertThat(peek.raw().body().length()).isLessThan(50 * 4096 + 50_000);
        assertThat(big.approximateCount()).isEqualTo(55);
        assertThat(big.receive().get(0).deliveryCount()).isEqualTo(1); // the peek delivered nothing
    }

    @Test
    @DisplayName("a peek's answer stays bounded whatever the messages' attributes hold: each value is cut too (50"
            + " messages of 1 MiB, nearly all of it attributes, made a 50 MB answer while each body was cut to 4 KiB)")
    void peekCutsAttributes() {
        Mailbox<byte[]> fat = add(InMemoryMailbox.builder("fat", Codec.bytes())
                .maxMessageBytes(dev.mailbox.api.Limits.MAX_MESSAGE_BYTES).build());
        SendOptions attributes = SendOptions.defaults();
        for (int a = 0; a < 10; a++) {
            attributes = attributes.withAttribute("a" + a, "v".repeat(100_000));
        }
        for (int i = 0; i < 50; i++) {
            fat.send(new byte[] {'x'}, attributes);
        }
        Answer peek = get("/ui/api/peek?id=fat&max=50", "admin-token");
        assertThat(peek.status()).isEqualTo(200);
        assertThat(peek.json().get("messages")).hasSize(50);
        assertThat(peek.raw().body().length()).as("the answer's length").isLessThan(1 << 20);
        assertThat(peek.json().at("/messages/0/attributes/a0").asText()).startsWith("vvv");
        assertThat(peek.json().at("/messages/0/attributesTruncated").asBoolean()).isTrue();
    }

    @Test
    @DisplayName("a request with a body is refused before it is read; a client past its rate gets 429")
    void hostileClients() throws Exception {
        try (Socket s = new Socket(listener.address().getAddress(), listener.address().getPort())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /ui/api/purge?id=x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String head = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(head).isEqualTo("HTTP/1.1 413");
        }
        // past the rate: at most twice the limit, should a window turn in between
        Answer last = null;
        for (int i = 0; i < 2 * 300 + 1; i++) {
            last = get("/ui/api/whoami", "admin-token");
            if (last.status() == 429) {
                break;
            }
        }
        assertThat(last.status()).isEqualTo(429);
        assertThat(last.raw().headers().firstValue("Retry-After")).contains("10");
    }
}
