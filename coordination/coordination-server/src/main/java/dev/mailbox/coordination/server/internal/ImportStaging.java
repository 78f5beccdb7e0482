package dev.mailbox.coordination.server.internal;

import com.google.protobuf.ByteString;
import java.io.IOException;

/**
 * A backup being imported into a new cluster, chunk by chunk (format 7): the records of its file parsed so far,
 * in a table of their own, and where the parse is. Part of the replicated state: every replica applies the same
 * chunks and holds the same staging, and a snapshot keeps it, so an import survives restarts and leader changes
 * and resumes where it got to. It holds the staged state and at most one record's bytes besides
 * ({@link SnapshotParser}).
 */
final class ImportStaging {

    private final String importId;
    private final LeaseTable staged = new LeaseTable();
    private final SnapshotParser parser;

    /** A new import: nothing received. */
    ImportStaging(String importId) {
        this.importId = importId;
        this.parser = new SnapshotParser(StateCodec.into(staged, false), false);
    }

    /** An import as a snapshot of the importing cluster kept it; its staged records follow. */
    ImportStaging(dev.mailbox.coordination.proto.state.ImportStaging p) {
        this.importId = p.getImportId();
        this.parser = new SnapshotParser(StateCodec.into(staged, false), p.hasSource() ? p.getSource() : null,
                p.getRecords(), p.getPending().toByteArray(), p.getEnded(), p.getReceived());
    }

    String importId() {
        return importId;
    }

    /** @return the staged state so far */
    LeaseTable staged() {
        return staged;
    }

    /** @return how many bytes of the file have been applied */
    long received() {
        return parser.consumed();
    }

    /** @return whether the file's end record has been parsed: the whole file is in */
    boolean ended() {
        return parser.ended();
    }

    /**
     * @param data the next bytes of the file
     * @throws IOException if they break the format
     */
    void feed(byte[] data) throws IOException {
        parser.feed(data, 0, data.length);
    }

    /** @return where the import is, for a snapshot (its staged records are written after it) */
    dev.mailbox.coordination.proto.state.ImportStaging toProto() {
        var b = dev.mailbox.coordination.proto.state.ImportStaging.newBuilder().setImportId(importId)
                .setReceived(parser.consumed()).setRecords(parser.records())
                .setPending(ByteString.copyFrom(parser.pending())).setEnded(parser.ended());
        if (parser.header() != null) {
            b.setSource(parser.header());
        }
        return b.build();
    }
}
