package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeasePolicy;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The bytes that travel between a coordinator client and the state machine through Ratis: reads
 * (get, list, renew) and their answers. Writes are {@link Command}s.
 */
public final class Wire {

    private static final byte GET = 1;
    private static final byte LIST = 2;
    private static final byte RENEW = 3;
    private static final byte POLICY = 4;
    private static final byte RENEW_BATCH = 5;
    private static final byte VIEW = 6;

    private Wire() {
    }

    /** A read the state machine answers without a log write. */
    public sealed interface Read {
        /** The latest lease of a mailbox. */
        record Get(String mailboxId) implements Read {
        }

        /** Every mailbox's latest lease, optionally only one namespace's ("" for all). */
        record ListLeases(String namespace) implements Read {
        }

        /** A heartbeat: answered on the leader, which pushes the lease's expiry back. */
        record Renew(String mailboxId, long leaseId, long epoch) implements Read {
        }

        /** Many heartbeats at once; answered with one outcome each, in order. */
        record RenewBatch(List<Renew> renewals) implements Read {
        }

        /** A namespace's lease policy. */
        record Policy(String namespace) implements Read {
        }

        /**
         * Nodes, partitions, namespaces or routes, answered with the bytes of the control plane's reply
         * message (see {@link Views}).
         *
         * @param kind what to read
         * @param arg  the namespace's name for {@link ViewKind#NAMESPACE}, else ""
         */
        record View(ViewKind kind, String arg) implements Read {
        }
    }

    /** What a {@link Read.View} reads. */
    public enum ViewKind {
        /** ListNodesReply. */
        NODES,
        /** PartitionMapReply. */
        PARTITIONS,
        /** NamespaceReply, or no bytes when there is no such namespace. */
        NAMESPACE,
        /** ListNamespacesReply. */
        NAMESPACES,
        /** RoutesReply. */
        ROUTES
    }

    /**
     * @param read the read
     * @return its bytes
     */
    public static byte[] encode(Read read) {
        return write(out -> {
            if (read instanceof Read.Get g) {
                out.writeByte(GET);
                out.writeUTF(g.mailboxId());
            } else if (read instanceof Read.ListLeases l) {
                out.writeByte(LIST);
                out.writeUTF(l.namespace());
            } else if (read instanceof Read.Renew r) {
                out.writeByte(RENEW);
                out.writeUTF(r.mailboxId());
                out.writeLong(r.leaseId());
                out.writeLong(r.epoch());
            } else if (read instanceof Read.Policy p) {
                out.writeByte(POLICY);
                out.writeUTF(p.namespace());
            } else if (read instanceof Read.View v) {
                out.writeByte(VIEW);
                out.writeByte(v.kind().ordinal());
                out.writeUTF(v.arg());
            } else if (read instanceof Read.RenewBatch b) {
                out.writeByte(RENEW_BATCH);
                out.writeInt(b.renewals().size());
                for (Read.Renew r : b.renewals()) {
                    out.writeUTF(r.mailboxId());
                    out.writeLong(r.leaseId());
                    out.writeLong(r.epoch());
                }
            }
        });
    }

    /**
     * @param bytes what {@link #encode(Read)} wrote
     * @return the read
     */
    public static Read decodeRead(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte tag = in.readByte();
            return switch (tag) {
                case GET -> new Read.Get(in.readUTF());
                case LIST -> new Read.ListLeases(in.readUTF());
                case RENEW -> new Read.Renew(in.readUTF(), in.readLong(), in.readLong());
                case POLICY -> new Read.Policy(in.readUTF());
                case RENEW_BATCH -> {
                    int n = in.readInt();
                    List<Read.Renew> list = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        list.add(new Read.Renew(in.readUTF(), in.readLong(), in.readLong()));
                    }
                    yield new Read.RenewBatch(list);
                }
                case VIEW -> {
                    int kind = in.readByte();
                    if (kind < 0 || kind >= ViewKind.values().length) {
                        throw new IllegalArgumentException("unknown view " + kind);
                    }
                    yield new Read.View(ViewKind.values()[kind], in.readUTF());
                }
                default -> throw new IllegalArgumentException("unknown read tag " + tag);
            };
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated read: " + e, e);
        }
    }

    /**
     * @param o an outcome
     * @return its bytes
     */
    public static byte[] encode(Outcome o) {
        return write(out -> writeOutcome(out, o));
    }

    private static void writeOutcome(DataOutputStream out, Outcome o) throws IOException {
        out.writeByte(o.code().ordinal());
        out.writeUTF(o.message());
        writeOptional(out, o.lease());
    }

    private static Outcome readOutcome(DataInputStream in) throws IOException {
        Outcome.Code code = Outcome.Code.values()[in.readByte()];
        String message = in.readUTF();
        return new Outcome(code, readOptional(in), message);
    }

    /**
     * @param bytes what {@link #encode(Outcome)} wrote
     * @return the outcome
     */
    public static Outcome decodeOutcome(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return readOutcome(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated outcome: " + e, e);
        }
    }

    /**
     * @param outcomes outcomes
     * @return their bytes
     */
    public static byte[] encodeOutcomes(List<Outcome> outcomes) {
        return write(out -> {
            out.writeInt(outcomes.size());
            for (Outcome o : outcomes) {
                writeOutcome(out, o);
            }
        });
    }

    /**
     * @param bytes what {@link #encodeOutcomes} wrote
     * @return the outcomes
     */
    public static List<Outcome> decodeOutcomes(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            List<Outcome> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(readOutcome(in));
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated outcomes: " + e, e);
        }
    }

    /**
     * @param leases leases
     * @return their bytes
     */
    public static byte[] encode(List<Lease> leases) {
        return write(out -> {
            out.writeInt(leases.size());
            for (Lease l : leases) {
                LeaseTable.writeLease(out, l);
            }
        });
    }

    /**
     * @param bytes what {@link #encode(List)} wrote
     * @return the leases
     */
    public static List<Lease> decodeLeases(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            List<Lease> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(LeaseTable.readLease(in));
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated lease list: " + e, e);
        }
    }

    /**
     * @param p a lease policy
     * @return its bytes
     */
    public static byte[] encode(LeasePolicy p) {
        return write(out -> {
            out.writeLong(p.ttl().toMillis());
            out.writeLong(p.heartbeatInterval().toMillis());
            out.writeLong(p.grace().toMillis());
        });
    }

    /**
     * @param bytes what {@link #encode(LeasePolicy)} wrote
     * @return the policy
     */
    public static LeasePolicy decodePolicy(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return new LeasePolicy(Duration.ofMillis(in.readLong()), Duration.ofMillis(in.readLong()),
                    Duration.ofMillis(in.readLong()));
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated policy: " + e, e);
        }
    }

    private static void writeOptional(DataOutputStream out, @Nullable Lease l) throws IOException {
        out.writeBoolean(l != null);
        if (l != null) {
            LeaseTable.writeLease(out, l);
        }
    }

    private static @Nullable Lease readOptional(DataInputStream in) throws IOException {
        return in.readBoolean() ? LeaseTable.readLease(in) : null;
    }

    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] write(Writer w) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            w.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
