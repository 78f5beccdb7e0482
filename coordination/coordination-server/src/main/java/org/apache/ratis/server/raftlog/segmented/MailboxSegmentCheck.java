package org.apache.ratis.server.raftlog.segmented;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.ratis.util.SizeInBytes;
import org.jspecify.annotations.Nullable;

/**
 * Finds the Raft log segment that a node cannot read. When Ratis fails to load its log it says only "Failed to
 * initRaftLog" and why (a checksum mismatch, say), never which file: an operator is left to guess which of a data
 * dir's files is damaged. This reads each segment as Ratis does, in index order, and names the first that does
 * not read back. It lives in Ratis's package because the segment reader is package-private there (Ratis 3.1.x,
 * pinned in the build, so a change there fails compilation here).
 */
public final class MailboxSegmentCheck {

    private MailboxSegmentCheck() {
    }

    /**
     * A segment that does not read back.
     *
     * @param file the segment
     * @param why  what reading it said
     */
    public record Damage(Path file, String why) {
    }

    /**
     * @param logDir         a Raft storage's {@code current} dir, where the segments are
     * @param maxEntryBytes  the largest entry the log may hold
     * @return the first segment, in index order, whose entries do not all read back, or null if every one does
     */
    public static @Nullable Damage firstDamaged(Path logDir, long maxEntryBytes) {
        List<LogSegmentPath> segments = new ArrayList<>();
        try (Stream<Path> files = Files.list(logDir)) {
            files.map(LogSegmentPath::matchLogSegment).filter(java.util.Objects::nonNull).forEach(segments::add);
        } catch (IOException e) {
            return new Damage(logDir, "cannot list it: " + e.getMessage());
        }
        segments.sort(Comparator.comparing(LogSegmentPath::getStartEnd));
        for (LogSegmentPath segment : segments) {
            try (SegmentedRaftLogInputStream in = new SegmentedRaftLogInputStream(segment.getPath().toFile(),
                    segment.getStartEnd(), SizeInBytes.valueOf(maxEntryBytes), null)) {
                while (in.nextEntry() != null) {
                    // read (and checksum) every entry; only a failure matters
                }
            } catch (IOException | RuntimeException e) {
                return new Damage(segment.getPath(), String.valueOf(e.getMessage() != null ? e.getMessage() : e));
            }
        }
        return null;
    }
}
