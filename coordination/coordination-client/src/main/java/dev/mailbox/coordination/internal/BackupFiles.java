package dev.mailbox.coordination.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.mailbox.coordination.proto.state.SnapshotHeader;
import dev.mailbox.coordination.proto.state.SnapshotRecord;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

/**
 * A backup file as a client sees it before sending it anywhere: its framing (a header, records, an end record that
 * counts them), the SHA-256 its end record carries against the bytes before it, and its own SHA-256, which names
 * the import. Read once from start to end, a record at a time: memory does not grow with the file. The records'
 * contents are the coordinators' to judge.
 */
final class BackupFiles {

    /** The largest record a backup holds: the coordinator's own bound (SnapshotParser). */
    static final int MAX_RECORD_BYTES = 1 << 20;

    private BackupFiles() {
    }

    /**
     * What a backup file is.
     *
     * @param size    its size in bytes
     * @param sha256  the hex SHA-256 of all of it: the import's id
     * @param records how many records it holds
     * @param format  the format its header names
     */
    record Checked(long size, String sha256, long records, int format) {
    }

    /**
     * @param file a backup file
     * @return what it is
     * @throws IllegalArgumentException naming the file and what is wrong with it: not a backup, damaged (its end
     *                                  record's SHA-256 does not match), truncated
     * @throws UncheckedIOException     if it cannot be read
     */
    static Checked check(Path file) {
        MessageDigest whole = sha256();
        MessageDigest beforeEnd = sha256();
        long size = 0;
        long records = 0;
        SnapshotHeader header = null;
        boolean ended = false;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            while (true) {
                int first = in.read();
                if (first < 0) {
                    break;
                }
                if (ended) {
                    throw bad(file, "it has bytes after its end record, at offset " + size);
                }
                if (size == 0 && first == 0) {
                    throw bad(file, "it is a format-0 backup (the encoding before format 1), which is imported whole "
                            + "by the coordinator version that wrote it, not in chunks: import it there and export it "
                            + "again");
                }
                long offset = size;
                // the length as the file has it (a varint), so that the digests cover the file's own bytes
                byte[] varint = new byte[5];
                int v = 0;
                long length = 0;
                for (int b = first; ; b = in.read()) {
                    if (b < 0) {
                        throw bad(file, "it ends in the middle of a record's length, at offset " + offset);
                    }
                    if (v == varint.length) {
                        throw bad(file, "it has a malformed record length at offset " + offset + ": it is damaged, or "
                                + "not a backup");
                    }
                    varint[v] = (byte) b;
                    length |= (long) (b & 0x7F) << (7 * v);
                    v++;
                    if ((b & 0x80) == 0) {
                        break;
                    }
                }
                if (length > MAX_RECORD_BYTES) {
                    throw bad(file, "it has a record of " + length + " bytes at offset " + offset + ": it is damaged, "
                            + "or not a backup");
                }
                byte[] framed = java.util.Arrays.copyOf(varint, v);
                byte[] body = in.readNBytes((int) length);
                if (body.length < length) {
                    throw bad(file, "it ends in the middle of a record at offset " + offset + " (truncated)");
                }
                size += framed.length + body.length;
                whole.update(framed);
                whole.update(body);
                try {
                    if (header == null) {
                        header = SnapshotHeader.parseFrom(body);
                        if (header.getFormat() < 1) {
                            throw bad(file, "its header names format " + header.getFormat() + ": it is not a backup");
                        }
                        beforeEnd.update(framed);
                        beforeEnd.update(body);
                        continue;
                    }
                    SnapshotRecord r = SnapshotRecord.parseFrom(body);
                    if (r.getRecordCase() == SnapshotRecord.RecordCase.END) {
                        if (r.getEnd().getRecords() != records) {
                            throw bad(file, "its end record counts " + r.getEnd().getRecords() + " records, but "
                                    + records + " came before it");
                        }
                        byte[] expected = r.getEnd().getSha256().toByteArray();
                        byte[] actual = beforeEnd.digest();
                        if (expected.length > 0 && !MessageDigest.isEqual(expected, actual)) {
                            throw bad(file, "it is damaged: its bytes have SHA-256 "
                                    + java.util.HexFormat.of().formatHex(actual) + " but its end record says "
                                    + java.util.HexFormat.of().formatHex(expected));
                        }
                        ended = true;
                        continue;
                    }
                } catch (InvalidProtocolBufferException e) {
                    throw bad(file, "its " + (header == null ? "header" : "record " + records) + " at offset "
                            + offset + " is unreadable (" + e.getMessage() + "): it is damaged, or not a backup");
                }
                beforeEnd.update(framed);
                beforeEnd.update(body);
                records++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(describe(file, e), e);
        }
        if (header == null) {
            throw bad(file, "it is empty");
        }
        if (!ended) {
            throw bad(file, "it ends after " + records + " records without its end record (truncated)");
        }
        return new Checked(size, java.util.HexFormat.of().formatHex(whole.digest()), records, header.getFormat());
    }

    /** @return what went wrong reading a file, for people: "no such file: F", not "F" alone */
    static String describe(Path file, IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file: " + file;
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied: " + file;
        }
        return "cannot read " + file + ": " + e;
    }

    private static IllegalArgumentException bad(Path file, String why) {
        return new IllegalArgumentException(file + " is not a backup this client can import: " + why);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
