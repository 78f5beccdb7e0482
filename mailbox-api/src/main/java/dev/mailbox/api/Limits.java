package dev.mailbox.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The limits every backend enforces. They are SQS's, the strictest backend, so code that works on one
 * backend works on all of them. The checks here run before any backend call, so a refused argument
 * never changes anything.
 *
 * <p>This class is also the toolbox backends use to validate their arguments the same way.
 */
public final class Limits {

    /** Most messages in one receive or one batch send. */
    public static final int MAX_BATCH = 10;
    /** Most attributes on one message. */
    public static final int MAX_ATTRIBUTES = 10;
    /** Longest attribute name, in characters. */
    public static final int MAX_ATTRIBUTE_NAME_LENGTH = 256;
    /**
     * The default maximum message size: 1 MiB (body plus attributes), SQS's default and maximum since 2025. A
     * mailbox may be built with a smaller one.
     */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
    /** The largest maximum message size a mailbox may be configured with: 1 MiB. */
    public static final int MAX_MESSAGE_BYTES = 1024 * 1024;
    /** Longest delay of a send. */
    public static final Duration MAX_DELAY = Duration.ofMinutes(15);
    /** Longest visibility timeout, on receive, nack and extend. */
    public static final Duration MAX_VISIBILITY_TIMEOUT = Duration.ofHours(12);
    /** Longest wait of one receive call (backends whose server waits less per call loop). */
    public static final Duration MAX_WAIT_TIME = Duration.ofMinutes(15);
    /** Most receives before dead-lettering that a {@link RedrivePolicy} may allow. */
    public static final int MAX_RECEIVE_COUNT = 1000;
    /** Longest send deduplication id (SQS's). */
    public static final int MAX_DEDUPLICATION_ID_LENGTH = 128;
    /** How long a mailbox remembers a send deduplication id (SQS's window). */
    public static final Duration DEDUPLICATION_WINDOW = Duration.ofMinutes(5);
    /** Longest message group id (SQS's {@code MessageGroupId}). */
    public static final int MAX_GROUP_ID_LENGTH = 128;
    /**
     * Fairness, first half of the noisy-tenant rule (SQS's fair queues): a tenant is noisy only while it has
     * at least this many messages in flight. See {@link #isNoisyTenant(long, long)}.
     */
    public static final int NOISY_TENANT_MIN_IN_FLIGHT = 30;
    /**
     * Fairness, second half of the noisy-tenant rule: a tenant is noisy only while its in-flight messages are
     * more than this percentage of all the mailbox's in-flight messages. See {@link #isNoisyTenant(long, long)}.
     */
    public static final int NOISY_TENANT_MIN_SHARE_PERCENT = 10;

    /** Longest portable mailbox name: SQS's queue name limit. */
    public static final int MAX_NAME_LENGTH = 80;
    /**
     * Longest extended mailbox name (see {@link MailboxCapabilities#extendedNames()}): room for a
     * coordinated mailbox id, {@code namespace@node}, whose two parts are each up to {@link #MAX_NAME_LENGTH}.
     */
    public static final int MAX_EXTENDED_NAME_LENGTH = 2 * MAX_NAME_LENGTH + 1;

    private static final java.util.regex.Pattern PORTABLE_NAME = java.util.regex.Pattern.compile(
            "[A-Za-z0-9_-]{1," + MAX_NAME_LENGTH + "}");
    private static final java.util.regex.Pattern EXTENDED_NAME = java.util.regex.Pattern.compile(
            "[A-Za-z0-9_.@-]{1," + MAX_EXTENDED_NAME_LENGTH + "}");

    /** SQS counts each string attribute's data type name too. */
    private static final int ATTRIBUTE_TYPE_BYTES = "String".length();

    private Limits() {
    }

