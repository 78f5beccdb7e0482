package dev.mailbox.api;

import java.time.Duration;
import java.util.Objects;

/**
 * What a backend guarantees where the contract lets backends differ. Every mailbox reports its own
 * through {@link Mailbox#capabilities()}, and the compatibility kit reads them instead of skipping
 * tests: a backend that does not claim an ordering is still tested, against the weaker rule, and the
 * groups of tests for an optional feature (FIFO mailboxes, fairness, late acknowledgement) run wherever a
 * mailbox declares it.
 *
 * <p>Immutable; build one with {@link #builder()}.
 */
public final class MailboxCapabilities {

    private final boolean exactCount;
    private final boolean fifo;
    private final boolean detectsStaleAcknowledge;
    private final boolean capacity;
    private final boolean atomicDeadLetter;
    private final int maxMessageBytes;
    private final Duration timeGranularity;
    private final boolean extendedNames;
    private final boolean atomicFencing;
    private final boolean durableDeduplication;
    private final boolean visibilityOrder;
    private final boolean fairness;
    private final boolean lateAcknowledge;
    private final boolean holdsRuns;
    private final boolean sharedDeliveryState;
    private final boolean contentBasedDeduplication;
    private final boolean systemAttributes;

    private MailboxCapabilities(Builder b) {
        this.exactCount = b.exactCount;
        this.fifo = b.fifo;
        this.detectsStaleAcknowledge = b.detectsStaleAcknowledge;
        this.capacity = b.capacity;
        this.atomicDeadLetter = b.atomicDeadLetter;
        this.maxMessageBytes = b.maxMessageBytes;
        this.timeGranularity = b.timeGranularity;
        this.extendedNames = b.extendedNames;
        this.atomicFencing = b.atomicFencing;
        this.durableDeduplication = b.durableDeduplication;
        this.visibilityOrder = b.visibilityOrder;
        this.fairness = b.fairness;
        this.lateAcknowledge = b.lateAcknowledge;
        this.holdsRuns = b.holdsRuns;
        this.sharedDeliveryState = b.sharedDeliveryState;
        this.contentBasedDeduplication = b.contentBasedDeduplication;
        this.systemAttributes = b.systemAttributes;
    }

