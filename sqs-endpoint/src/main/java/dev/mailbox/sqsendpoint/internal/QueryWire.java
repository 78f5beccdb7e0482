package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The query protocol: {@code Action=...} and flattened parameters ({@code Attribute.1.Name},
 * {@code SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType}) in the query string or a
 * form-encoded body; XML answers in SQS's namespace.
 *
 * <p>Parameters are turned into the JSON protocol's shape so that one implementation serves both: numbered
 * members become lists, a list of {@code Name}/{@code Value} or {@code Key}/{@code Value} pairs becomes a map
 * named in the plural ({@code Attribute.N} to {@code Attributes}, {@code Tag.N} to {@code Tags}), other lists take
 * the plural too ({@code AttributeName.N} to {@code AttributeNames}), and batch entries become {@code Entries}.
 * Answers go the other way, by the names SQS's XML uses for each member.
 */
final class QueryWire implements Wire {

    static final String NAMESPACE = "http://queue.amazonaws.com/doc/2012-11-05/";
    private static final String CONTENT_TYPE = "text/xml";
    /** Actions whose answer has no result element. */
    private static final Set<String> NO_RESULT = Set.of("DeleteQueue", "SetQueueAttributes", "DeleteMessage",
            "ChangeMessageVisibility", "PurgeQueue", "TagQueue", "UntagQueue");
    /** How SQS names the members of each list in XML; a batch's successes are named by the action. */
    private static final Map<String, String> LIST_ITEMS = Map.of("Messages", "Message", "QueueUrls", "QueueUrl",
            "queueUrls", "QueueUrl", "Failed", "BatchResultErrorEntry");
    /** How SQS writes each map in XML: entry element, key element, value element. */
    private static final Map<String, String[]> MAPS = Map.of(
            "Attributes", new String[] {"Attribute", "Name", "Value"},
            "MessageAttributes", new String[] {"MessageAttribute", "Name", "Value"},
            "Tags", new String[] {"Tag", "Key", "Value"});

    @Override
    public Call parse(RawRequest request) {
        Map<String, String> flat = new TreeMap<>();
        decodeForm(request.rawQuery(), flat);
        String contentType = request.header("content-type");
        if (request.method().equals("POST") && (contentType == null
                || contentType.toLowerCase(java.util.Locale.ROOT).startsWith("application/x-www-form-urlencoded"))) {
            decodeForm(new String(request.body(), StandardCharsets.UTF_8), flat);
        }
        String action = flat.remove("Action");
        if (action == null || action.isEmpty()) {
            throw new SqsError(ErrorCode.MISSING_ACTION, "The request must contain the parameter Action.");
        }
        flat.remove("Version");
        return new Call(action, new Params(tree(flat)));
    }

    @Override
    public Answer success(String action, ObjectNode result, String requestId) {
        StringBuilder xml = new StringBuilder(256).append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<")
                .append(action).append("Response xmlns=\"").append(NAMESPACE).append("\">");
        if (!NO_RESULT.contains(action)) {
            xml.append('<').append(action).append("Result>");
            fields(xml, result, action);
            xml.append("</").append(action).append("Result>");
        }
        xml.append("<ResponseMetadata><RequestId>").append(requestId).append("</RequestId></ResponseMetadata></")
                .append(action).append("Response>");
        return answer(200, xml, requestId);
    }

