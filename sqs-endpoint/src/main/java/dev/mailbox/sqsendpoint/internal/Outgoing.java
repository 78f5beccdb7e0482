package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.SendOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One message of a SendMessage or SendMessageBatch, checked as SQS checks it and put in the form the mailbox
 * stores: the body's bytes, the message attributes as the mailbox's typed attributes, and what SQS keeps besides
 * (the sender, the X-Ray trace header, a FIFO message's deduplication id) as system attributes.
 *
 * @param bytes                 what the mailbox stores as the body
 * @param options               the delay, attributes, system attributes, group and deduplication key
 * @param md5OfBody             the digest of the body as sent
 * @param md5OfAttributes       the digest of the attributes as sent, or null without attributes
 * @param md5OfSystemAttributes the digest of the system attributes as sent, or null without
 * @param size                  the message's size as SQS counts it
 */
record Outgoing(byte[] bytes, SendOptions options, String md5OfBody, @Nullable String md5OfAttributes,
                @Nullable String md5OfSystemAttributes, int size) {

    /** SqsMailbox's attribute for a body sent as base64 (see {@code SqsMailbox.ENCODING_ATTRIBUTE}). */
    static final String ENCODING_ATTRIBUTE = "mailbox-encoding";
    /** The one system attribute a send may give, X-Ray's trace header; kept as the mailbox system attribute of that name. */
    static final String TRACE_HEADER = "AWSTraceHeader";
    /** System attributes the endpoint keeps with a message, by SQS's names. */
    static final String SENDER_ID = "SenderId";
    static final String DEDUPLICATION_ID = "MessageDeduplicationId";
    static final String GROUP_ID = "MessageGroupId";
    static final String SEQUENCE_NUMBER = "SequenceNumber";
    static final String DEAD_LETTER_SOURCE = "DeadLetterQueueSourceArn";

    /** SQS's rule for MessageGroupId, MessageDeduplicationId and ReceiveRequestAttemptId. */
    static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1,128}");

    /**
     * @param entry     a SendMessage request or a batch entry
     * @param queue     the queue's settings
     * @param principal who sends: kept as the message's SenderId
     * @return the message, checked
     * @throws SqsError refusing it as SQS would
     */
    static Outgoing of(Params entry, QueueAttributes.Settings queue, String principal) {
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
        String groupId = entry.text("MessageGroupId");
        String deduplicationId = entry.text("MessageDeduplicationId");
        if (groupId != null && !TOKEN.matcher(groupId).matches()) {
            throw SqsError.invalidParameter("Value " + groupId + " for parameter MessageGroupId is invalid. Reason:"
                    + " MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.");
        }
        if (queue.fifo()) {
            if (groupId == null) {
                throw SqsError.missing("MessageGroupId");
            }
            if (delay != null && delay != 0) {
                throw SqsError.invalidParameter("Value " + delay + " for parameter DelaySeconds is invalid. Reason:"
                        + " The request include parameter that is not valid for this queue type.");
            }
            if (deduplicationId != null && !TOKEN.matcher(deduplicationId).matches()) {
                throw SqsError.invalidParameter("Value " + deduplicationId + " for parameter MessageDeduplicationId is"
                        + " invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation"
                        + " characters. 1 to 128 in length.");
            }
            if (deduplicationId == null && !queue.contentBasedDeduplication()) {
                throw SqsError.invalidParameter("The queue should either have ContentBasedDeduplication enabled or"
                        + " MessageDeduplicationId provided explicitly");
            }
        } else if (deduplicationId != null) {
            throw SqsError.invalidParameter("Value " + deduplicationId + " for parameter MessageDeduplicationId is"
                    + " invalid. Reason: The request include parameter that is not valid for this queue type.");
        }
        Map<String, AttributeValue> attributes = attributes(entry.structMap("MessageAttributes"), "message");
        Map<String, AttributeValue> system = attributes(entry.structMap("MessageSystemAttributes"), "system");
        for (Map.Entry<String, AttributeValue> e : system.entrySet()) {
            if (!e.getKey().equals(TRACE_HEADER)) {
                throw SqsError.invalidParameter("Message system attribute name '" + e.getKey() + "' is invalid.");
            }
            if (!e.getValue().dataType().equals("String")) {
                throw SqsError.invalidParameter("Message system attribute '" + TRACE_HEADER + "' must be of type"
                        + " String, was " + e.getValue().dataType() + ".");
            }
        }
        int size = utf8(body);
        for (Map.Entry<String, AttributeValue> e : attributes.entrySet()) {
            size += utf8(e.getKey()) + e.getValue().size();
        }
        if (size > queue.maximumMessageSize()) {
            throw SqsError.invalidParameter("One or more parameters are invalid. Reason: Message must be shorter"
                    + " than " + queue.maximumMessageSize() + " bytes.");
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Map<String, AttributeValue> stored = new LinkedHashMap<>(attributes);
        AttributeValue encoding = attributes.get(ENCODING_ATTRIBUTE);
        if (encoding != null && encoding.equals(AttributeValue.string("base64"))) {
            // SqsMailbox's binary body: store the bytes it stands for, as a plain reader of the mailbox expects
            try {
                bytes = Base64.getDecoder().decode(body);
                stored.remove(ENCODING_ATTRIBUTE);
            } catch (IllegalArgumentException notBase64) {
                // kept as the text it is, with its attribute
            }
        }
        SendOptions options = SendOptions.defaults().withTypedAttributes(stored)
                .withSystemAttribute(SENDER_ID, principal);
        AttributeValue trace = system.get(TRACE_HEADER);
        if (trace != null) {
            String header = trace.text();
            if (header.length() > SendOptions.MAX_SYSTEM_ATTRIBUTE_LENGTH) {
                throw SqsError.invalidParameter("Message system attribute '" + TRACE_HEADER + "' is longer than "
                        + SendOptions.MAX_SYSTEM_ATTRIBUTE_LENGTH + " characters.");
            }
            options = options.withSystemAttribute(TRACE_HEADER, header);
        }
        if (queue.fifo()) {
            String id = deduplicationId != null ? deduplicationId : FifoOptions.contentDeduplicationId(
                    body.getBytes(StandardCharsets.UTF_8));
            options = options.withGroupId(groupId).withSystemAttribute(DEDUPLICATION_ID, id)
                    .withDeduplicationId(queue.groupScope() ? groupScoped(groupId, id) : id);
        } else {
            options = options.withDelay(Duration.ofSeconds(delay != null ? delay : queue.delaySeconds()));
            if (groupId != null) {
                // the tenant of a fair queue: the mailbox's group (where it is fair) and kept for receivers
                options = options.withGroupId(groupId).withSystemAttribute(GROUP_ID, groupId);
            }
        }
        return new Outgoing(bytes, options, Digests.ofBody(body), Digests.ofAttributes(attributes),
                Digests.ofAttributes(system), size);
    }

    /**
     * The mailbox deduplicates across the whole mailbox; a queue whose DeduplicationScope is messageGroup
     * deduplicates within each group, so its keys are made distinct per group: a digest of group and id, which
     * stays within the 128 characters a deduplication id may have.
     */
    private static String groupScoped(String groupId, String id) {
        return "g:" + FifoOptions.contentDeduplicationId((groupId + "\n" + id).getBytes(StandardCharsets.UTF_8));
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

    private static Map<String, AttributeValue> attributes(Map<String, Params> given, String kind) {
        if (given.size() > Limits.MAX_ATTRIBUTES) {
            throw SqsError.invalidParameter("Number of " + kind + " attributes [" + given.size()
                    + "] exceeds the allowed maximum [" + Limits.MAX_ATTRIBUTES + "].");
        }
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        for (Map.Entry<String, Params> e : given.entrySet()) {
            String name = e.getKey();
            try {
                // the same name rules as the mailbox's: SQS's
                Limits.requireAttributeName(name);
            } catch (IllegalArgumentException bad) {
                throw SqsError.invalidParameter("Message attribute name '" + name + "' is invalid: "
                        + bad.getMessage() + ".");
            }
            out.put(name, attribute(name, e.getValue()));
        }
        return out;
    }

    private static AttributeValue attribute(String name, Params value) {
        String type = value.text("DataType");
        if (type == null || type.isEmpty()) {
            throw SqsError.invalidParameter("The message attribute '" + name + "' must contain a non-empty message"
                    + " attribute type.");
        }
        if (!AttributeValue.isDataType(type)) {
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
            return AttributeValue.ofBinary(type, bytes);
        }
        try {
            Limits.requireSqsText(text, "value");
        } catch (IllegalArgumentException e) {
            throw new SqsError(ErrorCode.INVALID_MESSAGE_CONTENTS, "Message attribute '" + name + "' contains"
                    + " invalid characters.");
        }
        try {
            return AttributeValue.of(type, text);
        } catch (IllegalArgumentException notANumber) {
            throw SqsError.invalidParameter("Value " + text + " of message attribute '" + name + "' is not a valid"
                    + " number: up to 38 digits, between -10^128 and 10^126.");
        }
    }

    private static int utf8(@Nullable String s) {
        return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
    }
}
