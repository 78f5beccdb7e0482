package dev.mailbox.coordination.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.impl.MailboxLeaseProbe;

/** Tests' view of an in-JVM node's Raft leader lease. */
final class LeaderLeases {

    private LeaderLeases() {
    }

    /**
     * @param cluster a cluster with in-JVM nodes
     * @param id      one of them
     * @return whether it leads with a leader lease that holds now
     */
    static boolean holds(TestingCluster cluster, String id) {
        RaftServer server = cluster.node(id).raftServer();
        try {
            return MailboxLeaseProbe.holds(server.getDivision(server.getGroupIds().iterator().next()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Waits until a node left without a majority no longer holds a leader lease. A node that became leader just
     * before the others stopped (the last one to stop hands its leadership over) may answer leader reads from
     * its lease for a fraction of an election timeout after their last acknowledgement, as it should.
     *
     * @param cluster  a cluster with in-JVM nodes
     * @param id       the node left alone
     * @param patience how long to wait
     */
    static void awaitLapsed(TestingCluster cluster, String id, Duration patience) {
        TestingCluster.await(patience, () -> !holds(cluster, id), id + "'s leader lease, if it had one, lapses");
    }
}
