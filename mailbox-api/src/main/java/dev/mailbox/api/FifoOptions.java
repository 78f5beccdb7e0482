package dev.mailbox.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * What makes a mailbox a FIFO mailbox, chosen when it is created (each backend's builder takes these
 * options; a mailbox built without them is a standard mailbox, and a mailbox never changes kind). The
 * FIFO rules themselves are in {@link Mailbox} ("FIFO mailboxes") and {@link MailboxCapabilities#fifo()}.
 * The options here are about deduplication, as SQS's FIFO queue attributes are:
 * <ul>
 *   <li><b>Content-based deduplication</b> (default off, SQS's {@code ContentBasedDeduplication}): a send
 *       without a {@link SendOptions#withDeduplicationId deduplication id} is deduplicated under
 *       {@link #contentDeduplicationId(byte[])} of its encoded body, so the same body sent twice within
 *       {@link Limits#DEDUPLICATION_WINDOW} is stored once. An explicit id still wins. Attributes, delay
 *       and group id are not part of the content. Needs the encoded body, so a backend that keeps bodies by
 *       reference (an in-memory mailbox without a codec) refuses it when built.</li>
 *   <li><b>Deduplication scope</b> (default {@link DeduplicationScope#MAILBOX}, SQS's
 *       {@code DeduplicationScope}): whether an id is remembered for the whole mailbox or only within the
 *       message's group, so that two groups may use the same id for different messages.</li>
 * </ul>
 * The window is the same as on standard mailboxes, {@link Limits#DEDUPLICATION_WINDOW} (5 minutes, SQS's),
 * counted from the first send; a duplicate stores nothing and returns the first send's message id.
 * Immutable; every {@code with} method returns a new instance.
 *
 * <pre>{@code
 * InMemoryMailbox<Event> events = InMemoryMailbox.builder("events", codec)
 *         .fifo(FifoOptions.defaults().withContentBasedDeduplication(true))
 *         .build();
 * events.send(event, SendOptions.defaults().withGroupId("customer-42"));
 * }</pre>
 */
public final class FifoOptions {

    /** Where a FIFO mailbox remembers deduplication ids. */
    public enum DeduplicationScope {
        /** An id seen anywhere in the mailbox within the window makes a send a duplicate (SQS's {@code messageQueue}). */
        MAILBOX,
        /**
         * An id makes a send a duplicate only if it was seen within the window in the same message group
         * (SQS's {@code messageGroup}).
         */
        GROUP
    }

    private static final FifoOptions DEFAULTS = new FifoOptions(false, DeduplicationScope.MAILBOX);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

    private final boolean contentBasedDeduplication;
    private final DeduplicationScope deduplicationScope;

    private FifoOptions(boolean contentBasedDeduplication, DeduplicationScope deduplicationScope) {
        this.contentBasedDeduplication = contentBasedDeduplication;
        this.deduplicationScope = deduplicationScope;
    }

    /** @return a FIFO mailbox that deduplicates only sends with an explicit id, across the whole mailbox */
    public static FifoOptions defaults() {
        return DEFAULTS;
    }

    /**
     * @param enabled whether a send without a deduplication id is deduplicated by the SHA-256 of its
     *                encoded body
     * @return options with this setting
     */
    public FifoOptions withContentBasedDeduplication(boolean enabled) {
        return new FifoOptions(enabled, deduplicationScope);
    }

    /**
     * @param scope where deduplication ids are remembered
     * @return options with this scope
     */
    public FifoOptions withDeduplicationScope(DeduplicationScope scope) {
        return new FifoOptions(contentBasedDeduplication, Objects.requireNonNull(scope, "scope"));
    }

    /** @return whether sends without a deduplication id are deduplicated by content */
    public boolean contentBasedDeduplication() {
        return contentBasedDeduplication;
    }

    /** @return where deduplication ids are remembered */
    public DeduplicationScope deduplicationScope() {
        return deduplicationScope;
    }

    /**
     * The deduplication id content-based deduplication gives a send: the SHA-256 of the encoded body, as 64
     * lower-case hexadecimal digits (a valid {@link SendOptions#withDeduplicationId deduplication id}). Every
     * backend uses this one function, so a body sent through any of them gets the same id.
     *
     * @param encodedBody the body's bytes, as the mailbox's codec encoded them
     * @return the id
     */
    public static String contentDeduplicationId(byte[] encodedBody) {
        Objects.requireNonNull(encodedBody, "encodedBody");
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(encodedBody);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        byte[] hex = new byte[digest.length * 2];
        for (int i = 0; i < digest.length; i++) {
            hex[2 * i] = HEX[(digest[i] >> 4) & 15];
            hex[2 * i + 1] = HEX[digest[i] & 15];
        }
        return new String(hex, StandardCharsets.ISO_8859_1);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FifoOptions other && contentBasedDeduplication == other.contentBasedDeduplication
                && deduplicationScope == other.deduplicationScope;
    }

    @Override
    public int hashCode() {
        return Objects.hash(contentBasedDeduplication, deduplicationScope);
    }

    @Override
    public String toString() {
        return "FifoOptions[contentBasedDeduplication=" + contentBasedDeduplication + ", deduplicationScope="
                + deduplicationScope + "]";
    }
}
