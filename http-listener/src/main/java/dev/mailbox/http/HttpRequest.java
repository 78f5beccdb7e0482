package dev.mailbox.http;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request as it arrived: method, path and query as sent (still percent-encoded), headers by lower-case name,
 * the client's address and, once read, the body. What {@link HttpHandler#admit} sees has no body yet
 * ({@link #body()} is empty); what {@link HttpHandler#handle} sees has all of it.
 */
public final class HttpRequest {

    private final String method;
    private final String rawPath;
    private final @Nullable String rawQuery;
    private final Map<String, List<String>> headers;
    private final InetSocketAddress remote;
    private final boolean secure;
    private final long contentLength;
    private final byte[] body;

    /**
     * @param method        the method, upper case
     * @param rawPath       the path as sent ({@code /} at least)
     * @param rawQuery      the query string as sent, or null
     * @param headers       the headers by lower-case name, each with its values in order
     * @param remote        the client's address
     * @param secure        whether it came over TLS
     * @param contentLength the declared body length, -1 when not declared (chunked), 0 without a body
     * @param body          the body, empty until read
     */
    public HttpRequest(String method, String rawPath, @Nullable String rawQuery, Map<String, List<String>> headers,
                       InetSocketAddress remote, boolean secure, long contentLength, byte[] body) {
        this.method = Objects.requireNonNull(method, "method");
        this.rawPath = Objects.requireNonNull(rawPath, "rawPath");
        this.rawQuery = rawQuery;
        this.headers = Map.copyOf(headers);
        this.remote = Objects.requireNonNull(remote, "remote");
        this.secure = secure;
        this.contentLength = contentLength;
        this.body = Objects.requireNonNull(body, "body");
    }

    /** @return the same request with its body */
    public HttpRequest withBody(byte[] body) {
        return new HttpRequest(method, rawPath, rawQuery, headers, remote, secure, contentLength, body);
    }

    /** @return the method, upper case ({@code GET}, {@code POST}) */
    public String method() {
        return method;
    }

    /** @return the path as sent, still percent-encoded */
    public String rawPath() {
        return rawPath;
    }

    /** @return the query string as sent, without the {@code ?}, or null without one */
    public @Nullable String rawQuery() {
        return rawQuery;
    }

    /** @return every header by lower-case name, each with its values in the order sent; unmodifiable */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /** @return the header's values joined by commas, or null if it was not sent */
    public @Nullable String header(String name) {
        List<String> values = headers.get(name.toLowerCase(java.util.Locale.ROOT));
        return values == null || values.isEmpty() ? null : String.join(",", values);
    }

    /** @return the client's address (of the connection: no forwarding header is believed) */
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    /**
     * @return the client as limits per client count it ({@link #clientOf})
     */
    public InetAddress client() {
        return clientOf(remote.getAddress() != null ? remote.getAddress() : new InetSocketAddress(0).getAddress());
    }

    /**
     * The client an address belongs to, for limits per client (connections, memory, request rates): an IPv4 address
     * is one client; an IPv6 address is counted with the rest of its /64, since one host is commonly given a whole
     * /64 and could otherwise open each connection from an address of its own.
     *
     * @param address a connection's remote address
     * @return the address itself (IPv4), or its /64 prefix with the rest zero (IPv6)
     */
    public static InetAddress clientOf(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return address;
        }
        byte[] prefix = Arrays.copyOf(address.getAddress(), 16);
        Arrays.fill(prefix, 8, 16, (byte) 0);
        try {
            return InetAddress.getByAddress(prefix);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("16 bytes are an IPv6 address", e);
        }
    }

    /** @return whether the request came over TLS */
    public boolean secure() {
        return secure;
    }

    /** @return the declared length of the body, -1 when not declared (chunked), 0 without a body */
    public long contentLength() {
        return contentLength;
    }

    /** @return whether the request has (or may have) a body */
    public boolean hasBody() {
        return contentLength != 0;
    }

    /** @return the body; empty before it is read (in {@link HttpHandler#admit}). Not copied: do not change it */
    public byte[] body() {
        return body;
    }

    @Override
    public String toString() {
        return method + " " + rawPath + " from " + remote;
    }
}