    /**
     * The one mailbox-name rule of every backend. A portable name is 1 to {@link #MAX_NAME_LENGTH}
     * characters from A-Z, a-z, 0-9, '_' and '-': every backend takes it (it is SQS's queue-name rule). A
     * backend that declares {@link MailboxCapabilities#extendedNames()} also takes '.' and '@' and up to
     * {@link #MAX_EXTENDED_NAME_LENGTH} characters, which coordinated mailbox ids ({@code namespace@node})
     * need.
     *
     * @param name     a proposed mailbox name
     * @param extended whether the backend takes extended names
     * @return why it is refused, or null
     */
    public static @org.jspecify.annotations.Nullable String mailboxNameProblem(String name, boolean extended) {
        if (extended ? EXTENDED_NAME.matcher(name).matches() : PORTABLE_NAME.matcher(name).matches()) {
            return null;
        }
        String shown = name.length() > 200 ? name.substring(0, 200) + "...(" + name.length() + " characters)" : name;
        return extended
                ? "mailbox name must be 1 to " + MAX_EXTENDED_NAME_LENGTH + " characters from A-Z, a-z, 0-9, '_', '-', "
                        + "'.' and '@', was '" + shown + "'"
                : "mailbox name must be 1 to " + MAX_NAME_LENGTH + " characters from A-Z, a-z, 0-9, '_' and '-' on "
                        + "this backend (it has no extended names), was '" + shown + "'";
    }

    /**
     * @param name     a proposed mailbox name
     * @param extended whether the backend takes extended names
     * @return the name
     * @throws IllegalArgumentException naming the rule, if it is refused
     */
    public static String requireMailboxName(String name, boolean extended) {
        Objects.requireNonNull(name, "name");
        String bad = mailboxNameProblem(name, extended);
        if (bad != null) {
            throw new IllegalArgumentException(bad);
        }
        return name;
    }

    /**
     * Checks a visibility timeout.
     *
     * @param timeout the timeout
     * @param what    the argument's name, for the message
     * @return the timeout
     * @throws IllegalArgumentException if outside 0 to 12 hours
     */
    public static Duration requireVisibilityTimeout(Duration timeout, String what) {
        return requireRange(timeout, MAX_VISIBILITY_TIMEOUT, what);
    }

    /**
     * Checks a send delay.
     *
     * @param delay the delay
     * @return the delay
     * @throws IllegalArgumentException if outside 0 to 15 minutes
     */
    public static Duration requireDelay(Duration delay) {
        return requireRange(delay, MAX_DELAY, "delay");
    }

    /**
     * Checks a receive wait time.
     *
     * @param wait the wait
     * @return the wait
     * @throws IllegalArgumentException if outside 0 to 15 minutes
     */
    public static Duration requireWaitTime(Duration wait) {
        return requireRange(wait, MAX_WAIT_TIME, "waitTime");
    }

    /**
     * Checks the size of a batch (of sends or of a receive).
     *
     * @param size the number of messages
     * @param what the argument's name, for the message
     * @return the size
     * @throws IllegalArgumentException if outside 1 to 10
     */
    public static int requireBatchSize(int size, String what) {
        if (size < 1 || size > MAX_BATCH) {
            throw new IllegalArgumentException(
                    what + " must be between 1 and " + MAX_BATCH + ", was " + size);
        }
        return size;
    }

