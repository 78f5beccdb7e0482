package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.api.Limits;
import dev.mailbox.api.SendOptions;
import dev.mailbox.sqsendpoint.SqsMessageAttribute;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One message of a SendMessage or SendMessageBatch, checked as SQS checks it and put in the form the mailbox
 * stores: the body's bytes and the attributes in {@link SqsMessageAttribute}'s stored form.
 *
 * @param bytes                 what the mailbox stores as the body
 * @param options               the delay and stored attributes
 * @param md5OfBody             the digest of the body as sent
 * @param md5OfAttributes       the digest of the attributes as sent, or null without attributes
 * @param md5OfSystemAttributes the digest of the system attributes as sent, or null without
 * @param size                  the message's size as SQS counts it
 */
record Outgoing(byte[] bytes, SendOptions options, String md5OfBody, @Nullable String md5OfAttributes,
                @Nullable String md5OfSystemAttributes, int size) {

    /** SqsMailbox's attribute for a body sent as base64 (see {@code SqsMailbox.ENCODING_ATTRIBUTE}). */
    static final String ENCODING_ATTRIBUTE = "mailbox-encoding";
    /**
     * The one system attribute a send may give, X-Ray's trace header. The mailbox keeps it as a string attribute
     * of this name, where tracing on a plain mailbox reader (and SqsMailbox, which maps it to and from the SQS
     * system attribute) finds it; a receive returns it as the system attribute again.
     */
    static final String TRACE_HEADER = "AWSTraceHeader";
    private static final BigDecimal NUMBER_MAX = BigDecimal.TEN.pow(126);
    private static final BigDecimal NUMBER_MIN = BigDecimal.TEN.pow(128).negate();

    /**
     * @param entry a SendMessage request or a batch entry
     * @param queue the queue's settings
     * @return the message, checked
     * @throws SqsError refusing it as SQS would
     */
    static Outgoing of(Params entry, QueueAttributes.Settings queue) {
        String body = entry.text("MessageBody");
        if (body == null || body.isEmpty()) {
            throw SqsError.missing("MessageBody");
        }
        try {
            Limits.requireSqsText(body, "message body");
        } catch (IllegalArgumentException e) {
            throw new SqsError(ErrorCode.INVALID_MESSAGE_CONTENTS, "Invalid characters found. Valid unicode"
                    + " characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF");
        }
        Integer delay = entry.integer("DelaySeconds", 0, 900, "DelaySeconds must be >= 0 and <= 900");
        if (entry.text("MessageDeduplicationId") != null) {
            throw SqsError.invalidParameter("The request include parameter that is not valid for this queue type");
        }
        Map<String, SqsMessageAttribute> attributes = attributes(entry.structMap("MessageAttributes"), "message");
        Map<String, SqsMessageAttribute> system = attributes(entry.structMap("MessageSystemAttributes"), "system");
        for (Map.Entry<String, SqsMessageAttribute> e : system.entrySet()) {
            if (!e.getKey().equals(TRACE_HEADER)) {
                throw SqsError.invalidParameter("Message system attribute name '" + e.getKey() + "' is invalid.");
            }
            if (!e.getValue().dataType().equals("String")) {
                throw SqsError.invalidParameter("Message system attribute '" + TRACE_HEADER + "' must be of type"
                        + " String, was " + e.getValue().dataType() + ".");
            }
        }
        if (attributes.containsKey(TRACE_HEADER)) {
            // stored under the same name as the system attribute, it would come back as that: refused, not changed
            throw SqsError.invalidParameter("Message attribute name '" + TRACE_HEADER + "' is reserved by this"
                    + " endpoint for the system attribute of that name; send the trace header as"
                    + " MessageSystemAttributes." + TRACE_HEADER + ".");
        }
        int size = body.getBytes(StandardCharsets.UTF_8).length;
        for (Map.Entry<String, SqsMessageAttribute> e : attributes.entrySet()) {
            SqsMessageAttribute a = e.getValue();
            size += utf8(e.getKey()) + utf8(a.dataType()) + (a.isBinary() ? java.util.Objects.requireNonNull(a.binaryValue()).length : utf8(a.stringValue()));
        }
        if (size > queue.maximumMessageSize()) {
            throw SqsError.invalidParameter("One or more parameters are invalid. Reason: Message must be shorter"
                    + " than " + queue.maximumMessageSize() + " bytes.");
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Map<String, String> stored = new LinkedHashMap<>();
        attributes.forEach((k, v) -> stored.put(k, v.encode()));
        SqsMessageAttribute encoding = attributes.get(ENCODING_ATTRIBUTE);
        if (encoding != null && encoding.equals(SqsMessageAttribute.string("base64"))) {
            // SqsMailbox's binary body: store the bytes it stands for, as a plain reader of the mailbox expects
            try {
                bytes = Base64.getDecoder().decode(body);
                stored.remove(ENCODING_ATTRIBUTE);
            } catch (IllegalArgumentException notBase64) {
                // kept as the text it is, with its attribute
            }
        }
        SqsMessageAttribute trace = system.get(TRACE_HEADER);
        if (trace != null && stored.size() < Limits.MAX_ATTRIBUTES
                && size + utf8(TRACE_HEADER) + utf8("String") + utf8(trace.stringValue()) <= queue.maximumMessageSize()) {
            // kept only where it fits: a trace header never makes a message SQS takes one the mailbox refuses
            stored.put(TRACE_HEADER, trace.encode());
        }
        SendOptions options = SendOptions.defaults()
                .withDelay(Duration.ofSeconds(delay != null ? delay : queue.delaySeconds()))
                .withAttributes(stored);
        return new Outgoing(bytes, options, Digests.ofBody(body), Digests.ofAttributes(attributes),
                Digests.ofAttributes(system), size);
    }

    /**
     * @param entry a SendMessageBatch entry, not yet checked
     * @return its size as SQS counts it for the batch's total (body, and each message attribute's name, data type
     *         and value); a part that cannot be read counts as nothing here and is refused with its entry
     */
    static long sizeForBatchLimit(Params entry) {
        long size;
        try {
            size = utf8(entry.text("MessageBody"));
        } catch (SqsError unreadable) {
            size = 0;
        }
        Map<String, Params> attributes;
        try {
            attributes = entry.structMap("MessageAttributes");
        } catch (SqsError unreadable) {
            return size;
        }
        for (Map.Entry<String, Params> a : attributes.entrySet()) {
            try {
                String type = a.getValue().text("DataType");
                size += utf8(a.getKey()) + utf8(type);
                if (type != null && type.startsWith("Binary")) {
                    String base64 = a.getValue().text("BinaryValue");
                    size += base64 == null ? 0 : Base64.getMimeDecoder().decode(base64).length;
                } else {
                    size += utf8(a.getValue().text("StringValue"));
                }
            } catch (SqsError | IllegalArgumentException unreadable) {
                // refused with its entry
            }
        }
        return size;
    }

    private static Map<String, SqsMessageAttribute> attributes(Map<String, Params> given, String kind) {
        if (given.size() > Limits.MAX_ATTRIBUTES) {
            throw SqsError.invalidParameter("Number of " + kind + " attributes [" + given.size()
                    + "] exceeds the allowed maximum [" + Limits.MAX_ATTRIBUTES + "].");
        }
        Map<String, SqsMessageAttribute> out = new LinkedHashMap<>();
        for (Map.Entry<String, Params> e : given.entrySet()) {
            String name = e.getKey();
            Params value = e.getValue();
            try {
                // the same name rules as the mailbox's: SQS's
                Limits.requireAttribute(name, "x");
            } catch (IllegalArgumentException bad) {
                throw SqsError.invalidParameter("Message attribute name '" + name + "' is invalid: "
                        + bad.getMessage() + ".");
            }
            out.put(name, attribute(name, value));
        }
        return out;
    }

    private static SqsMessageAttribute attribute(String name, Params value) {
        String type = value.text("DataType");
        if (type == null || type.isEmpty()) {
            throw SqsError.invalidParameter("The message attribute '" + name + "' must contain a non-empty message"
                    + " attribute type.");
        }
        if (!SqsMessageAttribute.isDataType(type)) {
            throw SqsError.invalidParameter("The type of message attribute '" + name + "' is invalid. You must use"
                    + " only the following supported type prefixes: Binary, Number, String.");
        }
        if (!value.strings("StringListValues").isEmpty() || !value.strings("BinaryListValues").isEmpty()) {
            throw SqsError.invalidParameter("Message attribute list values in SendMessage operation are not"
                    + " supported.");
        }
        String text = value.text(type.startsWith("Binary") ? "BinaryValue" : "StringValue");
        String emptyMessage = "Message attribute '" + name + "' must contain a non-empty value of type '" + type + "'.";
        if (text == null || text.isEmpty()) {
            throw SqsError.invalidParameter(emptyMessage);
        }
        if (type.startsWith("Binary")) {
            byte[] bytes;
            try {
                bytes = Base64.getMimeDecoder().decode(text);
            } catch (IllegalArgumentException e) {
                throw SqsError.invalidParameter("The binary value of message attribute '" + name + "' is not valid"
                        + " base64.");
            }
            if (bytes.length == 0) {
                throw SqsError.invalidParameter(emptyMessage);
            }
            return new SqsMessageAttribute(type, null, bytes);
        }
        try {
            Limits.requireSqsText(text, "value");
        } catch (IllegalArgumentException e) {
            throw new SqsError(ErrorCode.INVALID_MESSAGE_CONTENTS, "Message attribute '" + name + "' contains"
                    + " invalid characters.");
        }
        if (type.startsWith("Number")) {
            checkNumber(name, text);
        }
        return new SqsMessageAttribute(type, text, null);
    }

    /** SQS's rule: up to 38 significant digits, between -10^128 and 10^126. */
    private static void checkNumber(String name, String text) {
        BigDecimal n;
        try {
            n = new BigDecimal(text.strip());
        } catch (NumberFormatException e) {
            n = null;
        }
        if (n == null || n.precision() > 38 || n.compareTo(NUMBER_MAX) > 0 || n.compareTo(NUMBER_MIN) < 0) {
            throw SqsError.invalidParameter("Value " + text + " of message attribute '" + name + "' is not a valid"
                    + " number: up to 38 digits, between -10^128 and 10^126.");
        }
    }

    private static int utf8(@Nullable String s) {
        return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
    }
}
