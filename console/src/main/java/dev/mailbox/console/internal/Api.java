package dev.mailbox.console.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Inspection;
import dev.mailbox.console.ConsoleAccess;
import dev.mailbox.console.ConsoleAccess.Right;
import dev.mailbox.console.ConsoleSource;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.NamespaceInfo;
import dev.mailbox.coordination.NodeInfo;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's JSON API under {@code /ui/api/}: every request authenticated (a bearer token) and authorized
 * against the access rules before the source is read, every action audited, every answer bounded.
 */
public final class Api {

    private static final Logger LOG = LoggerFactory.getLogger(Api.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The most rows of a list in one answer. */
    public static final int MAX_PAGE = 200;
    /** The most mailboxes in one answer (each is counted by its backend). */
    public static final int MAX_MAILBOX_PAGE = 50;
    /** The most messages in one peek. */
    public static final int MAX_PEEK = 50;
    /** The most bytes of a body shown. */
    public static final int MAX_BODY_PREVIEW = 4096;
    /** The most characters of an attribute's value shown. */
    public static final int MAX_ATTRIBUTE_PREVIEW = 256;
    /** The most messages one redrive request moves. */
    public static final int MAX_REDRIVE = 1000;
    /** The longest one redrive request runs. */
    public static final int REDRIVE_SECONDS = 10;
    /** The header a state-changing request must carry (a form on another site cannot). */
    public static final String ACTION_HEADER = "x-mailbox-console";
    /** How many mailboxes a redrive without a destination looks through for the one whose dead letters these are. */
    private static final int REDRIVE_LOOKUP = 200;

    private final ConsoleSource source;
    private final ConsoleAccess access;

    /**
     * @param source what to show
     * @param access who may see and do what
     */
    public Api(ConsoleSource source, ConsoleAccess access) {
        this.source = source;
        this.access = access;
    }

    /** @return what it shows */
    public ConsoleSource source() {
        return source;
    }

    /** A request refused or failed: its status and message. */
    private static final class Refusal extends RuntimeException {
        private final int status;

        Refusal(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /**
     * @param request a request under {@code /ui/api/}
     * @return the answer
     */
    public HttpResponse handle(HttpRequest request) {
        String action = request.rawPath().substring("/ui/api/".length());
        String principal = "?";
        try {
            Query q = Query.parse(request.rawQuery());
            principal = authenticate(request, action);
            boolean post = request.method().equals("POST");
            boolean changes = action.equals("purge") || action.equals("redrive");
            if (changes != post || (!post && !request.method().equals("GET"))) {
                throw new Refusal(405, changes ? action + " is a POST" : action + " is a GET");
            }
            if (changes && request.header(ACTION_HEADER) == null) {
                throw new Refusal(403, "an action needs the " + ACTION_HEADER + " header (the console's page sends it)");
            }
            ObjectNode body = switch (action) {
                case "whoami" -> whoami(principal, request);
                case "cluster" -> cluster();
                case "namespaces" -> namespaces(principal, q);
                case "nodes" -> nodes(principal, q);
                case "leases" -> leases(principal, q);
                case "routes" -> routes(principal, q);
                case "mailboxes" -> mailboxes(principal, q);
                case "peek" -> peek(principal, q);
                case "purge" -> purge(principal, q);
                case "redrive" -> redrive(principal, q);
                default -> throw new Refusal(404, "no such call: " + action);
            };
            return json(200, body);
        } catch (Refusal r) {
            return error(r.status, r.getMessage());
        } catch (IllegalArgumentException e) {
            return error(400, String.valueOf(e.getMessage()));
        } catch (RuntimeException e) {
            // a coordinator out of reach, a backend down: the page shows it and polls again
            LOG.debug("console {} for {} failed", action, principal, e);
            return error(503, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    // ---- authentication and authorization

    private String authenticate(HttpRequest request, String action) {
        if (!access.enforced()) {
            return ConsoleAccess.ANONYMOUS;
        }
        String auth = request.header("authorization");
        String principal = null;
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            principal = access.principalOfToken(auth.substring(7).trim());
        }
        if (principal == null) {
            String why = auth == null ? "no token" : "unknown token";
            access.refused("?", "console:" + action, "-", why);
            throw new Refusal(401, auth == null ? "this console needs a bearer token: paste yours above"
                    : "the token is not one this server knows");
        }
        return principal;
    }

    private void require(String principal, Right right, String namespace, String action, String target, String what) {
        if (!access.allows(principal, right, namespace)) {
            String why = what + " (that needs the " + right + " right on " + (namespace.equals("*") ? "every namespace"
                    : "namespace '" + namespace + "'") + ")";
            access.refused(principal, "console:" + action, target, why);
            throw new Refusal(403, principal + " may not " + why);
        }
    }

    private boolean mayRead(String principal, String namespace) {
        return access.allows(principal, Right.READ, namespace);
    }

    // ---- reads

    private ObjectNode whoami(String principal, HttpRequest request) {
        ObjectNode o = JSON.createObjectNode();
        o.put("principal", principal);
        o.put("enforced", access.enforced());
        o.put("kind", source.kind());
        o.put("id", source.id());
        o.put("secure", request.secure());
        o.put("mailboxes", source.kind().equals("node"));
        return o;
    }

    private ObjectNode cluster() {
        ObjectNode o = JSON.createObjectNode();
        ArrayNode list = o.putArray("coordinators");
        List<ClusterStatus> all = source.coordinators();
        for (ClusterStatus s : all.subList(0, Math.min(all.size(), MAX_PAGE))) {
            ObjectNode c = list.addObject();
            c.put("nodeId", s.nodeId());
            c.put("role", s.role());
            c.put("leaderId", s.leaderId());
            c.put("term", s.term());
            c.put("appliedIndex", s.appliedIndex());
            c.put("commitIndex", s.commitIndex());
            c.put("fault", s.fault());
            ObjectNode members = c.putObject("members");
            s.members().entrySet().stream().sorted(Map.Entry.comparingByKey()).limit(MAX_PAGE)
                    .forEach(m -> members.put(m.getKey(), m.getValue()));
        }
        return o;
    }

    private ObjectNode namespaces(String principal, Query q) {
        List<NamespaceInfo> visible = source.namespaces().stream().filter(n -> mayRead(principal, n.name()))
                .sorted(Comparator.comparing(NamespaceInfo::name)).toList();
        return page(visible, NamespaceInfo::name, q, MAX_PAGE, (n, o) -> {
            o.put("name", n.name());
            o.put("partition", n.partition());
            o.put("owner", n.ownerNodeId());
            o.put("ttlMs", n.policy().ttl().toMillis());
            o.put("heartbeatMs", n.policy().heartbeatInterval().toMillis());
            o.put("graceMs", n.policy().grace().toMillis());
            o.put("createdAt", n.createdAtMillis());
            map(o, "labels", n.labels());
        });
    }

    private ObjectNode nodes(String principal, Query q) {
        require(principal, Right.READ, "*", "nodes", "-", "read the nodes");
        List<NodeInfo> all = source.nodes().stream().sorted(Comparator.comparing(NodeInfo::id)).toList();
        return page(all, NodeInfo::id, q, MAX_PAGE, (n, o) -> {
            o.put("id", n.id());
            o.put("address", n.address());
            o.put("region", n.region());
            o.put("version", n.version());
            o.put("up", n.up());
            o.put("registeredAt", n.registeredAtMillis());
            ArrayNode caps = o.putArray("capabilities");
            n.capabilities().stream().limit(32).forEach(caps::add);
            map(o, "labels", n.labels());
        });
    }

    private ObjectNode leases(String principal, Query q) {
        String namespace = q.get("namespace");
        List<Lease> visible = source.leases().stream()
                .filter(l -> namespace == null ? !l.namespace().equals(CoordinationLimits.NODES_NAMESPACE)
                        : l.namespace().equals(namespace))
                .filter(l -> mayRead(principal, l.namespace()))
                .sorted(Comparator.comparing(Lease::mailboxId)).toList();
        return page(visible, Lease::mailboxId, q, MAX_PAGE, (l, o) -> {
            o.put("mailboxId", l.mailboxId());
            o.put("runnerId", l.runnerId());
            o.put("nodeId", l.nodeId());
            o.put("address", l.address());
            o.put("leaseId", l.leaseId());
            o.put("epoch", l.epoch());
            o.put("state", l.state().name());
            o.put("ttlMs", l.ttlMillis());
            o.put("grantedAt", l.grantedAtMillis());
            o.put("endedAt", l.endedAtMillis());
            o.put("timeLeftMs", l.state() == dev.mailbox.coordination.LeaseState.ACTIVE ? source.timeLeftMillis(l) : -1);
        });
    }

    private ObjectNode routes(String principal, Query q) {
        RoutingSnapshot snapshot = source.routes();
        List<Route> visible = snapshot.routes().stream()
                .filter(r -> !CoordinationLimits.namespaceOf(r.mailboxId()).equals(CoordinationLimits.NODES_NAMESPACE))
                .filter(r -> mayRead(principal, CoordinationLimits.namespaceOf(r.mailboxId())))
                .sorted(Comparator.comparing(Route::mailboxId)).toList();
        ObjectNode o = page(visible, Route::mailboxId, q, MAX_PAGE, (r, row) -> {
            row.put("mailboxId", r.mailboxId());
            row.put("nodeId", r.nodeId());
            row.put("runnerId", r.runnerId());
            row.put("address", r.address());
            row.put("partition", r.partition());
            row.put("leaseId", r.leaseId());
            row.put("epoch", r.epoch());
        });
        o.put("revision", snapshot.revision());
        return o;
    }

    private ObjectNode mailboxes(String principal, Query q) {
        if (!source.kind().equals("node")) {
            throw new Refusal(404, "a coordinator holds no messages: open a node's console (the Nodes tab links to "
                    + "those that publish one)");
        }
        String prefix = q.get("prefix");
        SortedSet<String> ids = source.mailboxIds();
        List<String> visible = ids.stream().filter(id -> prefix == null || id.startsWith(prefix))
                .filter(id -> access.allows(principal, Right.COUNT, CoordinationLimits.namespaceOf(id))).toList();
        Map<String, Inspection.@Nullable Stats> stats = new HashMap<>();
        Map<String, String> errors = new HashMap<>();
        ObjectNode o = page(visible, id -> id, q, MAX_MAILBOX_PAGE, (id, row) -> {
            row.put("id", id);
            row.put("namespace", CoordinationLimits.namespaceOf(id));
            Optional<Mailbox<byte[]>> m = source.mailbox(id);
            if (m.isEmpty()) {
                row.put("error", "not open on this node");
                return;
            }
            try {
                Inspection inspection = Inspection.of(m.get());
                row.put("canPeek", inspection != null && inspection.canPeek());
                if (inspection == null) {
                    row.put("total", m.get().approximateCount());
                    stats.put(id, null);
                    return;
                }
                Inspection.Stats s = inspection.inspect();
                stats.put(id, s);
                row.put("queued", s.queued());
                row.put("inFlight", s.inFlight());
                row.put("delayed", s.delayed());
                row.put("total", s.total());
                row.put("exact", s.exact());
                if (s.oldestAge() != null) {
                    row.put("oldestAgeMs", s.oldestAge().toMillis());
                }
                if (s.deadLetterMailbox() != null) {
                    row.put("deadLetterMailbox", s.deadLetterMailbox());
                    row.put("maxReceiveCount", s.maxReceiveCount());
                }
            } catch (RuntimeException e) {
                errors.put(id, e.getMessage());
                row.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        });
        // the dead letters of each row, and which rows' dead letters each row holds (a redrive's destination)
        Map<String, List<String>> sourcesOf = new LinkedHashMap<>();
        stats.forEach((id, s) -> {
            if (s != null && s.deadLetterMailbox() != null) {
                sourcesOf.computeIfAbsent(s.deadLetterMailbox(), k -> new ArrayList<>()).add(id);
            }
        });
        for (var row : o.withArray("items")) {
            ObjectNode r = (ObjectNode) row;
            String id = r.get("id").asText();
            if (r.has("deadLetterMailbox")) {
                String dlq = r.get("deadLetterMailbox").asText();
                Long n = deadLetterCount(principal, dlq, stats);
                if (n != null) {
                    r.put("deadLetters", n);
                }
            }
            List<String> from = sourcesOf.get(id);
            if (from != null) {
                ArrayNode a = r.putArray("deadLettersOf");
                from.stream().sorted().forEach(a::add);
            }
        }
        return o;
    }

    private @Nullable Long deadLetterCount(String principal, String dlq, Map<String, Inspection.@Nullable Stats> seen) {
        if (!access.allows(principal, Right.COUNT, CoordinationLimits.namespaceOf(dlq))) {
            return null;
        }
        Inspection.Stats s = seen.get(dlq);
        if (s != null) {
            return s.total();
        }
        try {
            Optional<Mailbox<byte[]>> m = source.mailbox(dlq);
            if (m.isEmpty()) {
                return null;
            }
            Inspection i = Inspection.of(m.get());
            return i != null ? i.inspect().total() : m.get().approximateCount();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private Mailbox<byte[]> mailbox(String id) {
        return source.mailbox(id).orElseThrow(() -> new Refusal(404, "mailbox '" + id + "' is not open on "
                + source.kind() + " " + source.id()));
    }

    private ObjectNode peek(String principal, Query q) {
        String id = q.required("id");
        int max = q.intIn("max", 10, 1, MAX_PEEK);
        require(principal, Right.RECEIVE, CoordinationLimits.namespaceOf(id), "Peek", id,
                "peek at messages of mailbox '" + id + "'");
        Mailbox<byte[]> m = mailbox(id);
        Inspection inspection = Inspection.of(m);
        if (inspection == null || !inspection.canPeek()) {
            throw new Refusal(409, "mailbox '" + id + "' cannot be peeked: its backend "
                    + (inspection == null ? "offers no inspection" : "reads a message only by receiving it (SQS)"));
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        ArrayNode list = o.putArray("messages");
        for (Inspection.Peeked p : inspection.peek(max)) {
            ObjectNode row = list.addObject();
            row.put("id", p.id());
            row.put("state", p.state().name());
            row.put("deliveryCount", p.deliveryCount());
            row.put("enqueuedAt", p.enqueuedAt().toEpochMilli());
            row.put("size", p.body().length);
            attributes(row, p.attributes());
            body(row, p.body());
        }
        return o;
    }

    /**
     * A message's attributes, each value cut to {@link #MAX_ATTRIBUTE_PREVIEW} characters: a message's size limit
     * counts its attributes with its body, so a 1 MiB message may be nearly all attributes, and a peek that cut only
     * bodies answered 50 MB for 50 such messages.
     */
    private static void attributes(ObjectNode row, Map<String, String> values) {
        ObjectNode l = row.putObject("attributes");
        boolean cut = false;
        // at most Limits.MAX_ATTRIBUTES of them, each name at most MAX_ATTRIBUTE_NAME_LENGTH: only values are cut
        for (Map.Entry<String, String> e : values.entrySet().stream().sorted(Map.Entry.comparingByKey()).toList()) {
            String v = e.getValue();
            if (v.length() > MAX_ATTRIBUTE_PREVIEW) {
                // not between the two halves of a surrogate pair
                int end = Character.isHighSurrogate(v.charAt(MAX_ATTRIBUTE_PREVIEW - 1)) ? MAX_ATTRIBUTE_PREVIEW - 1
                        : MAX_ATTRIBUTE_PREVIEW;
                v = v.substring(0, end);
                cut = true;
            }
            l.put(e.getKey(), v);
        }
        row.put("attributesTruncated", cut);
    }

    /** Text when the shown bytes are UTF-8, else base64; cut to {@link #MAX_BODY_PREVIEW} bytes either way. */
    private static void body(ObjectNode row, byte[] body) {
        int n = Math.min(body.length, MAX_BODY_PREVIEW);
        row.put("truncated", n < body.length);
        // a cut may split a character: up to three bytes of it may be dropped from the end
        for (int end = n; end >= Math.max(0, n - (n < body.length ? 3 : 0)); end--) {
            try {
                row.put("text", StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body, 0, end))
                        .toString());
                return;
            } catch (CharacterCodingException e) {
                // shorter, or base64
            }
        }
        row.put("base64", Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(body, n)));
    }

    // ---- actions

    private ObjectNode purge(String principal, Query q) {
        String id = q.required("id");
        require(principal, Right.PURGE, CoordinationLimits.namespaceOf(id), "Purge", id, "purge mailbox '" + id + "'");
        Mailbox<byte[]> m = mailbox(id);
        long purged;
        try {
            purged = m.purge();
        } catch (RuntimeException e) {
            access.audited(principal, "console:Purge", id, "FAILED");
            throw e;
        }
        access.audited(principal, "console:Purge", id, "OK");
        LOG.info("console: {} purged {} message(s) of mailbox '{}'", principal, purged, id);
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        o.put("purged", purged);
        return o;
    }

    private ObjectNode redrive(String principal, Query q) {
        String from = q.required("from");
        int max = q.intIn("max", 100, 1, MAX_REDRIVE);
        String to = q.get("to");
        if (to == null) {
            to = destinationOf(from);
        }
        if (to.equals(from)) {
            throw new IllegalArgumentException("a redrive moves messages to another mailbox, not back into '" + from
                    + "'");
        }
        String target = from + "->" + to;
        require(principal, Right.RECEIVE, CoordinationLimits.namespaceOf(from), "Redrive", target,
                "take messages out of mailbox '" + from + "'");
        require(principal, Right.SEND, CoordinationLimits.namespaceOf(to), "Redrive", target,
                "send messages to mailbox '" + to + "'");
        Mailbox<byte[]> dlq = mailbox(from);
        Mailbox<byte[]> destination = mailbox(to);
        long deadline = System.nanoTime() + Duration.ofSeconds(REDRIVE_SECONDS).toNanos();
        int moved = 0;
        boolean ok = false;
        try {
            while (moved < max && System.nanoTime() - deadline < 0) {
                List<Message<byte[]>> got = dlq.receive(ReceiveOptions.defaults()
                        .withMaxMessages(Math.min(10, max - moved)).withVisibilityTimeout(Duration.ofMinutes(1)));
                if (got.isEmpty()) {
                    break;
                }
                moved += move(got, destination, dlq);
            }
            ok = true;
        } finally {
            access.audited(principal, "console:Redrive", target, ok ? "OK" : "FAILED");
            LOG.info("console: {} redrove {} message(s) from mailbox '{}' to '{}'{}", principal, moved, from, to,
                    ok ? "" : " before it failed");
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("from", from);
        o.put("to", to);
        o.put("moved", moved);
        return o;
    }

    /**
     * Sends each message to the destination with its body and attributes, then acknowledges in the dead-letter
     * mailbox the ones sent. A message is never lost: one not sent goes back to the dead-letter mailbox at once;
     * one sent whose acknowledgement fails comes back there after its visibility timeout (and may be moved twice).
     */
    private static int move(List<Message<byte[]>> got, Mailbox<byte[]> destination, Mailbox<byte[]> dlq) {
        List<Message<byte[]>> sent = new ArrayList<>();
        try {
            for (Message<byte[]> m : got) {
                destination.send(m.body(), SendOptions.defaults().withAttributes(m.attributes()));
                sent.add(m);
            }
        } finally {
            if (!sent.isEmpty()) {
                dlq.acknowledgeBatch(sent);
            }
            for (Message<byte[]> m : got.subList(sent.size(), got.size())) {
                try {
                    m.nack(Duration.ZERO);
                } catch (RuntimeException e) {
                    LOG.debug("redrive: message {} not handed back at once; it returns when its visibility ends",
                            m.id(), e);
                }
            }
        }
        return sent.size();
    }

    /** The mailbox whose redrive policy sends its dead letters to {@code dlq}, among the first ones listed. */
    private String destinationOf(String dlq) {
        for (String id : source.mailboxIds().stream().limit(REDRIVE_LOOKUP).toList()) {
            try {
                Optional<Mailbox<byte[]>> m = source.mailbox(id);
                Inspection i = m.map(Inspection::of).orElse(null);
                if (i != null && dlq.equals(i.inspect().deadLetterMailbox())) {
                    return id;
                }
            } catch (RuntimeException e) {
                // that one cannot say: look on
            }
        }
        throw new IllegalArgumentException("no mailbox here names '" + dlq + "' as its dead-letter mailbox: say where "
                + "its messages go (to=MAILBOX)");
    }

    // ---- answers

    /** Pages a sorted list by key: rows after {@code after}, at most {@code limit} of them, and the total. */
    private static <T> ObjectNode page(List<T> sorted, Function<T, String> key, Query q, int maxLimit,
                                       java.util.function.BiConsumer<T, ObjectNode> row) {
        int limit = q.intIn("limit", Math.min(100, maxLimit), 1, maxLimit);
        String after = q.get("after");
        ObjectNode o = JSON.createObjectNode();
        o.put("total", sorted.size());
        ArrayNode items = o.putArray("items");
        int shown = 0;
        String last = null;
        boolean more = false;
        for (T t : sorted) {
            String k = key.apply(t);
            if (after != null && k.compareTo(after) <= 0) {
                continue;
            }
            if (shown == limit) {
                more = true;
                break;
            }
            row.accept(t, items.addObject());
            shown++;
            last = k;
        }
        if (more) {
            o.put("next", last);
        }
        return o;
    }

    private static void map(ObjectNode o, String field, Map<String, String> values) {
        ObjectNode l = o.putObject(field);
        values.entrySet().stream().sorted(Map.Entry.comparingByKey()).limit(64)
                .forEach(e -> l.put(e.getKey(), e.getValue()));
    }

    private static HttpResponse json(int status, ObjectNode body) {
        try {
            return secured(HttpResponse.of(status, "application/json", JSON.writeValueAsBytes(body))
                    .withHeader("Cache-Control", "no-store"));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of JSON nodes always writes", e);
        }
    }

    /**
     * @param status  the status
     * @param message what went wrong, for a person
     * @return {@code {"error": message}}
     */
    public static HttpResponse error(int status, String message) {
        ObjectNode o = JSON.createObjectNode();
        o.put("error", message);
        return json(status, o);
    }

    /**
     * @param response an answer of the console
     * @return it with the headers every answer carries: no framing, no sniffing, no referrer, scripts and styles
     *         from the console's own files only
     */
    public static HttpResponse secured(HttpResponse response) {
        return response.withHeader("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self';"
                        + " img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none';"
                        + " form-action 'none'")
                .withHeader("X-Content-Type-Options", "nosniff").withHeader("X-Frame-Options", "DENY")
                .withHeader("Referrer-Policy", "no-referrer");
    }
}