    /**
     * Checks a configured capacity.
     *
     * @param capacity the most messages a mailbox may hold, 0 for no limit
     * @return the capacity
     * @throws IllegalArgumentException if negative
     */
    public static long requireCapacity(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be 0 (unbounded) or more, was " + capacity);
        }
        return capacity;
    }

    /**
     * Checks a configured maximum message size.
     *
     * @param bytes the maximum in bytes
     * @return the maximum
     * @throws IllegalArgumentException if outside 1 byte to 1 MiB
     */
    public static int requireMaxMessageBytes(int bytes) {
        if (bytes < 1 || bytes > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("maxMessageBytes must be between 1 and "
                    + MAX_MESSAGE_BYTES + " (1 MiB), was " + bytes);
        }
        return bytes;
    }

    /**
     * Checks one message attribute as SQS does: a name of 1 to 256 characters from
     * {@code A-Z a-z 0-9 _ - .}, not starting or ending with a period, without two periods in a row
     * and not starting with {@code AWS.} or {@code Amazon.} (any case); a non-empty value of
     * characters XML 1.0 allows.
     *
     * @param name  the attribute name
     * @param value the attribute value
     * @throws IllegalArgumentException naming what is wrong
     */
    public static void requireAttribute(String name, String value) {
        requireAttributeName(name);
        Objects.requireNonNull(value, () -> "value of attribute '" + name + "'");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("value of attribute '" + name + "' must not be empty");
        }
        requireSqsText(value, "value of attribute '" + name + "'");
    }

    /**
     * Checks a message attribute's name as SQS does: 1 to 256 characters from {@code A-Z a-z 0-9 _ - .}, not
     * starting or ending with a period, without two periods in a row and not starting with {@code AWS.} or
     * {@code Amazon.} (any case).
     *
     * @param name the attribute name
     * @return the name
     * @throws IllegalArgumentException naming what is wrong
     */
    public static String requireAttributeName(String name) {
        Objects.requireNonNull(name, "attribute name");
        if (name.isEmpty() || name.length() > MAX_ATTRIBUTE_NAME_LENGTH) {
            throw new IllegalArgumentException("attribute name must be 1 to "
                    + MAX_ATTRIBUTE_NAME_LENGTH + " characters, was " + name.length());
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '-' || c == '.';
            if (!ok) {
                throw new IllegalArgumentException("attribute name '" + name
                        + "' may only contain A-Z, a-z, 0-9, '_', '-' and '.', found '" + c + "'");
            }
        }
        if (name.startsWith(".") || name.endsWith(".") || name.contains("..")) {
            throw new IllegalArgumentException("attribute name '" + name
                    + "' must not start or end with '.' nor contain '..'");
        }
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("aws.") || lower.startsWith("amazon.")) {
            throw new IllegalArgumentException("attribute name '" + name
                    + "' must not start with 'AWS.' or 'Amazon.' (reserved)");
        }
        return name;
    }

    /**
     * Checks that text holds only characters SQS accepts: tab, newline, carriage return, and
     * {@code U+0020} to {@code U+10FFFF} except surrogates without a pair, {@code U+FFFE} and
     * {@code U+FFFF}.
     *
     * @param text the text
     * @param what its name, for the message
     * @throws IllegalArgumentException naming the first bad character's position
     */
    public static void requireSqsText(String text, String what) {
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            boolean ok = cp == 0x9 || cp == 0xA || cp == 0xD
                    || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD)
                    || (cp >= 0x10000 && cp <= 0x10FFFF);
            if (!ok) {
                throw new IllegalArgumentException(what + " contains a character SQS does not allow"
                        + " (U+" + String.format("%04X", cp) + ") at index " + i);
            }
            i += Character.charCount(cp);
        }
    }

    /**
     * The size of a message as SQS counts it: the body's bytes plus, for each attribute, the UTF-8
     * bytes of its name, of its value and of its data type ({@code String}).
     *
     * @param bodyBytes  the encoded body's length
     * @param attributes the message's plain string attributes
     * @return the size in bytes
     */
    public static int messageSize(int bodyBytes, Map<String, String> attributes) {
        if (attributes.isEmpty()) {
            return bodyBytes;
        }
        long size = bodyBytes;
        for (Map.Entry<String, String> e : attributes.entrySet()) {
            size += utf8Length(e.getKey()) + utf8Length(e.getValue()) + ATTRIBUTE_TYPE_BYTES;
        }
        return (int) Math.min(Integer.MAX_VALUE, size);
    }

    /**
     * The size of a message as SQS counts it: the body's bytes plus, for each attribute, the UTF-8 bytes of its
     * name and of its data type and its value's bytes (UTF-8 text, or the binary value itself). System
     * attributes do not count, as on SQS.
     *
     * @param bodyBytes the encoded body's length
     * @param options   the send's options, whose attributes count
     * @return the size in bytes
     */
    public static int messageSize(int bodyBytes, SendOptions options) {
        Map<String, AttributeValue> attributes = options.typedAttributes();
        if (attributes.isEmpty()) {
            return bodyBytes;
        }
        long size = bodyBytes;
        for (Map.Entry<String, AttributeValue> e : attributes.entrySet()) {
            size += utf8Length(e.getKey()) + (long) e.getValue().size();
        }
        return (int) Math.min(Integer.MAX_VALUE, size);
    }

    private static int utf8Length(String s) {
        int ascii = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return s.getBytes(StandardCharsets.UTF_8).length;
            }
            ascii++;
        }
        return ascii;
    }

    private static Duration requireRange(Duration value, Duration max, String what) {
        Objects.requireNonNull(value, what);
        if (value.isNegative() || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    what + " must be between 0 and " + human(max) + ", was " + value);
        }
        return value;
    }

    private static String human(Duration d) {
        if (d.toHours() > 0 && d.toMinutesPart() == 0) {
            return d.toHours() + (d.toHours() == 1 ? " hour" : " hours");
        }
        return d.toMinutes() + " minutes";
    }

    private static final java.util.regex.Pattern DEDUPLICATION_ID =
            java.util.regex.Pattern.compile("[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1," + MAX_DEDUPLICATION_ID_LENGTH + "}");

    /**
     * @param id a send deduplication id
     * @return the id
     * @throws IllegalArgumentException unless it is 1 to {@link #MAX_DEDUPLICATION_ID_LENGTH} characters
     *                                  from A-Z, a-z, 0-9 and ASCII punctuation
     */
    public static String requireDeduplicationId(String id) {
        java.util.Objects.requireNonNull(id, "deduplicationId");
        if (!DEDUPLICATION_ID.matcher(id).matches()) {
            throw new IllegalArgumentException("deduplication id must be 1 to " + MAX_DEDUPLICATION_ID_LENGTH
                    + " characters from A-Z, a-z, 0-9 and ASCII punctuation, was '"
                    + (id.length() > 200 ? id.substring(0, 200) + "..." : id) + "'");
        }
        return id;
    }

    private static final java.util.regex.Pattern GROUP_ID =
            java.util.regex.Pattern.compile("[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1," + MAX_GROUP_ID_LENGTH + "}");

    /**
     * Checks a message group id as SQS checks a {@code MessageGroupId}.
     *
     * @param groupId a message group id
     * @return the id
     * @throws IllegalArgumentException unless it is 1 to {@link #MAX_GROUP_ID_LENGTH} characters from A-Z, a-z,
     *                                  0-9 and the ASCII punctuation {@code !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~}
     */
    public static String requireGroupId(String groupId) {
        Objects.requireNonNull(groupId, "groupId");
        if (!GROUP_ID.matcher(groupId).matches()) {
            throw new IllegalArgumentException("message group id must be 1 to " + MAX_GROUP_ID_LENGTH
                    + " characters from A-Z, a-z, 0-9 and ASCII punctuation (SQS's MessageGroupId rule), was '"
                    + (groupId.length() > 200 ? groupId.substring(0, 200) + "...(" + groupId.length()
                    + " characters)" : groupId) + "'");
        }
        return groupId;
    }

    /**
     * Checks a send to a FIFO mailbox (see {@link MailboxCapabilities#fifo()}) the way every backend does,
     * before anything is stored: it needs a {@link SendOptions#withGroupId group id}, and it may not have a
     * per-message delay (SQS's FIFO rules).
     *
     * @param mailbox the mailbox's name, for the message
     * @param options the send's options
     * @return the options
     * @throws IllegalArgumentException naming the rule that the send breaks
     */
    public static SendOptions requireFifoSend(String mailbox, SendOptions options) {
        Objects.requireNonNull(options, "options");
        if (options.groupId() == null) {
            throw new IllegalArgumentException("mailbox '" + mailbox + "' is a FIFO mailbox: every send needs a"
                    + " message group id (SendOptions.withGroupId), which orders it within its group");
        }
        if (!options.delay().isZero()) {
            throw new IllegalArgumentException("mailbox '" + mailbox + "' is a FIFO mailbox: a send may not have"
                    + " a per-message delay (was " + options.delay() + "), since a delayed message would hold"
                    + " back the rest of its group");
        }
        return options;
    }

    /**
     * The noisy-tenant rule of fair standard mailboxes (see {@link MailboxCapabilities#fairness()}), SQS's
     * concurrency-share rule: a tenant is noisy while it has at least {@link #NOISY_TENANT_MIN_IN_FLIGHT}
     * messages in flight and they are more than {@link #NOISY_TENANT_MIN_SHARE_PERCENT}% of all the mailbox's
     * in-flight messages.
     *
     * @param tenantInFlight the tenant's messages in flight
     * @param totalInFlight  all the mailbox's messages in flight, the tenant's included
     * @return whether the tenant is noisy
     */
    public static boolean isNoisyTenant(long tenantInFlight, long totalInFlight) {
        return tenantInFlight >= NOISY_TENANT_MIN_IN_FLIGHT
                && tenantInFlight * 100 > totalInFlight * NOISY_TENANT_MIN_SHARE_PERCENT;
    }
}
