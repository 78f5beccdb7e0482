package dev.mailbox.http;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * An answer: status, headers, body, and whether the connection closes after it. Immutable; each {@code with}
 * method returns a copy. {@code Content-Length} and {@code Connection} are written by the listener.
 */
public final class HttpResponse {

    private final int status;
    private final Map<String, String> headers;
    private final byte[] body;
    private final boolean close;

    private HttpResponse(int status, Map<String, String> headers, byte[] body, boolean close) {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("an HTTP status is 100 to 599, was " + status);
        }
        this.status = status;
        this.headers = Collections.unmodifiableMap(headers);
        this.body = body;
        this.close = close;
    }

    /**
     * @param status      the status code
     * @param contentType the body's type
     * @param body        the body (not copied: do not change it afterwards)
     * @return the response
     */
    public static HttpResponse of(int status, String contentType, byte[] body) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", Objects.requireNonNull(contentType, "contentType"));
        return new HttpResponse(status, h, Objects.requireNonNull(body, "body"), false);
    }

    /** @return a plain-text response ({@code text/plain; charset=utf-8}) */
    public static HttpResponse text(int status, String text) {
        return of(status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    /** @return a copy with the header set (replacing one of the same name) */
    public HttpResponse withHeader(String name, String value) {
        Map<String, String> h = new LinkedHashMap<>(headers);
        h.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return new HttpResponse(status, h, body, close);
    }

    /** @return a copy after which the connection is closed ({@code Connection: close}) */
    public HttpResponse closingConnection() {
        return new HttpResponse(status, new LinkedHashMap<>(headers), body, true);
    }

    /** @return the status code */
    public int status() {
        return status;
    }

    /** @return the headers to send, in order; unmodifiable */
    public Map<String, String> headers() {
        return headers;
    }

    /** @return the body (not copied) */
    public byte[] body() {
        return body;
    }

    /** @return whether the connection is closed after this response */
    public boolean closesConnection() {
        return close;
    }

    @Override
    public String toString() {
        return "HttpResponse[" + status + ", " + body.length + " bytes" + (close ? ", close" : "") + "]";
    }
}
