package dev.mailbox.coordination.server.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.mailbox.coordination.proto.state.SnapshotHeader;
import dev.mailbox.coordination.proto.state.SnapshotRecord;
import java.security.MessageDigest;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Reads a snapshot (format 1 on) from its bytes as they come, in pieces of any size, into a table: the header,
 * then each record as soon as all its bytes are in, then the end record. It holds no more than one record's bytes
 * ({@link #MAX_RECORD_BYTES}) besides the table it fills, so a snapshot of any size is read in bounded memory,
 * whether from a file or from an import's chunks, and an import's progress is a small state ({@link #pending},
 * {@link #records}, the header) that a snapshot of the importing cluster can keep.
 *
 * <p>Not thread-safe.
 */
final class SnapshotParser {

    /**
     * The largest record a snapshot may hold. The largest this version writes (a queue filled to every cap with
     * characters of three UTF-8 bytes) is some 160 KB: a length beyond this one says the bytes are damaged or are
     * not a snapshot, and is refused before anything is allocated for it.
     */
    static final int MAX_RECORD_BYTES = 1 << 20;

    /** What the records go into, and how records of a node's own snapshot are treated. */
    interface Target {
        /** @param record a record other than the end record, in file order */
        void record(SnapshotRecord record) throws java.io.IOException;

        /**
         * @param header the header
         * @param end    the end record (after the count was checked)
         */
        void end(SnapshotHeader header, dev.mailbox.coordination.proto.state.SnapshotEnd end)
                throws java.io.IOException;
    }

    private final Target target;
    private final @Nullable MessageDigest digest;
    private @Nullable SnapshotHeader header;
    private long records;
    private byte[] pending = new byte[0];
    private boolean ended;
    private long consumed;

    /**
     * @param target       where the records go
     * @param verifyDigest whether to check an end record's SHA-256 against the bytes before it (for a whole file
     *                     read in one go; an import's progress can not carry a running digest across restarts)
     */
    SnapshotParser(Target target, boolean verifyDigest) {
        this.target = target;
        this.digest = verifyDigest ? sha256() : null;
    }

    /**
     * Picks up an import where a snapshot of the importing cluster left it.
     */
    SnapshotParser(Target target, @Nullable SnapshotHeader header, long records, byte[] pending, boolean ended,
                   long consumed) {
        this.target = target;
        this.digest = null;
        this.header = header;
        this.records = records;
        this.pending = pending.clone();
        this.ended = ended;
        this.consumed = consumed;
    }

    /**
     * Reads the next bytes of the snapshot.
     *
     * @param bytes the bytes
     * @param off   where they start
     * @param len   how many
     * @throws java.io.IOException if they break the format (naming where), or come after the end record
     */
    void feed(byte[] bytes, int off, int len) throws java.io.IOException {
        if (len == 0) {
            return;
        }
        if (ended) {
            throw new java.io.IOException("snapshot has bytes after its end record, at offset " + consumed);
        }
        if (consumed == 0 && bytes[off] == 0) {
            // format 0 (hand-written, before format 1) starts with a zero: it is read whole by LegacyFormat
            throw new java.io.IOException("a format-0 snapshot (the encoding before format 1) cannot be read piece by "
                    + "piece; import it with a coordinator of the version that wrote it and export it again");
        }
        byte[] buf;
        int pos;
        int limit;
        if (pending.length == 0) {
            buf = bytes;
            pos = off;
            limit = off + len;
        } else {
            buf = Arrays.copyOf(pending, pending.length + len);
            System.arraycopy(bytes, off, buf, pending.length, len);
            pos = 0;
            limit = buf.length;
        }
        long start = consumed - pending.length; // the file offset of buf[pos]
        int base = pos;
        while (pos < limit) {
            long size = 0;
            int shift = 0;
            int p = pos;
            boolean complete = false;
            while (p < limit) {
                byte b = buf[p++];
                size |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    complete = true;
                    break;
                }
                shift += 7;
                if (shift > 28) {
                    throw new java.io.IOException("snapshot has a malformed record length at offset "
                            + (start + pos - base) + ": the file is damaged or not a snapshot");
                }
            }
            if (!complete) {
                break;
            }
            if (size > MAX_RECORD_BYTES) {
                throw new java.io.IOException("snapshot has a record of " + size + " bytes at offset "
                        + (start + pos - base) + ", more than any snapshot holds (" + MAX_RECORD_BYTES
                        + "): the file is damaged or not a snapshot");
            }
            if (limit - p < size) {
                break;
            }
            record(buf, pos, p, (int) size, start + pos - base);
            pos = p + (int) size;
            if (ended && pos < limit) {
                throw new java.io.IOException("snapshot has bytes after its end record, at offset "
                        + (start + pos - base));
            }
        }
        pending = Arrays.copyOfRange(buf, pos, limit);
        consumed += len;
    }

    private void record(byte[] buf, int framed, int body, int size, long offset) throws java.io.IOException {
        try {
            if (header == null) {
                SnapshotHeader h = SnapshotHeader.parseFrom(com.google.protobuf.CodedInputStream.newInstance(buf, body,
                        size));
                StateCodec.requireReadableSnapshot(h.getFormat());
                header = h;
                update(buf, framed, body + size - framed);
                return;
            }
            SnapshotRecord r = SnapshotRecord.parseFrom(com.google.protobuf.CodedInputStream.newInstance(buf, body,
                    size));
            if (r.getRecordCase() == SnapshotRecord.RecordCase.END) {
                if (r.getEnd().getRecords() != records) {
                    throw new java.io.IOException("snapshot end record counts " + r.getEnd().getRecords()
                            + " records, but " + records + " came before it");
                }
                if (digest != null && !r.getEnd().getSha256().isEmpty()) {
                    byte[] actual = digest.digest();
                    if (!MessageDigest.isEqual(actual, r.getEnd().getSha256().toByteArray())) {
                        throw new java.io.IOException("snapshot is corrupt: its bytes have SHA-256 "
                                + java.util.HexFormat.of().formatHex(actual) + " but its end record says "
                                + java.util.HexFormat.of().formatHex(r.getEnd().getSha256().toByteArray()));
                    }
                }
                ended = true;
                target.end(header, r.getEnd());
                return;
            }
            if (r.getRecordCase() == SnapshotRecord.RecordCase.RECORD_NOT_SET) {
                throw new java.io.IOException("snapshot of format " + header.getFormat() + " holds a record this "
                        + "coordinator does not know; it was written by a newer coordinator");
            }
            update(buf, framed, body + size - framed);
            target.record(r);
            records++;
        } catch (InvalidProtocolBufferException e) {
            throw new java.io.IOException("snapshot has an unreadable " + (header == null ? "header" : "record "
                    + records) + " at offset " + offset + ": " + e.getMessage(), e);
        }
    }

    private void update(byte[] buf, int off, int len) {
        if (digest != null) {
            digest.update(buf, off, len);
        }
    }

    /** @return whether the end record has been read */
    boolean ended() {
        return ended;
    }

    /** @return the header, once read */
    @Nullable SnapshotHeader header() {
        return header;
    }

    /** @return how many records (other than the end) have been read */
    long records() {
        return records;
    }

    /** @return the start of a record the bytes so far cut off */
    byte[] pending() {
        return pending.clone();
    }

    /** @return how many bytes were fed */
    long consumed() {
        return consumed;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
