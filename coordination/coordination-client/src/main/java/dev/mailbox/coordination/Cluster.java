package dev.mailbox.coordination;

import java.util.Map;

/**
 * The coordinator cluster itself: who leads, terms, applied indexes, members. Get it from
 * {@link CoordinationClient#cluster()}. Thread-safe.
 */
public interface Cluster {

    /** @return the status as the coordinator this client talks to sees it */
    ClusterStatus status();

    /**
     * Asks every endpoint for its status, once each, without retrying.
     *
     * @return endpoint to status, for the endpoints that answered
     */
    Map<String, ClusterStatus> statusOfEach();

    /**
     * Adds a coordinator to the cluster. It must already be running with an empty data dir, started with
     * the existing cluster state ({@code mailboxctl coordinator start --initial-cluster-state existing}); the
     * leader copies it the state before the new configuration takes effect, so this can take a while.
     *
     * @param nodeId      its id
     * @param raftAddress its Raft address, {@code host:port}
     * @return node id to Raft address of the configuration after the change
     * @throws CoordinationException ALREADY_EXISTS if it is a member, UNAVAILABLE if the change did not go
     *                               through (for example, the new coordinator is not running)
     */
    Map<String, String> addMember(String nodeId, String raftAddress);

    /**
     * Removes a coordinator from the cluster; it stops taking part (stop its process). The recovery for a
     * coordinator whose data was lost: remove it, empty its data dir, start it with the existing cluster
     * state, and add it back.
     *
     * @param nodeId its id
     * @return node id to Raft address of the configuration after the change
     * @throws CoordinationException NOT_FOUND if it is not a member, FAILED_PRECONDITION for the last member
     */
    Map<String, String> removeMember(String nodeId);

    /**
     * Exports the whole replicated state, for a backup, into a file: a snapshot in the coordinator's versioned
     * stored format (this version and later ones import it), whose end record carries the SHA-256 of the bytes
     * before it. The state is the one the coordinator this client talks to holds once it has applied everything the
     * leader had when asked (a linearizable read). It comes in chunks of at most
     * {@link CoordinationLimits#MAX_IMPORT_CHUNK_BYTES}, each checked against its CRC-32C and the whole against its
     * SHA-256, so neither end holds more than a chunk of it whatever its size; it is written beside {@code file},
     * synced, then renamed over it ({@code 0600}), so {@code file} holds the previous backup or this one, whole. An
     * export that breaks off starts again (from another coordinator) up to the client's attempts.
     *
     * @param file where to write the backup
     * @return what was written
     * @throws CoordinationException UNAVAILABLE without a leader; RESOURCE_EXHAUSTED-like refusals as UNAVAILABLE
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    Exported exportState(java.nio.file.Path file);

    /**
     * Imports a backup file into this cluster, which must be new: no namespace, policy, lease, node or queue yet.
     * The file is checked first (its framing, and its end record's SHA-256 where it has one), then sent in chunks
     * of at most {@link CoordinationLimits#MAX_IMPORT_CHUNK_BYTES}, each a replicated command that the members apply
     * into a staged state; the last makes it the cluster's, so every member gets all of it or none. Size does not
     * matter: memory on either side is a chunk (and the state itself, on the coordinators). An import that breaks
     * off (a lost connection, this process stopped) resumes where the cluster got to when this is called again with
     * the same file; an import of another file replaces one in progress. Importing the file that made the cluster's
     * state again is answered as done. Epochs carry over, so fencing never goes back; every active lease gets a
     * full TTL from the import, so a holder that still runs keeps its lease by renewing it, and others expire as
     * usual. Lease ids granted after the import may repeat ids from before it; epochs never do.
     *
     * @param file a backup {@link #exportState(java.nio.file.Path)} wrote
     * @return what the cluster holds after the import
     * @throws CoordinationException FAILED_PRECONDITION if the cluster already holds state; INVALID_ARGUMENT if the
     *                               file is not a snapshot the coordinators read
     * @throws IllegalArgumentException if the file is not a backup (damaged, truncated, another kind of file):
     *                                  nothing is sent
     */
    Imported importState(java.nio.file.Path file);

    /**
     * What an export wrote.
     *
     * @param bytes        the file's size
     * @param appliedIndex the log index the state is as of
     * @param sha256       the file's SHA-256, hex
     */
    record Exported(long bytes, long appliedIndex, String sha256) {
    }

    /**
     * What an imported state held.
     *
     * @param namespaces namespaces
     * @param leases     mailboxes with a lease
     * @param nodes      registered mailbox nodes
     * @param queues     queue records
     */
    record Imported(int namespaces, int leases, int nodes, int queues) {
    }
}
