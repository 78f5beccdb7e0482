package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A request's parameters in the JSON protocol's shape, whichever protocol they came in (the query protocol's
 * flattened names are turned into this shape by {@link QueryWire}), with typed reads that refuse a bad value as
 * SQS does. Numbers may be JSON numbers or text (the query protocol has only text); from the JSON protocol, a
 * text parameter must be a JSON string, and a value of the wrong JSON type is a SerializationException, as SQS's
 * JSON front end answers it.
 */
final class Params {

    private final JsonNode node;
    private final boolean json;

    /**
     * @param node the parameters
     * @param json whether they came as JSON (typed) rather than as the query protocol's text
     */
    Params(JsonNode node, boolean json) {
        this.node = node;
        this.json = json;
    }

    private SqsError wrongType(String name, String expected) {
        String message = "Value for parameter " + name + " is invalid. Reason: must be " + expected + ".";
        return json ? new SqsError(ErrorCode.SERIALIZATION, message) : SqsError.invalidParameter(message);
    }

    /** @return the parameter as text, or null if absent (JSON null counts as absent) */
    @Nullable String text(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isValueNode() || (json && !v.isTextual())) {
            throw wrongType(name, "a string");
        }
        return v.asText();
    }

    /** @return the parameter as the text of a number (a JSON number or string), or null if absent */
    private @Nullable String number(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isValueNode() || (json && !v.isTextual() && !v.isIntegralNumber())) {
            throw wrongType(name, "an integer");
        }
        return v.asText();
    }

    /** @return the parameter as text; MissingParameter if it is absent */
    String required(String name) {
        String v = text(name);
        if (v == null) {
            throw SqsError.missing(name);
        }
        return v;
    }

    /**
     * @return the parameter as an integer in {@code [min, max]}, or null if absent
     * @throws SqsError InvalidParameterValue, saying {@code reason}, when it is not such an integer
     */
    @Nullable Integer integer(String name, long min, long max, String reason) {
        String v = number(name);
        if (v == null) {
            return null;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            n = Long.MIN_VALUE;
        }
        if (n < min || n > max) {
            throw SqsError.invalidParameter("Value " + v + " for parameter " + name + " is invalid. Reason: "
                    + reason + ".");
        }
        return (int) n;
    }

    /** @return the parameter as a list of texts, empty if absent */
    List<String> strings(String name) {
        JsonNode v = node.get(name);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw wrongType(name, "a list");
        }
        for (JsonNode e : v) {
            if (!e.isValueNode() || (json && !e.isTextual())) {
                throw wrongType(name, "a list of strings");
            }
            out.add(e.asText());
        }
        return out;
    }

    /** @return the parameter as a map of texts, in the request's order, empty if absent */
    Map<String, String> stringMap(String name) {
        Map<String, String> out = new LinkedHashMap<>();
        objects(name, true).forEach((k, v) -> {
            if (json && !v.node.isTextual()) {
                throw wrongType(name + "." + k, "a string");
            }
            out.put(k, v.node.asText());
        });
        return out;
    }

    /** @return the parameter as a map of structures, in the request's order, empty if absent */
    Map<String, Params> structMap(String name) {
        return objects(name, false);
    }

    /** @return the parameter as a list of structures (batch entries), empty if absent */
    List<Params> structs(String name) {
        JsonNode v = node.get(name);
        List<Params> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw wrongType(name, "a list");
        }
        for (JsonNode e : v) {
            if (!e.isObject()) {
                throw wrongType(name, "a list of structures");
            }
            out.add(new Params(e, json));
        }
        return out;
    }

    private Map<String, Params> objects(String name, boolean values) {
        JsonNode v = node.get(name);
        Map<String, Params> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw wrongType(name, "a map");
        }
        v.fields().forEachRemaining(e -> {
            if (values != e.getValue().isValueNode()) {
                throw wrongType(name + "." + e.getKey(), values ? "a value" : "a structure");
            }
            out.put(e.getKey(), new Params(e.getValue(), json));
        });
        return out;
    }
}
