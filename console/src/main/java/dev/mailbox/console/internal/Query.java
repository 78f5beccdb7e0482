package dev.mailbox.console.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** A request's query string, decoded: at most {@link #MAX_PARAMETERS} parameters, the first of each name. */
final class Query {

    static final int MAX_PARAMETERS = 16;

    private final Map<String, String> values;

    private Query(Map<String, String> values) {
        this.values = values;
    }

    static Query parse(@Nullable String raw) {
        Map<String, String> values = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return new Query(values);
        }
        String[] pairs = raw.split("&", MAX_PARAMETERS + 2);
        if (pairs.length > MAX_PARAMETERS) {
            throw new IllegalArgumentException("at most " + MAX_PARAMETERS + " query parameters");
        }
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            values.putIfAbsent(name, value);
        }
        return new Query(values);
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the query string is not percent-encoded properly");
        }
    }

    /** @return the value, or null when absent or empty */
    @Nullable String get(String name) {
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    String required(String name) {
        String v = get(name);
        if (v == null) {
            throw new IllegalArgumentException("parameter '" + name + "' is required");
        }
        return v;
    }

    int intIn(String name, int fallback, int min, int max) {
        String v = get(name);
        if (v == null) {
            return fallback;
        }
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("parameter '" + name + "' must be a whole number from " + min + " to "
                    + max + ", was '" + (v.length() > 20 ? v.substring(0, 20) + "..." : v) + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("parameter '" + name + "' must be from " + min + " to " + max + ", was "
                    + n);
        }
        return n;
    }
}
