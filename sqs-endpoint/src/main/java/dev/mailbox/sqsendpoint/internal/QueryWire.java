package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
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
            "ChangeMessageVisibility", "PurgeQueue", "TagQueue", "UntagQueue", "AddPermission", "RemovePermission");
    /** How SQS names the members of each list in XML; a batch's successes are named by the action. */
    private static final Map<String, String> LIST_ITEMS = Map.of("Messages", "Message", "QueueUrls", "QueueUrl",
            "queueUrls", "QueueUrl", "Failed", "BatchResultErrorEntry", "Results", "ListMessageMoveTasksResultEntry");
    /** Lists whose JSON name is not the query name's plural ({@code ActionName.N} is {@code Actions}). */
    private static final Map<String, String> LIST_NAMES = Map.of("ActionNames", "Actions");
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
            decodeForm(utf8(request.body(), "The request body is not valid UTF-8."), flat);
        }
        String action = flat.remove("Action");
        if (action == null || action.isEmpty()) {
            throw new SqsError(ErrorCode.MISSING_ACTION, "The request must contain the parameter Action.");
        }
        flat.remove("Version");
        return new Call(action, new Params(tree(flat), false));
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
            String key = decode(eq < 0 ? pair : pair.substring(0, eq), null);
            into.put(key, decode(eq < 0 ? "" : pair.substring(eq + 1), key));
        }
    }

    /**
     * Percent-decodes one name or value and reads the bytes as UTF-8, strictly: a value that is not UTF-8 is refused
     * (naming its parameter), never stored with replacement characters in place of what was sent.
     */
    private static String decode(String encoded, @Nullable String parameter) {
        if (encoded.indexOf('%') < 0 && encoded.indexOf('+') < 0) {
            return encoded;
        }
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '+') {
                bytes.write(' ');
            } else if (c == '%') {
                int hi = i + 2 < encoded.length() ? Character.digit(encoded.charAt(i + 1), 16) : -1;
                int lo = i + 2 < encoded.length() ? Character.digit(encoded.charAt(i + 2), 16) : -1;
                if (hi < 0 || lo < 0) {
                    throw new SqsError(ErrorCode.INVALID_PARAMETER_VALUE, "The request's parameters are not validly"
                            + " percent-encoded" + (parameter == null ? "." : " (parameter " + parameter + ")."));
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                bytes.write(b, 0, b.length);
            }
        }
        return utf8(bytes.toByteArray(), parameter == null ? "A parameter name is not valid UTF-8 once"
                + " percent-decoded." : "The value of parameter " + parameter + " is not valid UTF-8 once"
                + " percent-decoded.");
    }

    private static String utf8(byte[] bytes, String refusal) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw SqsError.invalidParameter(refusal);
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
        return (ObjectNode) shape(root, "");
    }

    /** The largest index of a numbered member ({@code MessageAttribute.N}); SQS's lists are far shorter. */
    static final int MAX_INDEX = 1000;
    private static final java.util.regex.Pattern INDEX = java.util.regex.Pattern.compile("-?[0-9]+");

    private static JsonNode shape(JsonNode node, String path) {
        if (!(node instanceof ObjectNode object)) {
            return node;
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            JsonNode value = f.getValue();
            String name = path + f.getKey();
            if (!isNumbered(value, name)) {
                out.set(f.getKey(), shape(value, name + "."));
                continue;
            }
            // ordered by number; each index checked, so that no member is dropped for a number out of range
            TreeMap<Integer, JsonNode> items = new TreeMap<>();
            value.fields().forEachRemaining(i -> {
                String index = i.getKey();
                if (index.length() > 4 || Integer.parseInt(index) < 1 || Integer.parseInt(index) > MAX_INDEX) {
                    throw SqsError.invalidParameter("Parameter " + name + "." + index + " is invalid: list members"
                            + " are numbered from 1 to " + MAX_INDEX + ".");
                }
                items.put(Integer.parseInt(index), shape(i.getValue(), name + "." + index + "."));
            });
            named(out, f.getKey(), name, items);
        }
        return out;
    }

    private static void named(ObjectNode out, String key, String name, TreeMap<Integer, JsonNode> items) {
        if (key.endsWith("BatchRequestEntry")) {
            out.putArray("Entries").addAll(items.values());
            return;
        }
        JsonNode first = items.firstEntry().getValue();
        String pairKey = first.has("Name") ? "Name" : first.has("Key") ? "Key" : null;
        if (pairKey != null) {
            // Name/Value (or Key/Value) pairs make a map: every member needs both, or it would be dropped
            ObjectNode map = out.putObject(key + "s");
            for (Map.Entry<Integer, JsonNode> item : items.entrySet()) {
                JsonNode k = item.getValue().get(pairKey);
                JsonNode v = item.getValue().get("Value");
                if (k == null || !k.isValueNode() || v == null) {
                    throw SqsError.invalidParameter("Parameter " + name + "." + item.getKey() + " needs both "
                            + name + "." + item.getKey() + "." + pairKey + " and " + name + "." + item.getKey()
                            + ".Value.");
                }
                if (map.has(k.asText())) {
                    throw SqsError.invalidParameter("Parameter " + name + "." + item.getKey() + "." + pairKey + " repeats"
                            + " the " + pairKey.toLowerCase(java.util.Locale.ROOT) + " '" + k.asText() + "'.");
                }
                map.set(k.asText(), v);
            }
            return;
        }
        ArrayNode list = out.putArray(LIST_NAMES.getOrDefault(key + "s", key + "s"));
        list.addAll(items.values());
    }

    /**
     * @return whether the node's members are numbered ({@code A.1}, {@code A.2}); a node that mixes numbered and
     *         named members is refused, since one kind would be dropped
     */
    private static boolean isNumbered(JsonNode node, String name) {
        if (!node.isObject() || node.isEmpty()) {
            return false;
        }
        int numbered = 0;
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            if (INDEX.matcher(names.next()).matches()) {
                numbered++;
            }
        }
        if (numbered > 0 && numbered < node.size()) {
            throw SqsError.invalidParameter("Parameter " + name + " mixes numbered members (" + name + ".N) with"
                    + " named ones.");
        }
        return numbered > 0;
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
