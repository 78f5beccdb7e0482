package dev.mailbox.coordination.server.internal;

import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A change to the lease table, as the state machine applies it. On the log it is a
 * {@code LogEntry} (see {@link StateCodec}). Every command carries the time the leader stamped on it
 * ({@code now}, epoch millis): applying a command never reads a clock, so every replica that applies the
 * same log reaches the same state.
 */
public sealed interface Command {

    /** @return the leader's time when it proposed the command */
    long now();

    /**
     * @param now the leader's time
     * @return this command stamped with that time
     */
    default Command stamped(long now) {
        if (this instanceof Acquire a) {
            return new Acquire(a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), a.ttlMillis(), a.requestId(),
                    a.secretHash(), a.sequence(), now);
        } else if (this instanceof Release r) {
            return new Release(r.mailboxId(), r.leaseId(), r.epoch(), now);
        } else if (this instanceof Expire e) {
            return new Expire(e.mailboxId(), e.leaseId(), e.epoch(), e.term(), now);
        } else if (this instanceof Revoke r) {
            return new Revoke(r.mailboxId(), now);
        } else if (this instanceof Reclaim r) {
            return new Reclaim(r.mailboxId(), now);
        } else if (this instanceof RegisterNode n) {
            return new RegisterNode(n.nodeId(), n.address(), n.region(), n.version(), n.capabilities(), n.labels(),
                    n.ttlMillis(), n.requestId(), now);
        } else if (this instanceof CreateNamespace c) {
            return new CreateNamespace(c.name(), c.ttlMillis(), c.heartbeatMillis(), c.graceMillis(), c.labels(), now);
        } else if (this instanceof Restore r) {
            return new Restore(r.snapshot(), now);
        } else if (this instanceof CreateQueue c) {
            return new CreateQueue(c.queue(), now);
        } else if (this instanceof UpdateQueue u) {
            return new UpdateQueue(u.name(), u.setAttributes(), u.removedAttributes(), u.setTags(), u.removedTags(),
                    u.modifiedAtMillis(), now);
        } else if (this instanceof DeleteQueue d) {
            return new DeleteQueue(d.name(), now);
        } else if (this instanceof ImportChunk c) {
            return new ImportChunk(c.importId(), c.offset(), c.data(), c.crc32c(), c.last(), now);
        }
        SetPolicy p = (SetPolicy) this;
        return new SetPolicy(p.namespace(), p.ttlMillis(), p.heartbeatMillis(), p.graceMillis(), now);
    }

    /**
     * Grants a mailbox to a runner; {@code ttlMillis} 0 means the namespace's TTL. {@code requestId}
     * is the same on every retry of one acquire call (empty: none), so a retry that lands twice
     * returns the same lease instead of starting a new incarnation. {@code secretHash} is the SHA-256 of
     * the holder's secret (empty: a holder without one, as every holder before format 2). {@code sequence}
     * orders the holder's acquire calls (0: not given, as before format 6): of two calls by one holder, the
     * one with the lower sequence was made first.
     */
    record Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis, String requestId,
                   String secretHash, long sequence, long now) implements Command {
        /** An acquire without a call sequence. */
        public Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis,
                       String requestId, String secretHash, long now) {
            this(mailboxId, runnerId, nodeId, address, ttlMillis, requestId, secretHash, 0, now);
        }

        /** An acquire without a holder secret. */
        public Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis,
                       String requestId, long now) {
            this(mailboxId, runnerId, nodeId, address, ttlMillis, requestId, "", now);
        }

        /** An acquire without a request id or a holder secret. */
        public Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis, long now) {
            this(mailboxId, runnerId, nodeId, address, ttlMillis, "", "", now);
        }
    }

    /** The holder gives its lease up. */
    record Release(String mailboxId, long leaseId, long epoch, long now) implements Command {
    }

    /**
     * The leader of {@code term} saw no renewal within TTL + grace. Only valid if committed in an entry
     * of that same term: renewals go to the current leader only, so another leader's deadlines say
     * nothing about this one's.
     */
    record Expire(String mailboxId, long leaseId, long epoch, long term, long now) implements Command {
    }

    /** An operator takes the mailbox away: the epoch grows, the holder is fenced off. */
    record Revoke(String mailboxId, long now) implements Command {
    }

    /** An operator frees a revoked mailbox. */
    record Reclaim(String mailboxId, long now) implements Command {
    }

    /** Sets a namespace's lease policy. */
    record SetPolicy(String namespace, long ttlMillis, long heartbeatMillis, long graceMillis, long now)
            implements Command {
    }

    /** Registers (or re-registers) a mailbox node and acquires its registration lease. */
    record RegisterNode(String nodeId, String address, String region, String version, List<String> capabilities,
                        SortedMap<String, String> labels, long ttlMillis, String requestId, long now)
            implements Command {
        /** Copies the collections. */
        public RegisterNode {
            capabilities = List.copyOf(capabilities);
            labels = Collections.unmodifiableSortedMap(new TreeMap<>(labels));
        }
    }

    /** Creates a namespace with its lease policy (all zero: the default policy). */
    record CreateNamespace(String name, long ttlMillis, long heartbeatMillis, long graceMillis,
                           SortedMap<String, String> labels, long now) implements Command {
        /** Copies the labels. */
        public CreateNamespace {
            labels = Collections.unmodifiableSortedMap(new TreeMap<>(labels));
        }
    }

    /**
     * Replaces an empty state with an exported one (a backup): {@code snapshot} is a whole snapshot file of
     * any format this coordinator reads. Refused unless the state holds no namespace, policy, lease or node.
     */
    record Restore(com.google.protobuf.ByteString snapshot, long now) implements Command {
    }

    /**
     * Creates a queue record unless one of that name exists (format 4). Times 0 in the record take the
     * entry's leader time.
     */
    record CreateQueue(dev.mailbox.coordination.QueueInfo queue, long now) implements Command {
    }

    /**
     * Changes a queue record as it is when the entry applies (format 4): attributes and tags set, then removed.
     * The modified time moves when an attribute is set or removed; 0 takes the entry's leader time.
     */
    record UpdateQueue(String name, SortedMap<String, String> setAttributes, java.util.SortedSet<String> removedAttributes,
                       SortedMap<String, String> setTags, java.util.SortedSet<String> removedTags, long modifiedAtMillis,
                       long now) implements Command {
        /** Copies the collections, sorted: the same change encodes to the same bytes everywhere. */
        public UpdateQueue {
            setAttributes = Collections.unmodifiableSortedMap(new TreeMap<>(setAttributes));
            removedAttributes = Collections.unmodifiableSortedSet(new java.util.TreeSet<>(removedAttributes));
            setTags = Collections.unmodifiableSortedMap(new TreeMap<>(setTags));
            removedTags = Collections.unmodifiableSortedSet(new java.util.TreeSet<>(removedTags));
        }
    }

    /** Deletes a queue record (format 4). */
    record DeleteQueue(String name, long now) implements Command {
    }

    /**
     * One piece of a backup file being imported (format 7): see {@code ImportChunk} in coordinator_state.proto.
     *
     * @param importId the file's hex SHA-256
     * @param offset   where the piece starts in the file
     * @param data     the piece
     * @param crc32c   its CRC-32C
     * @param last     whether it ends the file
     */
    record ImportChunk(String importId, long offset, com.google.protobuf.ByteString data, int crc32c, boolean last,
                       long now) implements Command {
    }
}
