package dev.mailbox.sqsendpoint;

import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One SQS message attribute with its data type, and the one way such an attribute is kept in a mailbox's
 * string attributes ({@link dev.mailbox.api.SendOptions#withAttribute}, {@link dev.mailbox.api.Message#attributes()}),
 * which hold text only.
 *
 * <h2>The stored form</h2>
 * <ul>
 *   <li>A {@code String} attribute is stored as its value, unchanged: a plain Java reader of the mailbox sees
 *       exactly what the SQS client sent. (The one exception is below.)</li>
 *   <li>Every other attribute is stored as {@value #MARKER}<i>DataType</i>{@code }}<i>payload</i>, where the
 *       payload is the value itself for {@code Number} and {@code String} types (including custom types such as
 *       {@code Number.int} or {@code String.json}) and the value's standard base64 (RFC 4648, with padding) for
 *       {@code Binary} types: {@code {sqs:Number}12.50}, {@code {sqs:Binary}AAEC}, {@code {sqs:Binary.png}iVBORw0K...}.</li>
 *   <li>A {@code String} value that would read as the typed form above is stored as
 *       {@code {sqs:String}}<i>value</i>, so nothing is ever read back as another type.</li>
 * </ul>
 * Reading is the inverse: a stored value that is {@value #MARKER}, a valid data type, {@code }} and a valid
 * non-empty payload (canonical base64 for a binary type) is that typed attribute; any other value is a
 * {@code String} attribute with the stored text as its value. The mapping is therefore lossless both ways: every
 * SQS attribute comes back with its type and bytes, and every stored string (whoever wrote it) comes back as
 * itself. {@code SqsMailbox} (module {@code mailbox-sqs}) uses the same form for attributes it receives from SQS
 * and sends to it, so a message keeps its attributes' types through any mix of SQS clients, this endpoint,
 * {@code SqsMailbox} and plain mailbox readers.
 *
 * <p>Immutable. A binary value is copied in and out.
 *
 * @param dataType    {@code String}, {@code Number} or {@code Binary}, optionally followed by {@code .} and a
 *                    custom label of {@code A-Z a-z 0-9 _ - .}; at most 256 characters
 * @param stringValue the value of a {@code String} or {@code Number} type, non-empty; null for a binary type
 * @param binaryValue the value of a {@code Binary} type, non-empty; null otherwise
 */
public record SqsMessageAttribute(String dataType, @Nullable String stringValue, byte @Nullable [] binaryValue) {

    /** How a typed stored value starts. */
    public static final String MARKER = "{sqs:";

    private static final Pattern DATA_TYPE = Pattern.compile("(String|Number|Binary)(\\.[A-Za-z0-9_.-]+)?");
    private static final int MAX_DATA_TYPE_LENGTH = 256;

    /**
     * @param dataType    the data type
     * @param stringValue the text of a String or Number type
     * @param binaryValue the bytes of a Binary type
     * @throws IllegalArgumentException if the type is not one SQS knows, or the value does not match it or is
     *                                  empty
     */
    public SqsMessageAttribute {
        Objects.requireNonNull(dataType, "dataType");
        if (!isDataType(dataType)) {
            throw new IllegalArgumentException("data type must be String, Number or Binary, optionally followed by"
                    + " '.' and a label of A-Z, a-z, 0-9, '_', '-' and '.', at most " + MAX_DATA_TYPE_LENGTH
                    + " characters; was '" + dataType + "'");
        }
        if (isBinary(dataType)) {
            if (binaryValue == null || binaryValue.length == 0 || stringValue != null) {
                throw new IllegalArgumentException("an attribute of type " + dataType + " needs a non-empty binary"
                        + " value and no string value");
            }
            binaryValue = binaryValue.clone();
        } else if (stringValue == null || stringValue.isEmpty() || binaryValue != null) {
            throw new IllegalArgumentException("an attribute of type " + dataType + " needs a non-empty string value"
                    + " and no binary value");
        }
    }

    /**
     * @param value a non-empty value
     * @return a {@code String} attribute
     */
    public static SqsMessageAttribute string(String value) {
        return new SqsMessageAttribute("String", value, null);
    }

    /**
     * @param value a number as text, such as {@code 12.50}
     * @return a {@code Number} attribute (the text is kept as given, not parsed)
     */
    public static SqsMessageAttribute number(String value) {
        return new SqsMessageAttribute("Number", value, null);
    }

    /**
     * @param value non-empty bytes
     * @return a {@code Binary} attribute
     */
    public static SqsMessageAttribute binary(byte[] value) {
        return new SqsMessageAttribute("Binary", null, value);
    }

    /**
     * @param dataType a data type
     * @return whether SQS accepts it: {@code String}, {@code Number} or {@code Binary}, optionally with a custom
     *         label
     */
    public static boolean isDataType(String dataType) {
        return dataType.length() <= MAX_DATA_TYPE_LENGTH && DATA_TYPE.matcher(dataType).matches();
    }

    /** @return whether this is a {@code Binary} type (with or without a label) */
    public boolean isBinary() {
        return isBinary(dataType);
    }

    /** @return a copy of the binary value, or null for a String or Number type */
    @Override
    public byte @Nullable [] binaryValue() {
        return binaryValue == null ? null : binaryValue.clone();
    }

    /** @return the value as SQS transports it: the text, or the bytes' base64 */
    public String text() {
        return binaryValue != null ? Base64.getEncoder().encodeToString(binaryValue) : Objects.requireNonNull(stringValue);
    }

    /** @return the stored form, for a mailbox's string attribute (see the class comment) */
    public String encode() {
        if (dataType.equals("String") && !looksTyped(Objects.requireNonNull(stringValue))) {
            return stringValue;
        }
        return MARKER + dataType + "}" + text();
    }

    /**
     * @param stored a mailbox attribute's value
     * @return the SQS attribute it stands for: a typed one if it is in the typed form, otherwise a {@code String}
     *         attribute of the stored text
     * @throws IllegalArgumentException if {@code stored} is empty (no mailbox stores an empty attribute)
     */
    public static SqsMessageAttribute decode(String stored) {
        SqsMessageAttribute typed = typed(stored);
        return typed != null ? typed : string(stored);
    }

    private static boolean looksTyped(String value) {
        return typed(value) != null;
    }

    private static @Nullable SqsMessageAttribute typed(String stored) {
        if (!stored.startsWith(MARKER)) {
            return null;
        }
        int close = stored.indexOf('}', MARKER.length());
        if (close < 0) {
            return null;
        }
        String type = stored.substring(MARKER.length(), close);
        String payload = stored.substring(close + 1);
        if (payload.isEmpty() || !isDataType(type)) {
            return null;
        }
        if (!isBinary(type)) {
            return new SqsMessageAttribute(type, payload, null);
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(payload);
        } catch (IllegalArgumentException notBase64) {
            return null;
        }
        // only the canonical encoding reads as binary, so that every stored string maps back to itself
        if (bytes.length == 0 || !Base64.getEncoder().encodeToString(bytes).equals(payload)) {
            return null;
        }
        return new SqsMessageAttribute(type, null, bytes);
    }

    private static boolean isBinary(String dataType) {
        return dataType.startsWith("Binary");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SqsMessageAttribute other && dataType.equals(other.dataType)
                && Objects.equals(stringValue, other.stringValue) && Arrays.equals(binaryValue, other.binaryValue);
    }

    @Override
    public int hashCode() {
        return Objects.hash(dataType, stringValue, Arrays.hashCode(binaryValue));
    }

    @Override
    public String toString() {
        // the value may be private to the application: only its size is shown
        return dataType + "(" + (binaryValue != null ? binaryValue.length + " bytes"
                : Objects.requireNonNull(stringValue).length() + " characters") + ")";
    }
}
