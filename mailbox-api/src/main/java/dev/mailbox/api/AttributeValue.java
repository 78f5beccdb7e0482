package dev.mailbox.api;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A typed message attribute value, as SQS types them: {@code String}, {@code Number} or {@code Binary}, each
 * optionally followed by a custom label ({@code Number.int}, {@code String.json}, {@code Binary.png}). A
 * {@code String} or {@code Number} value is text; a {@code Binary} value is bytes. Every backend keeps the type
 * and the value exactly ({@link SendOptions#withAttribute(String, AttributeValue)},
 * {@link Message#typedAttributes()}); on SQS they are SQS's own typed message attributes.
 *
 * <p>A plain string attribute ({@link SendOptions#withAttribute(String, String)}) is the value of type
 * {@code String}; {@link Message#attributes()} shows those, and {@link Message#typedAttributes()} every
 * attribute. A {@code Number} is kept as the text given (not parsed, so {@code 1.50} stays {@code 1.50}); it must
 * be what SQS accepts as a number: up to 38 significant digits, between -10<sup>128</sup> and 10<sup>126</sup>.
 *
 * <p>Immutable; a binary value is copied in and out.
 */
public final class AttributeValue {

    private static final Pattern DATA_TYPE = Pattern.compile("(String|Number|Binary)(\\.[A-Za-z0-9_.-]+)?");
    /** Longest data type name (SQS's). */
    public static final int MAX_DATA_TYPE_LENGTH = 256;
    private static final BigDecimal NUMBER_MAX = BigDecimal.TEN.pow(126);
    private static final BigDecimal NUMBER_MIN = BigDecimal.TEN.pow(128).negate();
    private static final int NUMBER_MAX_DIGITS = 38;

    private final String dataType;
    private final @Nullable String text;
    private final byte @Nullable [] bytes;

    private AttributeValue(String dataType, @Nullable String text, byte @Nullable [] bytes) {
        this.dataType = dataType;
        this.text = text;
        this.bytes = bytes;
    }

    /**
     * @param value a non-empty text of characters SQS allows
     * @return a {@code String} value
     * @throws IllegalArgumentException if the text is empty or holds a character SQS refuses
     */
    public static AttributeValue string(String value) {
        return of("String", value);
    }

    /**
     * @param value a number as text, such as {@code 12.50} or {@code -7}
     * @return a {@code Number} value, kept as given
     * @throws IllegalArgumentException if it is not a number SQS accepts
     */
    public static AttributeValue number(String value) {
        return of("Number", value);
    }

    /**
     * @param value non-empty bytes
     * @return a {@code Binary} value
     * @throws IllegalArgumentException if empty
     */
    public static AttributeValue binary(byte[] value) {
        return ofBinary("Binary", value);
    }

    /**
     * @param dataType {@code String} or {@code Number}, optionally with a custom label ({@code Number.int})
     * @param value    the text: non-empty, of characters SQS allows, and a valid number for a {@code Number} type
     * @return the value
     * @throws IllegalArgumentException if the type is not a text type SQS knows or the value does not fit it
     */
    public static AttributeValue of(String dataType, String value) {
        requireDataType(dataType);
        Objects.requireNonNull(value, "value");
        if (isBinaryType(dataType)) {
            throw new IllegalArgumentException("data type " + dataType + " holds bytes: use ofBinary");
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException("an attribute value of type " + dataType + " must not be empty");
        }
        Limits.requireSqsText(value, "attribute value of type " + dataType);
        if (dataType.startsWith("Number")) {
            requireNumber(value);
        }
        return new AttributeValue(dataType, value, null);
    }

    /**
     * @param dataType {@code Binary}, optionally with a custom label ({@code Binary.png})
     * @param value    non-empty bytes (copied)
     * @return the value
     * @throws IllegalArgumentException if the type is not a binary type or the bytes are empty
     */
    public static AttributeValue ofBinary(String dataType, byte[] value) {
        requireDataType(dataType);
        Objects.requireNonNull(value, "value");
        if (!isBinaryType(dataType)) {
            throw new IllegalArgumentException("data type " + dataType + " holds text: use of");
        }
        if (value.length == 0) {
            throw new IllegalArgumentException("an attribute value of type " + dataType + " must not be empty");
        }
        return new AttributeValue(dataType, null, value.clone());
    }

    /**
     * @param dataType a proposed data type
     * @return whether SQS accepts it: {@code String}, {@code Number} or {@code Binary}, optionally followed by
     *         {@code .} and a label of {@code A-Z a-z 0-9 _ - .}, at most {@value #MAX_DATA_TYPE_LENGTH} characters
     */
    public static boolean isDataType(String dataType) {
        return dataType.length() <= MAX_DATA_TYPE_LENGTH && DATA_TYPE.matcher(dataType).matches();
    }

    private static void requireDataType(String dataType) {
        Objects.requireNonNull(dataType, "dataType");
        if (!isDataType(dataType)) {
            throw new IllegalArgumentException("an attribute's data type must be String, Number or Binary, optionally"
                    + " followed by '.' and a label of A-Z, a-z, 0-9, '_', '-' and '.', at most " + MAX_DATA_TYPE_LENGTH
                    + " characters; was '" + (dataType.length() > 300 ? dataType.substring(0, 300) + "..." : dataType)
                    + "'");
        }
    }

    /**
     * SQS's rule for a Number: up to 38 significant digits, between -10^128 and 10^126 (leading and trailing
     * spaces allowed, as SQS allows them).
     */
    private static void requireNumber(String text) {
        BigDecimal n;
        try {
            n = new BigDecimal(text.strip());
        } catch (NumberFormatException e) {
            n = null;
        }
        if (n == null || n.precision() > NUMBER_MAX_DIGITS || n.compareTo(NUMBER_MAX) > 0 || n.compareTo(NUMBER_MIN) < 0) {
            throw new IllegalArgumentException("'" + (text.length() > 100 ? text.substring(0, 100) + "..." : text)
                    + "' is not a number SQS accepts: up to " + NUMBER_MAX_DIGITS + " digits, between -10^128 and"
                    + " 10^126");
        }
    }

    private static boolean isBinaryType(String dataType) {
        return dataType.startsWith("Binary");
    }

    /** @return the data type, such as {@code String}, {@code Number.int} or {@code Binary} */
    public String dataType() {
        return dataType;
    }

    /** @return whether this is a {@code Binary} value (with or without a label) */
    public boolean isBinary() {
        return bytes != null;
    }

    /** @return whether this is a plain string, of data type exactly {@code String} */
    public boolean isPlainString() {
        return dataType.equals("String");
    }

    /** @return the text of a {@code String} or {@code Number} value; null for a binary one */
    public @Nullable String stringValue() {
        return text;
    }

    /** @return a copy of the bytes of a {@code Binary} value; null for a text one */
    public byte @Nullable [] binaryValue() {
        return bytes == null ? null : bytes.clone();
    }

    /**
     * @return the value as SQS's wire carries it: the text, or the bytes in standard base64 (RFC 4648, padded)
     */
    public String text() {
        return bytes != null ? Base64.getEncoder().encodeToString(bytes) : Objects.requireNonNull(text);
    }

    /**
     * @return how many bytes the value counts toward a message's size, as SQS counts it: its data type's and its
     *         value's (UTF-8 text, or the bytes themselves), without the name
     */
    public int size() {
        int value = bytes != null ? bytes.length : Objects.requireNonNull(text).getBytes(StandardCharsets.UTF_8).length;
        return dataType.length() + value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AttributeValue other && dataType.equals(other.dataType) && Objects.equals(text, other.text)
                && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(dataType, text, Arrays.hashCode(bytes));
    }

    /** @return the type and the value's size only: values may be private to the application */
    @Override
    public String toString() {
        return dataType + "(" + (bytes != null ? bytes.length + " bytes" : Objects.requireNonNull(text).length()
                + " characters") + ")";
    }
}
