package dev.mailbox.sqs;

import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * SQS message attributes of every data type as a mailbox's string attributes, in the project's one stored form
 * (the {@code sqs-endpoint} module's {@code SqsMessageAttribute} documents it and reads and writes it the same
 * way): a {@code String} attribute is its value; any other is {@code {sqs:DataType}payload}, the payload being
 * the text of a String or Number type and the standard base64 of a Binary type's bytes; and a String value that
 * would read as that typed form is written {@code {sqs:String}value}. Reading takes a value in that form (valid
 * type, non-empty payload, canonical base64 for a binary type) as typed and anything else as a String, so both
 * directions are lossless.
 */
final class TypedAttributes {

    private static final Pattern TYPED = Pattern.compile("\\{sqs:((String|Number|Binary)(\\.[A-Za-z0-9_.-]+)?)\\}(.+)",
            Pattern.DOTALL);
    private static final int MAX_TYPE_LENGTH = 256;

    private TypedAttributes() {
    }

    /** @return the SQS attribute a mailbox attribute's value stands for */
    static MessageAttributeValue toSqs(String stored) {
        MessageAttributeValue typed = typed(stored);
        return typed != null ? typed : MessageAttributeValue.builder().dataType("String").stringValue(stored).build();
    }

    /** @return the mailbox attribute value for an SQS attribute, keeping its type */
    static String fromSqs(MessageAttributeValue value) {
        String type = value.dataType();
        if (type.startsWith("Binary")) {
            byte[] bytes = value.binaryValue() == null ? new byte[0] : value.binaryValue().asByteArray();
            return "{sqs:" + type + "}" + Base64.getEncoder().encodeToString(bytes);
        }
        String text = value.stringValue() == null ? "" : value.stringValue();
        return type.equals("String") && typed(text) == null ? text : "{sqs:" + type + "}" + text;
    }

    /** @return the typed attribute a stored value is in the typed form of, or null if it is plain text */
    private static @Nullable MessageAttributeValue typed(String stored) {
        Matcher m = TYPED.matcher(stored);
        if (!m.matches() || m.group(1).length() > MAX_TYPE_LENGTH) {
            return null;
        }
        if (!m.group(2).equals("Binary")) {
            return MessageAttributeValue.builder().dataType(m.group(1)).stringValue(m.group(4)).build();
        }
        byte[] bytes = canonicalBase64(m.group(4));
        return bytes == null ? null
                : MessageAttributeValue.builder().dataType(m.group(1)).binaryValue(SdkBytes.fromByteArray(bytes)).build();
    }

    private static byte @Nullable [] canonicalBase64(String payload) {
        try {
            byte[] bytes = Base64.getDecoder().decode(payload);
            return bytes.length > 0 && Base64.getEncoder().encodeToString(bytes).equals(payload) ? bytes : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
