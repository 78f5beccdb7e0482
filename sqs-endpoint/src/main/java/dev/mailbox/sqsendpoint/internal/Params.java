package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A request's parameters in the JSON protocol's shape, whichever protocol they came in (the query protocol's
 * flattened names are turned into this shape by {@link QueryWire}), with typed reads that refuse a bad value as
 * SQS does. Numbers may be JSON numbers or text (the query protocol has only text).
 */
final class Params {

    private static final Params EMPTY = new Params(JsonNodeFactory.instance.objectNode());

    private final JsonNode node;

    Params(JsonNode node) {
        this.node = node;
    }

    /** @return the parameter as text, or null if absent (JSON null counts as absent) */
    @Nullable String text(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isValueNode()) {
            throw SqsError.invalidParameter("Value for parameter " + name + " is invalid. Reason: must be a value.");
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
        String v = text(name);
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
            throw SqsError.invalidParameter("Value for parameter " + name + " is invalid. Reason: must be a list.");
        }
        v.forEach(e -> out.add(e.asText()));
        return out;
    }

    /** @return the parameter as a map of texts, in the request's order, empty if absent */
    Map<String, String> stringMap(String name) {
        Map<String, String> out = new LinkedHashMap<>();
        objects(name, true).forEach((k, v) -> out.put(k, v.node.asText()));
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
            throw SqsError.invalidParameter("Value for parameter " + name + " is invalid. Reason: must be a list.");
        }
        v.forEach(e -> out.add(e.isObject() ? new Params(e) : EMPTY));
        return out;
    }

    private Map<String, Params> objects(String name, boolean values) {
        JsonNode v = node.get(name);
        Map<String, Params> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw SqsError.invalidParameter("Value for parameter " + name + " is invalid. Reason: must be a map.");
        }
        v.fields().forEachRemaining(e -> {
            if (values != e.getValue().isValueNode()) {
                throw SqsError.invalidParameter("Value for parameter " + name + "." + e.getKey()
                        + " is invalid. Reason: must be a " + (values ? "value" : "structure") + ".");
            }
            out.put(e.getKey(), new Params(e.getValue()));
        });
        return out;
    }
}
