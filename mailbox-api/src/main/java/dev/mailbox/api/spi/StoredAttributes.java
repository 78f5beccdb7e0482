package dev.mailbox.api.spi;

import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.SendOptions;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The one way a backend that stores attributes as text (a map of strings: in memory, in a Redis hash, in the
 * node's data plane) keeps typed and system attributes, so that every such backend reads what another wrote.
 *
 * <h2>The stored form (version 1)</h2>
 * <ul>
 *   <li>A plain string attribute (type {@code String}) is stored under its name as its value, unchanged: stores
 *       written before typed attributes existed read the same, and a reader that knows nothing of types sees
 *       plain attributes as they were sent.</li>
 *   <li>Any other typed attribute is stored under its name as {@code \u0001 1 DATATYPE \u0001 PAYLOAD}: the
 *       control character U+0001 (which no attribute value may contain, so no plain value is ever read as typed),
 *       the format version {@code 1}, the data type, U+0001 again, then the text of a {@code String} or
 *       {@code Number} type or the standard base64 (RFC 4648, padded) of a {@code Binary} type's bytes. A later
 *       format takes the next version digit; a reader meets an unknown one as a plain string of the stored text
 *       with its marks replaced by U+FFFD (nothing is dropped).</li>
 *   <li>A system attribute ({@link SendOptions#withSystemAttribute}) is stored under {@value #SYSTEM_PREFIX} and
 *       its name, as its value: no attribute name may start with {@code AWS.}, so it never collides with one.</li>
 * </ul>
 * A map with neither typed nor system entries reads as itself, without copying.
 */
public final class StoredAttributes {

    /** How the stored name of a system attribute starts: a prefix no attribute name may have. */
    public static final String SYSTEM_PREFIX = "AWS.";
    private static final char MARK = '\u0001';
    private static final char VERSION = '1';

    private StoredAttributes() {
    }

    /**
     * @param options a send's options
     * @return its attributes and system attributes in the stored form, in their order, unmodifiable
     */
    public static Map<String, String> encode(SendOptions options) {
        Map<String, AttributeValue> typed = options.typedAttributes();
        Map<String, String> system = options.systemAttributes();
        if (system.isEmpty() && typed.size() == options.attributes().size()) {
            return options.attributes(); // plain strings only: stored as they are
        }
        Map<String, String> out = new LinkedHashMap<>();
        typed.forEach((k, v) -> out.put(k, encode(v)));
        system.forEach((k, v) -> out.put(SYSTEM_PREFIX + k, v));
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param typed  attributes with their types, such as a received message's {@code typedAttributes()}
     * @param system system attributes by name
     * @return them in the stored form, unmodifiable
     */
    public static Map<String, String> encode(Map<String, AttributeValue> typed, Map<String, String> system) {
        if (typed.isEmpty() && system.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        typed.forEach((k, v) -> out.put(k, encode(v)));
        system.forEach((k, v) -> out.put(SYSTEM_PREFIX + k, v));
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param value a typed value
     * @return its stored form: the text itself for a plain string, else the marked form
     */
    public static String encode(AttributeValue value) {
        if (value.isPlainString()) {
            return value.text();
        }
        return new StringBuilder(value.dataType().length() + 16).append(MARK).append(VERSION)
                .append(value.dataType()).append(MARK).append(value.text()).toString();
    }

    /**
     * @param stored a stored value
     * @return the typed value it stands for; a value not in the marked form is a plain string of the stored text
     *         (one in a marked form this version does not know, with its marks replaced by U+FFFD)
     */
    public static AttributeValue decode(String stored) {
        AttributeValue typed = typed(stored);
        if (typed != null) {
            return typed;
        }
        if (stored.isEmpty() || stored.indexOf(MARK) >= 0) {
            // a form this version does not know (or damaged): kept as text, its marks shown as U+FFFD
            String shown = stored.replace(MARK, '\uFFFD');
            return AttributeValue.string(shown.isEmpty() ? "\uFFFD" : shown);
        }
        return AttributeValue.string(stored);
    }

    private static @Nullable AttributeValue typed(String stored) {
        if (stored.length() < 4 || stored.charAt(0) != MARK || stored.charAt(1) != VERSION) {
            return null;
        }
        int close = stored.indexOf(MARK, 2);
        if (close < 0) {
            return null;
        }
        String type = stored.substring(2, close);
        String payload = stored.substring(close + 1);
        try {
            if (type.startsWith("Binary")) {
                return AttributeValue.ofBinary(type, Base64.getDecoder().decode(payload));
            }
            return AttributeValue.of(type, payload);
        } catch (IllegalArgumentException corrupt) {
            return null;
        }
    }

    /** @return whether a stored map holds only plain string attributes (then it is its own plain view) */
    private static boolean isPlain(Map<String, String> stored) {
        for (Map.Entry<String, String> e : stored.entrySet()) {
            if (isSpecial(e.getKey(), e.getValue())) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSpecial(String key, String value) {
        return key.startsWith(SYSTEM_PREFIX) || (!value.isEmpty() && value.charAt(0) == MARK);
    }

    /**
     * @param stored attributes in the stored form
     * @return the plain string attributes among them ({@link dev.mailbox.api.Message#attributes()}): the map
     *         itself when it holds nothing else
     */
    public static Map<String, String> plain(Map<String, String> stored) {
        if (isPlain(stored)) {
            return stored;
        }
        Map<String, String> out = new LinkedHashMap<>();
        stored.forEach((k, v) -> {
            if (!k.startsWith(SYSTEM_PREFIX)) {
                AttributeValue a = decode(v);
                if (a.isPlainString()) {
                    out.put(k, a.text());
                }
            }
        });
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param stored attributes in the stored form
     * @return every attribute among them with its type ({@link dev.mailbox.api.Message#typedAttributes()})
     */
    public static Map<String, AttributeValue> typed(Map<String, String> stored) {
        if (stored.isEmpty()) {
            return Map.of();
        }
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        stored.forEach((k, v) -> {
            if (!k.startsWith(SYSTEM_PREFIX)) {
                out.put(k, decode(v));
            }
        });
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param stored attributes in the stored form
     * @return the system attributes among them, by name ({@link dev.mailbox.api.Message#systemAttributes()})
     */
    public static Map<String, String> system(Map<String, String> stored) {
        Map<String, String> out = null;
        for (Map.Entry<String, String> e : stored.entrySet()) {
            if (e.getKey().startsWith(SYSTEM_PREFIX)) {
                if (out == null) {
                    out = new LinkedHashMap<>();
                }
                out.put(e.getKey().substring(SYSTEM_PREFIX.length()), e.getValue());
            }
        }
        return out == null ? Map.of() : Collections.unmodifiableMap(out);
    }

    /**
     * Adds stored attributes to a send's options: what a node does with the attributes a client sent in the
     * stored form.
     *
     * @param options the options so far
     * @param stored  attributes in the stored form
     * @return the options with every attribute and system attribute of {@code stored}
     * @throws IllegalArgumentException if one breaks the rules of {@link SendOptions}
     */
    public static SendOptions addTo(SendOptions options, Map<String, String> stored) {
        if (isPlain(stored)) {
            return options.withAttributes(stored);
        }
        SendOptions out = options.withTypedAttributes(typed(stored));
        for (Map.Entry<String, String> e : system(stored).entrySet()) {
            out = out.withSystemAttribute(e.getKey(), e.getValue());
        }
        return out;
    }
}