    @Override
    public Answer error(SqsError error, String requestId) {
        StringBuilder xml = new StringBuilder(256).append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ErrorResponse xmlns=\"")
                .append(NAMESPACE).append("\"><Error><Type>").append(error.code.faultType()).append("</Type><Code>")
                .append(error.code.queryCode).append("</Code><Message>");
        escape(xml, String.valueOf(error.getMessage()));
        xml.append("</Message><Detail/></Error><RequestId>").append(requestId).append("</RequestId></ErrorResponse>");
        return answer(error.code.status, xml, requestId);
    }

    private static Answer answer(int status, StringBuilder xml, String requestId) {
        return new Answer(status, CONTENT_TYPE, xml.toString().getBytes(StandardCharsets.UTF_8),
                Map.of("x-amzn-RequestId", requestId));
    }

    // ---- parameters in

    private static void decodeForm(@Nullable String form, Map<String, String> into) {
        if (form == null || form.isEmpty()) {
            return;
        }
        for (String pair : form.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            try {
                into.put(URLDecoder.decode(key, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw new SqsError(ErrorCode.INVALID_PARAMETER_VALUE, "The request's parameters are not validly"
                        + " percent-encoded.");
            }
        }
    }

    /**
     * The most dot-separated parts a parameter name may have. SQS's deepest is 7
     * ({@code SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1}); {@link #shape} recurses
     * once per part, so a name of thousands of parts would overflow the request thread's stack.
     */
    static final int MAX_NAME_PARTS = 16;

    /** Nests {@code A.1.B=v} into {@code {"A": {"1": {"B": "v"}}}}, then turns numbered members into lists. */
    static ObjectNode tree(Map<String, String> flat) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        for (Map.Entry<String, String> e : flat.entrySet()) {
            String[] path = e.getKey().split("\\.", MAX_NAME_PARTS + 1);
            if (path.length > MAX_NAME_PARTS) {
                throw SqsError.invalidParameter("The request has a parameter whose name has more than "
                        + MAX_NAME_PARTS + " parts.");
            }
            ObjectNode at = root;
            for (int i = 0; i < path.length - 1; i++) {
                JsonNode next = at.get(path[i]);
                if (!(next instanceof ObjectNode)) {
                    next = at.putObject(path[i]);
                }
                at = (ObjectNode) next;
            }
            at.put(path[path.length - 1], e.getValue());
        }
        return (ObjectNode) shape(root);
    }

    private static JsonNode shape(JsonNode node) {
        if (!(node instanceof ObjectNode object)) {
            return node;
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            JsonNode value = f.getValue();
            if (!isNumbered(value)) {
                out.set(f.getKey(), shape(value));
                continue;
            }
            // ordered by number: the keys are digits, so sort them as numbers
            TreeMap<Integer, JsonNode> items = new TreeMap<>();
            value.fields().forEachRemaining(i -> items.put(Integer.parseInt(i.getKey()), shape(i.getValue())));
            named(out, f.getKey(), items.values().stream().toList());
        }
        return out;
    }

    private static void named(ObjectNode out, String key, List<JsonNode> items) {
        if (key.endsWith("BatchRequestEntry")) {
            out.putArray("Entries").addAll(items);
            return;
        }
        JsonNode first = items.get(0);
        String pairKey = first.has("Name") ? "Name" : first.has("Key") ? "Key" : null;
        if (pairKey != null && first.has("Value")) {
            ObjectNode map = out.putObject(key + "s");
            for (JsonNode item : items) {
                JsonNode k = item.get(pairKey);
                if (k != null && item.get("Value") != null) {
                    map.set(k.asText(), item.get("Value"));
                }
            }
            return;
        }
        ArrayNode list = out.putArray(key + "s");
        list.addAll(items);
    }

    private static boolean isNumbered(JsonNode node) {
        if (!node.isObject() || node.isEmpty()) {
            return false;
        }
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            String n = names.next();
            if (n.isEmpty() || n.length() > 6 || !n.chars().allMatch(Character::isDigit)) {
                return false;
            }
        }
        return true;
    }

    // ---- results out

    private static void fields(StringBuilder xml, JsonNode object, String action) {
        Iterator<Map.Entry<String, JsonNode>> it = object.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            String name = f.getKey();
            JsonNode value = f.getValue();
            String[] map = MAPS.get(name);
            if (map != null && value.isObject()) {
                value.fields().forEachRemaining(e -> {
                    xml.append('<').append(map[0]).append("><").append(map[1]).append('>');
                    escape(xml, e.getKey());
                    xml.append("</").append(map[1]).append('>');
                    element(xml, map[2], e.getValue(), action);
                    xml.append("</").append(map[0]).append('>');
                });
            } else if (value.isArray()) {
                String item = name.equals("Successful") ? action + "ResultEntry" : LIST_ITEMS.getOrDefault(name, name);
                value.forEach(v -> element(xml, item, v, action));
            } else {
                element(xml, name, value, action);
            }
        }
    }

    private static void element(StringBuilder xml, String name, JsonNode value, String action) {
        xml.append('<').append(name).append('>');
        if (value.isObject()) {
            fields(xml, value, action);
        } else {
            escape(xml, value.asText());
        }
        xml.append("</").append(name).append('>');
    }

    /**
     * Escapes text for XML content. A carriage return is written as a character reference: an XML parser turns
     * a literal one into a line feed, which would change a message body and its MD5.
     */
    static void escape(StringBuilder xml, String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> xml.append("&amp;");
                case '<' -> xml.append("&lt;");
                case '>' -> xml.append("&gt;");
                case '"' -> xml.append("&quot;");
                case '\r' -> xml.append("&#xD;");
                default -> xml.append(c);
            }
        }
    }
}
