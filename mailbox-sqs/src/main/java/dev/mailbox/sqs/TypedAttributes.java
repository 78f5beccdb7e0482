package dev.mailbox.sqs;

import dev.mailbox.api.AttributeValue;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * The mailbox's typed attributes ({@link AttributeValue}) as SQS's own typed message attributes and back: the data
 * type and the value travel as they are, so a message keeps its attributes' types through any mix of SQS clients,
 * the {@code sqs-endpoint} and SqsMailbox.
 */
final class TypedAttributes {

    private TypedAttributes() {
    }

    /** @return the SQS attribute for a mailbox attribute value */
    static MessageAttributeValue toSqs(AttributeValue value) {
        MessageAttributeValue.Builder b = MessageAttributeValue.builder().dataType(value.dataType());
        byte[] bytes = value.binaryValue();
        return bytes != null ? b.binaryValue(SdkBytes.fromByteArray(bytes)).build() : b.stringValue(value.stringValue()).build();
    }

    /**
     * @return the mailbox attribute value for an SQS attribute, keeping its type; one SQS should not have given
     *         (an unknown type, an empty value) is kept as a String of its text rather than dropped
     */
    static AttributeValue fromSqs(MessageAttributeValue value) {
        String type = value.dataType() == null ? "String" : value.dataType();
        try {
            if (type.startsWith("Binary")) {
                return AttributeValue.ofBinary(type, value.binaryValue() == null ? new byte[0]
                        : value.binaryValue().asByteArray());
            }
            return AttributeValue.of(type, value.stringValue() == null ? "" : value.stringValue());
        } catch (IllegalArgumentException notAsSqsPromises) {
            String text = value.stringValue() != null && !value.stringValue().isEmpty() ? value.stringValue()
                    : value.binaryValue() != null && value.binaryValue().asByteArray().length > 0
                    ? java.util.Base64.getEncoder().encodeToString(value.binaryValue().asByteArray()) : "(empty)";
            return AttributeValue.string(text);
        }
    }
}
