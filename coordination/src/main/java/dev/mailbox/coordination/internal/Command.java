package dev.mailbox.coordination.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A change to the lease table, as it travels through the replicated log. Every command carries the
 * time the leader stamped on it ({@code now}, epoch millis): applying a command never reads a clock, so
 * every replica that applies the same log reaches the same state.
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
            return new Acquire(a.mailboxId(), a.runnerId(), a.nodeId(), a.address(), a.ttlMillis(), a.requestId(), now);
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
        }
        SetPolicy p = (SetPolicy) this;
        return new SetPolicy(p.namespace(), p.ttlMillis(), p.heartbeatMillis(), p.graceMillis(), now);
    }

    /**
     * Grants a mailbox to a runner; {@code ttlMillis} 0 means the namespace's TTL. {@code requestId}
     * is the same on every retry of one acquire call (empty: none), so a retry that lands twice
     * returns the same lease instead of starting a new incarnation.
     */
    record Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis, String requestId,
                   long now) implements Command {
        /** An acquire without a request id. */
        public Acquire(String mailboxId, String runnerId, String nodeId, String address, long ttlMillis, long now) {
            this(mailboxId, runnerId, nodeId, address, ttlMillis, "", now);
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

    /**
     * @return the command as bytes for the log
     */
    /** Registers (or re-registers) a mailbox node and acquires its registration lease. */
    record RegisterNode(String nodeId, String address, String region, String version, java.util.List<String> capabilities,
                        java.util.SortedMap<String, String> labels, long ttlMillis, String requestId, long now)
            implements Command {
        public RegisterNode {
            capabilities = java.util.List.copyOf(capabilities);
            labels = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(labels));
        }
    }

    /** Creates a namespace with its lease policy (all zero: the default policy). */
    record CreateNamespace(String name, long ttlMillis, long heartbeatMillis, long graceMillis,
                           java.util.SortedMap<String, String> labels, long now) implements Command {
        public CreateNamespace {
            labels = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(labels));
        }
    }

    default byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            if (this instanceof Acquire a) {
                out.writeByte(1);
                out.writeUTF(a.mailboxId());
                out.writeUTF(a.runnerId());
                out.writeUTF(a.nodeId());
                out.writeUTF(a.address());
                out.writeLong(a.ttlMillis());
                out.writeUTF(a.requestId());
            } else if (this instanceof Release r) {
                out.writeByte(2);
                out.writeUTF(r.mailboxId());
                out.writeLong(r.leaseId());
                out.writeLong(r.epoch());
            } else if (this instanceof Expire e) {
                out.writeByte(3);
                out.writeUTF(e.mailboxId());
                out.writeLong(e.leaseId());
                out.writeLong(e.epoch());
                out.writeLong(e.term());
            } else if (this instanceof Revoke r) {
                out.writeByte(4);
                out.writeUTF(r.mailboxId());
            } else if (this instanceof Reclaim r) {
                out.writeByte(5);
                out.writeUTF(r.mailboxId());
            } else if (this instanceof SetPolicy p) {
                out.writeByte(6);
                out.writeUTF(p.namespace());
                out.writeLong(p.ttlMillis());
                out.writeLong(p.heartbeatMillis());
                out.writeLong(p.graceMillis());
            } else if (this instanceof RegisterNode n) {
                out.writeByte(7);
                out.writeUTF(n.nodeId());
                out.writeUTF(n.address());
                out.writeUTF(n.region());
                out.writeUTF(n.version());
                out.writeInt(n.capabilities().size());
                for (String c : n.capabilities()) {
                    out.writeUTF(c);
                }
                writeLabels(out, n.labels());
                out.writeLong(n.ttlMillis());
                out.writeUTF(n.requestId());
            } else if (this instanceof CreateNamespace c) {
                out.writeByte(8);
                out.writeUTF(c.name());
                out.writeLong(c.ttlMillis());
                out.writeLong(c.heartbeatMillis());
                out.writeLong(c.graceMillis());
                writeLabels(out, c.labels());
            }
            out.writeLong(now());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * @param bytes what {@link #encode()} wrote
     * @return the command
     * @throws IllegalArgumentException if the bytes are not a command
     */
    static Command decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int tag = in.readByte();
            Command c = switch (tag) {
                case 1 -> {
                    String m = in.readUTF();
                    String r = in.readUTF();
                    String n = in.readUTF();
                    String a = in.readUTF();
                    long ttl = in.readLong();
                    String requestId = in.readUTF();
                    yield new Acquire(m, r, n, a, ttl, requestId, in.readLong());
                }
                case 2 -> {
                    String m = in.readUTF();
                    long id = in.readLong();
                    long epoch = in.readLong();
                    yield new Release(m, id, epoch, in.readLong());
                }
                case 3 -> {
                    String m = in.readUTF();
                    long id = in.readLong();
                    long epoch = in.readLong();
                    long term = in.readLong();
                    yield new Expire(m, id, epoch, term, in.readLong());
                }
                case 4 -> new Revoke(in.readUTF(), in.readLong());
                case 5 -> new Reclaim(in.readUTF(), in.readLong());
                case 6 -> {
                    String ns = in.readUTF();
                    long ttl = in.readLong();
                    long hb = in.readLong();
                    long grace = in.readLong();
                    yield new SetPolicy(ns, ttl, hb, grace, in.readLong());
                }
                case 7 -> {
                    String id = in.readUTF();
                    String address = in.readUTF();
                    String region = in.readUTF();
                    String version = in.readUTF();
                    int n = in.readInt();
                    java.util.List<String> caps = new java.util.ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        caps.add(in.readUTF());
                    }
                    java.util.SortedMap<String, String> labels = readLabels(in);
                    long ttl = in.readLong();
                    String requestId = in.readUTF();
                    yield new RegisterNode(id, address, region, version, caps, labels, ttl, requestId, in.readLong());
                }
                case 8 -> {
                    String name = in.readUTF();
                    long ttl = in.readLong();
                    long hb = in.readLong();
                    long grace = in.readLong();
                    java.util.SortedMap<String, String> labels = readLabels(in);
                    yield new CreateNamespace(name, ttl, hb, grace, labels, in.readLong());
                }
                default -> throw new IllegalArgumentException("unknown command tag " + tag);
            };
            if (in.available() != 0) {
                throw new IllegalArgumentException("trailing bytes after " + c);
            }
            return c;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated command: " + e, e);
        }
    }

    private static void writeLabels(DataOutputStream out, java.util.SortedMap<String, String> labels) throws IOException {
        out.writeInt(labels.size());
        for (java.util.Map.Entry<String, String> e : labels.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    private static java.util.SortedMap<String, String> readLabels(DataInputStream in) throws IOException {
        int n = in.readInt();
        java.util.SortedMap<String, String> labels = new java.util.TreeMap<>();
        for (int i = 0; i < n; i++) {
            labels.put(in.readUTF(), in.readUTF());
        }
        return labels;
    }
}
