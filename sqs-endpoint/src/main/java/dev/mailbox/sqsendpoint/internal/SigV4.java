package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.sqsendpoint.AccessKey;
import dev.mailbox.sqsendpoint.AccessKeyStore;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * Verifies AWS Signature Version 4 ({@code Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
 * Signature=...}) over a request exactly as it arrived: the method, the path (encoded once more, as SigV4 does
 * for every service but S3), the query string, the signed headers, and the SHA-256 of the body actually
 * received, so a request altered on the way (body, signed header, path or query) no longer matches. The time
 * in {@code X-Amz-Date} (or {@code Date}) must be within 15 minutes of this clock. Signatures are compared in
 * constant time. Nothing here logs, and no message it writes holds a secret or a signature.
 *
 * <p>Like SQS, it keeps no record of past requests: a request replayed unchanged within its 15 minutes is
 * accepted (SigV4 has no nonce; the SDKs send identical requests within a second legitimately).
 */
final class SigV4 {

    static final Duration MAX_SKEW = Duration.ofMinutes(15);
    private static final String ALGORITHM = "AWS4-HMAC-SHA256";
    private static final String SERVICE = "sqs";
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);
    private static final String MISMATCH = "The request signature we calculated does not match the signature you"
            + " provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for"
            + " details.";

    private final AccessKeyStore keys;
    private final Clock clock;
    /**
     * Signing keys by key id, secret, date and region: deriving one takes four HMACs, and a key signs every request
     * of its day and region (the SDKs cache them likewise). Bounded: cleared when it grows past what a few hundred
     * keys in a few regions over two days make.
     */
    private final java.util.concurrent.ConcurrentHashMap<String, byte[]> signingKeys =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final int MAX_SIGNING_KEYS = 4096;

    SigV4(AccessKeyStore keys, Clock clock) {
        this.keys = keys;
        this.clock = clock;
    }

    /** What the headers of a request say about its signature, checked before its body is read. */
    record Checked(AccessKey key, String amzDate, String date, String region, List<String> signedHeaders,
                   String signature) {
    }

    /**
     * Checks everything of a request's signature that its headers hold, so that a request that cannot be
     * authentic is refused before its body is read: an {@code Authorization} header of the right shape, a known
     * access key, a credential scope for SQS whose date is the request's, a time within 15 minutes of this clock,
     * and every signed header present. Only the signature itself, which covers the body, is left.
     *
     * @param head the request; its body is not looked at
     * @return what {@link #verify(Checked, RawRequest)} needs
     * @throws SqsError refusing the request as SQS does
     */
    Checked check(RawRequest head) {
        String authorization = head.header("authorization");
        if (authorization == null) {
            if (head.rawQuery() != null && head.rawQuery().contains("X-Amz-Signature=")) {
                throw new SqsError(ErrorCode.MISSING_AUTHENTICATION_TOKEN, "Presigned URLs (query-string"
                        + " authentication) are not accepted by this endpoint; sign requests with an Authorization"
                        + " header.");
            }
            throw new SqsError(ErrorCode.MISSING_AUTHENTICATION_TOKEN, "Request is missing Authentication Token");
        }
        Authorization auth = Authorization.parse(authorization);
        AccessKey key = keys.find(auth.accessKeyId()).orElseThrow(() -> new SqsError(ErrorCode.INVALID_CLIENT_TOKEN_ID,
                "The security token included in the request is invalid."));
        String amzDate = amzDate(head);
        if (!amzDate.startsWith(auth.date())) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "Date in Credential scope does not match YYYYMMDD"
                    + " from ISO-8601 version of date from HTTP: '" + auth.date() + "' != '" + amzDate.substring(0, 8)
                    + "', from '" + amzDate + "'.");
        }
        checkTime(amzDate);
        // each signed header goes into the canonical request: named twice, a header would be hashed twice, and a
        // 16 KiB request naming a 5 KiB header a thousand times would cost megabytes before its signature fails
        for (int i = 1; i < auth.signedHeaders().size(); i++) {
            if (auth.signedHeaders().get(i - 1).compareTo(auth.signedHeaders().get(i)) >= 0) {
                throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "SignedHeaders must name each header once, in"
                        + " alphabetical order.");
            }
        }
        if (!auth.signedHeaders().contains("host")) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "'Host' must be a signed header.");
        }
        for (String h : auth.signedHeaders()) {
            if (head.header(h) == null) {
                throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "The request names '" + h + "' as a signed"
                        + " header but does not have it.");
            }
        }
        return new Checked(key, amzDate, auth.date(), auth.region(), auth.signedHeaders(), auth.signature());
    }

    /**
     * @param request the request as received
     * @return the key the request was signed with
     * @throws SqsError refusing the request as SQS does
     */
    AccessKey verify(RawRequest request) {
        return verify(check(request), request);
    }

    /**
     * @param checked what {@link #check} found in the request's headers
     * @param request the request with its body
     * @return the key the request was signed with
     * @throws SqsError SignatureDoesNotMatch unless the signature covers exactly this request
     */
    AccessKey verify(Checked checked, RawRequest request) {
        String canonical = canonicalRequest(request, checked.signedHeaders());
        String scope = checked.date() + "/" + checked.region() + "/" + SERVICE + "/aws4_request";
        String stringToSign = ALGORITHM + "\n" + checked.amzDate() + "\n" + scope + "\n" + hex(sha256(utf8(canonical)));
        byte[] signingKey = signingKey(checked.key(), checked.date(), checked.region());
        byte[] expected = utf8(hex(hmac(signingKey, stringToSign)));
        if (!MessageDigest.isEqual(expected, utf8(checked.signature()))) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, MISMATCH);
        }
        return checked.key();
    }

    private static String amzDate(RawRequest request) {
        String amz = request.header("x-amz-date");
        if (amz != null) {
            try {
                AMZ_DATE.parse(amz);
                return amz;
            } catch (DateTimeParseException e) {
                throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "X-Amz-Date must be in the ISO-8601 basic format"
                        + " yyyyMMdd'T'HHmmss'Z'.");
            }
        }
        String date = request.header("date");
        if (date != null) {
            try {
                return AMZ_DATE.format(ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME));
            } catch (DateTimeParseException e) {
                throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "The Date header is not an RFC 1123 date.");
            }
        }
        throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "Authorization header requires existence of either a"
                + " 'X-Amz-Date' or a 'Date' header.");
    }

    private void checkTime(String amzDate) {
        Instant signed = Instant.from(AMZ_DATE.parse(amzDate));
        Instant now = clock.instant();
        String nowText = AMZ_DATE.format(now);
        if (signed.isBefore(now.minus(MAX_SKEW))) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "Signature expired: " + amzDate + " is now earlier"
                    + " than " + AMZ_DATE.format(now.minus(MAX_SKEW)) + " (" + nowText + " - 15 min.)");
        }
        if (signed.isAfter(now.plus(MAX_SKEW))) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "Signature not yet current: " + amzDate
                    + " is still later than " + AMZ_DATE.format(now.plus(MAX_SKEW)) + " (" + nowText + " + 15 min.)");
        }
    }

    static String canonicalRequest(RawRequest request, List<String> signedHeaders) {
        StringBuilder c = new StringBuilder(512);
        c.append(request.method()).append('\n');
        c.append(canonicalPath(request.rawPath())).append('\n');
        c.append(canonicalQuery(request.rawQuery())).append('\n');
        for (String h : signedHeaders) {
            String value = request.header(h);
            if (value == null) {
                throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "The request names '" + h + "' as a signed"
                        + " header but does not have it.");
            }
            c.append(h).append(':').append(value.strip().replaceAll("\\s+", " ")).append('\n');
        }
        c.append('\n').append(String.join(";", signedHeaders)).append('\n');
        c.append(hex(sha256(request.body())));
        return c.toString();
    }

    private byte[] signingKey(AccessKey key, String date, String region) {
        // the secret is part of the entry's name, so a key whose secret changes never finds the old one's
        String name = key.accessKeyId() + "\n" + key.secretKey() + "\n" + date + "\n" + region;
        byte[] cached = signingKeys.get(name);
        if (cached != null) {
            return cached;
        }
        byte[] derived = hmac(hmac(hmac(hmac(utf8("AWS4" + key.secretKey()), date), region), SERVICE), "aws4_request");
        if (signingKeys.size() >= MAX_SIGNING_KEYS) {
            signingKeys.clear();
        }
        signingKeys.put(name, derived);
        return derived;
    }

    /** The path with dot segments removed, each segment encoded (again: it arrived encoded once). */
    private static String canonicalPath(String rawPath) {
        if (rawPath.isEmpty()) {
            return "/";
        }
        Deque<String> segments = new ArrayDeque<>();
        String[] parts = rawPath.split("/", -1);
        for (int i = 1; i < parts.length; i++) {
            String s = parts[i];
            if (s.equals(".")) {
                continue;
            }
            if (s.equals("..")) {
                segments.pollLast();
                continue;
            }
            segments.addLast(s);
        }
        StringBuilder out = new StringBuilder();
        for (String s : segments) {
            out.append('/').append(encode(s));
        }
        return out.length() == 0 ? "/" : out.toString();
    }

    private static String canonicalQuery(@Nullable String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return "";
        }
        List<String[]> pairs = new ArrayList<>();
        for (String p : rawQuery.split("&")) {
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String k = decode(eq < 0 ? p : p.substring(0, eq));
            String v = eq < 0 ? "" : decode(p.substring(eq + 1));
            pairs.add(new String[] {encode(k), encode(v)});
        }
        pairs.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
        StringBuilder out = new StringBuilder();
        for (String[] p : pairs) {
            if (out.length() > 0) {
                out.append('&');
            }
            out.append(p[0]).append('=').append(p[1]);
        }
        return out.toString();
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, MISMATCH);
        }
    }

    /** RFC 3986 percent-encoding of everything but the unreserved characters, as SigV4 asks. */
    private static String encode(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (byte b : utf8(s)) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /** The parts of an {@code Authorization} header. */
    private record Authorization(String accessKeyId, String date, String region, List<String> signedHeaders,
                                 String signature) {

        static Authorization parse(String header) {
            if (!header.startsWith(ALGORITHM + " ")) {
                throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "Unsupported authorization: only " + ALGORITHM
                        + " (Signature Version 4) is accepted.");
            }
            Map<String, String> parts = new HashMap<>();
            for (String part : header.substring(ALGORITHM.length() + 1).split(",")) {
                int eq = part.indexOf('=');
                if (eq > 0) {
                    parts.put(part.substring(0, eq).strip(), part.substring(eq + 1).strip());
                }
            }
            for (String required : List.of("Credential", "SignedHeaders", "Signature")) {
                if (!parts.containsKey(required)) {
                    throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "Authorization header requires '" + required
                            + "' parameter.");
                }
            }
            String[] credential = parts.get("Credential").split("/", -1);
            if (credential.length != 5 || !credential[4].equals("aws4_request") || credential[1].length() != 8) {
                throw new SqsError(ErrorCode.INCOMPLETE_SIGNATURE, "Credential must have the form"
                        + " ACCESS_KEY_ID/YYYYMMDD/REGION/sqs/aws4_request.");
            }
            if (!credential[3].equals(SERVICE)) {
                throw new SqsError(ErrorCode.SIGNATURE_DOES_NOT_MATCH, "Credential should be scoped to correct"
                        + " service: '" + SERVICE + "'.");
            }
            List<String> signed = List.of(parts.get("SignedHeaders").toLowerCase(java.util.Locale.ROOT).split(";"));
            return new Authorization(credential[0], credential[1], credential[2], signed, parts.get("Signature"));
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(utf8(data));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("every JVM has HmacSHA256", e);
        }
    }
}
