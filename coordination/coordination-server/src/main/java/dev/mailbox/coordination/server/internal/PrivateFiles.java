package dev.mailbox.coordination.server.internal;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A coordinator's data dir holds the whole replicated state: lease holders' secret hashes, every queue's
 * attributes, the nodes' addresses. It is kept to its owner: the dir and every dir in it {@code 0700}, every file
 * {@code 0600} (issue 30, finding 7). Files this code writes (snapshots, exports) are created so; Ratis creates its
 * log segments and metadata with the process's umask, so those are tightened right after the Raft server starts,
 * after each snapshot and every second or so: inside a {@code 0700} dir nobody else can reach them meanwhile. On a
 * file system without POSIX permissions (Windows) this does nothing.
 */
public final class PrivateFiles {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PrivateFiles.class);
    /** {@code 0700}. */
    public static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
    /** {@code 0600}. */
    public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
    private static final boolean POSIX = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

    private PrivateFiles() {
    }

    /**
     * @return the attributes that create a file {@code 0600} (none without POSIX permissions)
     */
    public static FileAttribute<?>[] file() {
        return POSIX ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(FILE)} : new FileAttribute<?>[0];
    }

    /**
     * Creates a dir (and any missing parents) {@code 0700}, or tightens one that exists to {@code 0700}.
     *
     * @param dir the dir
     * @return it
     * @throws IOException if it cannot be created or its permissions set
     */
    public static Path directory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            if (POSIX) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(DIR));
            } else {
                Files.createDirectories(dir);
            }
            restrict(dir, DIR); // the umask may have narrowed what was asked, never widened it; still, exactly 0700
            return dir;
        }
        try {
            restrict(dir, DIR);
        } catch (IOException e) {
            // a dir this process does not own (a volume mounted for it, say): it can still be used, but say so
            LOG.warn("cannot make {} 0700 ({}): other users may be able to read what is in it", dir, e.toString());
        }
        return dir;
    }

    /**
     * Tightens a tree to its owner: dirs {@code 0700}, files {@code 0600}. Files that vanish meanwhile (a log
     * segment renamed, a snapshot deleted) are skipped.
     *
     * @param root the tree
     */
    public static void tighten(Path root) {
        if (!POSIX || !Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> all = Files.walk(root)) {
            all.forEach(p -> {
                try {
                    restrict(p, Files.isDirectory(p) ? DIR : FILE);
                } catch (IOException | RuntimeException e) {
                    // gone meanwhile, or not ours: the next pass sees it again
                }
            });
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot tighten the permissions under {}", root, e);
        }
    }

    /**
     * @param file a file
     * @throws IOException if its permissions cannot be set
     */
    public static void restrictFile(Path file) throws IOException {
        restrict(file, FILE);
    }

    private static void restrict(Path p, Set<PosixFilePermission> wanted) throws IOException {
        if (POSIX && !Files.isSymbolicLink(p) && !Files.getPosixFilePermissions(p).equals(wanted)) {
            Files.setPosixFilePermissions(p, wanted);
        }
    }
}