    /** @return a builder starting from the weakest guarantees */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @return {@code true} if {@link Mailbox#approximateCount()} and {@link Mailbox#purge()} are exact
     *         at the moment they return; {@code false} if they may lag (SQS)
     */
    public boolean exactCount() {
        return exactCount;
    }

    /**
     * Whether this mailbox is a FIFO mailbox: created so (see {@link FifoOptions}), with every rule of
     * {@link Mailbox}'s "FIFO mailboxes": a group id on every send and no per-message delay; per-group send
     * order; no later message of a group delivered while an earlier one is in flight; a nacked or lapsed
     * message back at its group's head; the head dead-lettered after {@code maxReceiveCount} deliveries into a
     * FIFO dead-letter mailbox, unblocking its group; groups independent of each other; deduplication by id
     * or content within {@link Limits#DEDUPLICATION_WINDOW}, per mailbox or per group. A standard mailbox
     * answers {@code false}.
     *
     * <p>Declared by the FIFO mailboxes of the in-memory and Redis backends, by {@code SqsMailbox} on an SQS FIFO
     * queue (see {@link #holdsRuns()} for the one rule that depends on the SQS server), and by a remote mailbox
     * through a node ({@code RemoteMailbox}) whose hosted mailbox declares it.
     *
     * @return whether this is a FIFO mailbox
     */
    public boolean fifo() {
        return fifo;
    }

    /**
     * @return {@code true} if this (standard) mailbox delivers messages in the order they became visible (send
     *         order for messages sent without delay), except where {@link #fairness()} puts a noisy tenant's
     *         messages behind others; {@code false} for best-effort order (SQS). A FIFO mailbox's order is
     *         {@link #fifo()}'s, per group.
     */
    public boolean visibilityOrder() {
        return visibilityOrder;
    }

    /**
     * Whether this standard mailbox is fair between tenants (the groups of {@link SendOptions#withGroupId}):
     * while a tenant is noisy ({@link Limits#isNoisyTenant}) receives prefer the other tenants' messages, as
     * {@link Mailbox}'s "Fair standard mailboxes" says, and {@link Message#groupId()} returns the tenant. When
     * false, group ids sent to a standard mailbox are accepted and ignored. A FIFO mailbox answers
     * {@code false}: its groups are ordered, not balanced.
     *
     * <p>Declared today by the in-memory and Redis backends, and by a remote mailbox through a node whose hosted
     * mailbox declares it. {@code SqsMailbox} never does: it sends the group id as the MessageGroupId, with which AWS's
     * standard queues are fair by AWS's own measure (fair queues), which the API does not show and ElasticMQ
     * does not have.
     *
     * @return whether receives prefer quiet tenants over noisy ones
     */
    public boolean fairness() {
        return fairness;
    }

    /**
     * Whether the most recent delivery's receipt handle still acknowledges (deletes) a message after its
     * visibility timeout ended, as long as the message has not been delivered again, nacked or deleted since,
     * as on SQS's standard queues. A handle superseded by a later delivery is refused at once either way, and nack
     * and extend always need the message in flight. See {@link Message}. On a {@link #fifo() FIFO} mailbox the
     * lapsed message is back at its group's head, and a late acknowledgement removes it from there, so the group
     * goes on with its next message. SQS's FIFO queues expire a receipt handle with its visibility timeout, so an
     * SQS FIFO mailbox answers {@code false}.
     *
     * @return whether a late acknowledgement by the most recent handle deletes the message
     */
    public boolean lateAcknowledge() {
        return lateAcknowledge;
    }

    /**
     * Whether this FIFO mailbox holds a group until every message of a run (consecutive messages of the group
     * handed out by one receive) is settled, even when one of them comes back early, nacked or with its
     * visibility timeout ended, while others of the run are still in flight: it is delivered again only once the
     * rest of its run is acknowledged or back too ({@link Mailbox}'s "FIFO mailboxes", rule 3). SQS documents
     * this ("inflight messages block delivery of available messages within the same message group").
     *
     * <p>When false, the rest of {@link #fifo()} holds and the group waits for its head only: a message that
     * comes back is at its group's head and may be delivered again while later messages of its run are still
     * in flight. No message is ever delivered while an earlier message of its group is in flight from another
     * receive, so per-group order holds either way; what is lost is that the run's later messages may be
     * processed at the same time as a second delivery of an earlier one. ElasticMQ behaves so, and
     * {@code SqsMailbox}, which cannot tell which server it talks to, declares false. A standard mailbox
     * answers {@code false}.
     *
     * @return whether a message that comes back from a run waits for the rest of its run
     */
    public boolean holdsRuns() {
        return holdsRuns;
    }

    /**
     * Whether what happens to a delivery through one mailbox object (an acknowledgement, a nack, an extension)
     * is known to every other object on the same mailbox, in any process, because it is kept with the messages:
     * a handle nacked or acknowledged through one object is refused through any other (memory, Redis). When
     * false (SQS), an object refuses what it knows from its own calls and what the server tells it: SQS refuses
     * a handle whose message was deleted, but to SQS a nack with a timeout is a visibility change like an
     * extension, so another object still accepts an extend or a nack of a delivery nacked through this one.
     * Settle a delivery through the object that received it, or through one object per mailbox (a node).
     *
     * @return whether every object on a mailbox refuses a delivery settled through another
     */
    public boolean sharedDeliveryState() {
        return sharedDeliveryState;
    }

    /**
     * Whether this FIFO mailbox deduplicates a send that has no {@link SendOptions#withDeduplicationId
     * deduplication id} by its content ({@link FifoOptions#withContentBasedDeduplication}, SQS's
     * {@code ContentBasedDeduplication}): two sends of the same encoded body within
     * {@link Limits#DEDUPLICATION_WINDOW} store one message. A caller relies on it both ways: with it, equal
     * bodies are one message; without it, a retried send needs an id to be stored once. Whoever passes sends on
     * (a mailbox node) reads it to tell which. A standard mailbox answers {@code false}.
     *
     * @return whether a send without a deduplication id is deduplicated by its body
     */
    public boolean contentBasedDeduplication() {
        return contentBasedDeduplication;
    }

    /**
     * Whether the mailbox keeps a message's system attributes ({@link SendOptions#withSystemAttribute}) and
     * returns them as {@link Message#systemAttributes()}. The in-memory and Redis backends do; on SQS a message's
     * system attributes are SQS's own ({@code SqsMailbox} sends only {@code AWSTraceHeader}).
     *
     * @return whether system attributes sent come back
     */
    public boolean systemAttributes() {
        return systemAttributes;
    }

    /**
     * @return {@code true} if acknowledging with a stale receipt handle throws
     *         {@link ReceiptHandleExpiredException}; {@code false} if the backend cannot tell and the
     *         acknowledge silently does nothing (SQS accepts a DeleteMessage with an old handle). A
     *         stale handle never deletes a redelivered message on any backend.
     */
    public boolean detectsStaleAcknowledge() {
        return detectsStaleAcknowledge;
    }

    /**
     * @return {@code true} if a mailbox can be given a capacity and throws {@link MailboxFullException}; when
     *         false, asking for a capacity when the mailbox is made throws {@link IllegalArgumentException} and
     *         no send is refused for being full (SQS)
     */
    public boolean capacity() {
        return capacity;
    }

    /**
     * @return {@code true} if moving a message to its dead-letter mailbox is atomic: it is never in
     *         both mailboxes, nor in neither, even if a process dies
     */
    public boolean atomicDeadLetter() {
        return atomicDeadLetter;
    }

    /** @return the largest message (body plus attributes) this mailbox accepts, in bytes */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /**
     * @return the finest time step the backend honours for delays and visibility timeouts; shorter
     *         durations are rounded up to it (one second on SQS)
     */
    public Duration timeGranularity() {
        return timeGranularity;
    }

    /**
     * @return whether mailbox names may also hold '.' and '@' and run to
     *         {@link Limits#MAX_EXTENDED_NAME_LENGTH} characters (see {@link Limits#mailboxNameProblem}); when
     *         false, only portable names work (SQS)
     */
    public boolean extendedNames() {
        return extendedNames;
    }

    /**
     * @return whether a {@link Mailbox#fenced fenced} view's fence is stored with the messages and checked
     *         atomically with each call, so that it holds across processes (memory, Redis); when false,
     *         the mailbox object keeps the fence and only calls through that object are fenced (SQS)
     */
    public boolean atomicFencing() {
        return atomicFencing;
    }

    /**
     * @return whether {@link SendOptions#withDeduplicationId send deduplication ids} are remembered with the
     *         messages, so that a send retried from another process or after a restart is still stored
     *         once (memory within the process, Redis, SQS FIFO queues); when false, the mailbox object
     *         remembers them, for the same {@link Limits#DEDUPLICATION_WINDOW}, only as long as it lives
     */
    public boolean durableDeduplication() {
        return durableDeduplication;
    }

    /** Capabilities are values: two with the same guarantees are equal, whichever mailbox reported them. */
    @Override
    public boolean equals(Object o) {
        return o instanceof MailboxCapabilities c && exactCount == c.exactCount && fifo == c.fifo
                && detectsStaleAcknowledge == c.detectsStaleAcknowledge && capacity == c.capacity
                && atomicDeadLetter == c.atomicDeadLetter && maxMessageBytes == c.maxMessageBytes
                && timeGranularity.equals(c.timeGranularity) && extendedNames == c.extendedNames
                && atomicFencing == c.atomicFencing && durableDeduplication == c.durableDeduplication
                && visibilityOrder == c.visibilityOrder && fairness == c.fairness
                && lateAcknowledge == c.lateAcknowledge && holdsRuns == c.holdsRuns
                && sharedDeliveryState == c.sharedDeliveryState
                && contentBasedDeduplication == c.contentBasedDeduplication
                && systemAttributes == c.systemAttributes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(exactCount, fifo, detectsStaleAcknowledge, capacity, atomicDeadLetter, maxMessageBytes,
                timeGranularity, extendedNames, atomicFencing, durableDeduplication, visibilityOrder, fairness,
                lateAcknowledge, holdsRuns, sharedDeliveryState, contentBasedDeduplication, systemAttributes);
    }

    @Override
    public String toString() {
        return "MailboxCapabilities[exactCount=" + exactCount + ", fifo=" + fifo
                + ", detectsStaleAcknowledge=" + detectsStaleAcknowledge + ", capacity=" + capacity
                + ", atomicDeadLetter=" + atomicDeadLetter + ", maxMessageBytes=" + maxMessageBytes
                + ", timeGranularity=" + timeGranularity + ", extendedNames=" + extendedNames
                + ", atomicFencing=" + atomicFencing + ", durableDeduplication=" + durableDeduplication
                + ", visibilityOrder=" + visibilityOrder + ", fairness=" + fairness
                + ", lateAcknowledge=" + lateAcknowledge + ", holdsRuns=" + holdsRuns
                + ", sharedDeliveryState=" + sharedDeliveryState
                + ", contentBasedDeduplication=" + contentBasedDeduplication
                + ", systemAttributes=" + systemAttributes + "]";
    }

    /** Builds {@link MailboxCapabilities}. Not thread-safe. */
    public static final class Builder {
        private boolean exactCount;
        private boolean fifo;
        private boolean detectsStaleAcknowledge;
        private boolean capacity;
        private boolean atomicDeadLetter;
        private int maxMessageBytes = Limits.DEFAULT_MAX_MESSAGE_BYTES;
        private Duration timeGranularity = Duration.ofMillis(1);
        private boolean extendedNames;
        private boolean atomicFencing;
        private boolean durableDeduplication;
        private boolean visibilityOrder;
        private boolean fairness;
        private boolean lateAcknowledge;
        private boolean holdsRuns;
        private boolean sharedDeliveryState;
        private boolean contentBasedDeduplication;
        private boolean systemAttributes;

        private Builder() {
        }

        /**
         * @param value see {@link MailboxCapabilities#exactCount()}
         * @return this builder
         */
        public Builder exactCount(boolean value) {
            this.exactCount = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#fifo()}
         * @return this builder
         */
        public Builder fifo(boolean value) {
            this.fifo = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#detectsStaleAcknowledge()}
         * @return this builder
         */
        public Builder detectsStaleAcknowledge(boolean value) {
            this.detectsStaleAcknowledge = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#capacity()}
         * @return this builder
         */
        public Builder capacity(boolean value) {
            this.capacity = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#atomicDeadLetter()}
         * @return this builder
         */
        public Builder atomicDeadLetter(boolean value) {
            this.atomicDeadLetter = value;
            return this;
        }

        /**
         * @param bytes see {@link MailboxCapabilities#maxMessageBytes()}, 1 byte to 1 MiB
         * @return this builder
         */
        public Builder maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param granularity see {@link MailboxCapabilities#timeGranularity()}, positive
         * @return this builder
         */
        public Builder timeGranularity(Duration granularity) {
            Objects.requireNonNull(granularity, "timeGranularity");
            if (granularity.isNegative() || granularity.isZero()) {
                throw new IllegalArgumentException("timeGranularity must be positive, was " + granularity);
            }
            this.timeGranularity = granularity;
            return this;
        }

        /**
         * @param value whether names may hold '.' and '@' (see {@link MailboxCapabilities#extendedNames()})
         * @return this builder
         */
        public Builder extendedNames(boolean value) {
            this.extendedNames = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#atomicFencing()}
         * @return this builder
         */
        public Builder atomicFencing(boolean value) {
            this.atomicFencing = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#durableDeduplication()}
         * @return this builder
         */
        public Builder durableDeduplication(boolean value) {
            this.durableDeduplication = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#visibilityOrder()}
         * @return this builder
         */
        public Builder visibilityOrder(boolean value) {
            this.visibilityOrder = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#fairness()}
         * @return this builder
         */
        public Builder fairness(boolean value) {
            this.fairness = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#lateAcknowledge()}
         * @return this builder
         */
        public Builder lateAcknowledge(boolean value) {
            this.lateAcknowledge = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#holdsRuns()}; only with {@code fifo}
         * @return this builder
         */
        public Builder holdsRuns(boolean value) {
            this.holdsRuns = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#sharedDeliveryState()}
         * @return this builder
         */
        public Builder sharedDeliveryState(boolean value) {
            this.sharedDeliveryState = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#contentBasedDeduplication()}; only with {@code fifo}
         * @return this builder
         */
        public Builder contentBasedDeduplication(boolean value) {
            this.contentBasedDeduplication = value;
            return this;
        }

        /**
         * @param value see {@link MailboxCapabilities#systemAttributes()}
         * @return this builder
         */
        public Builder systemAttributes(boolean value) {
            this.systemAttributes = value;
            return this;
        }

        /**
         * @return the capabilities
         * @throws IllegalArgumentException if both {@code fifo} and {@code fairness} or {@code visibilityOrder}
         *                                  are set: those describe standard mailboxes; or {@code holdsRuns} or
         *                                  {@code contentBasedDeduplication} without {@code fifo}
         */
        public MailboxCapabilities build() {
            if (fifo && (fairness || visibilityOrder)) {
                throw new IllegalArgumentException("a FIFO mailbox's order is per group: it declares neither"
                        + " fairness nor visibilityOrder, which describe standard mailboxes");
            }
            if (holdsRuns && !fifo) {
                throw new IllegalArgumentException("holdsRuns describes FIFO mailboxes: a standard mailbox has no runs");
            }
            if (contentBasedDeduplication && !fifo) {
                throw new IllegalArgumentException("content-based deduplication is a property of FIFO mailboxes"
                        + " only: declare it together with fifo");
            }
            return new MailboxCapabilities(this);
        }
    }
}
