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
     * Exports the whole replicated state, as the leader holds it now, for a backup. The bytes are a
     * snapshot in the coordinator's versioned stored format: this version and later ones import them.
     *
     * @return the state
     * @throws CoordinationException UNAVAILABLE without a leader
     */
    byte[] exportState();

    /**
     * Imports an exported state (a backup) into this cluster, which must be new: no namespace, policy,
     * lease or node yet. The import is one replicated command, so every member gets all of it or none.
     * Epochs carry over, so fencing never goes back; every active lease gets a full TTL from the import,
     * so a holder that still runs keeps its lease by renewing it, and others expire as usual. Lease ids
     * granted after the import may repeat ids from before it; epochs never do.
     *
     * @param state what {@link #exportState()} returned, at most
     *              {@link CoordinationLimits#MAX_EXPORTED_STATE_BYTES} bytes
     * @return what the imported state held
     * @throws CoordinationException FAILED_PRECONDITION if the cluster already holds state
     * @throws IllegalArgumentException if the bytes are empty or too large; INVALID_ARGUMENT (as a
     *                                  CoordinationException) if they are not a snapshot this version reads
     */
    Imported importState(byte[] state);

    /**
     * What an imported state held.
     *
     * @param namespaces namespaces
     * @param leases     mailboxes with a lease (in any state)
     * @param nodes      registered mailbox nodes
     */
    record Imported(int namespaces, int leases, int nodes) {
    }
}
