package dev.mailbox.sqsendpoint.internal;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An HTTP request as it arrived, before anything is interpreted: what SigV4 signs and what the protocols parse.
 *
 * @param method   the HTTP method
 * @param rawPath  the path as sent (still percent-encoded)
 * @param rawQuery the query string as sent, or null
 * @param headers  the headers by lower-case name
 * @param body     the body
 */
record RawRequest(String method, String rawPath, @Nullable String rawQuery, Map<String, List<String>> headers,
                  byte[] body) {

    /** @return the header's values joined by commas (as SigV4 canonicalizes them), or null if absent */
    @Nullable String header(String lowerCaseName) {
        List<String> values = headers.get(lowerCaseName);
        return values == null || values.isEmpty() ? null : String.join(",", values);
    }
}
