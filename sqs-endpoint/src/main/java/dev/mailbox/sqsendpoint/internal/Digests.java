package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.api.AttributeValue;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The digests SQS puts in its answers and the SDKs check: MD5 of a body's UTF-8 bytes, and MD5 of message
 * attributes in SQS's encoding (attributes sorted by name; for each, the name, the data type and the value,
 * each as a 4-byte big-endian length and the bytes, with a transport byte before the value: 1 for text, 2 for
 * binary).
 */
final class Digests {

    private static final byte TEXT = 1;
    private static final byte BINARY = 2;

    private Digests() {
    }

    static String ofBody(String body) {
        return hex(md5().digest(body.getBytes(StandardCharsets.UTF_8)));
    }

    /** @return the attributes' digest, or null when there are none (SQS then sends none) */
    static @Nullable String ofAttributes(Map<String, AttributeValue> attributes) {
        if (attributes.isEmpty()) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        for (Map.Entry<String, AttributeValue> e : new TreeMap<>(attributes).entrySet()) {
            AttributeValue a = e.getValue();
            lengthAndBytes(out, e.getKey().getBytes(StandardCharsets.UTF_8));
            lengthAndBytes(out, a.dataType().getBytes(StandardCharsets.UTF_8));
            if (a.isBinary()) {
                out.write(BINARY);
                lengthAndBytes(out, Objects.requireNonNull(a.binaryValue()));
            } else {
                out.write(TEXT);
                lengthAndBytes(out, Objects.requireNonNull(a.stringValue()).getBytes(StandardCharsets.UTF_8));
            }
        }
        return hex(md5().digest(out.toByteArray()));
    }

    private static void lengthAndBytes(ByteArrayOutputStream out, byte[] bytes) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.writeBytes(bytes);
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
