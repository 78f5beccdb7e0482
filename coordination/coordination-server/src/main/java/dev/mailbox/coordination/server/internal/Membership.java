package dev.mailbox.coordination.server.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * What a coordinator with an empty data dir learns from the others before it decides how to start. A node
 * whose disk was lost or wiped must never vote as if it had never accepted anything: with one stale peer it
 * could form a majority that has never seen acknowledged writes (Raft assumes stable storage). So an empty
 * node asks the configured peers what the cluster looks like now, and the caller refuses to start when the
 * answer says the cluster exists and still counts this node as a member.
 */
public final class Membership {

    private Membership() {
    }

    /**
     * What one member said about the cluster.
     *
     * @param from      the member that answered
     * @param members   the node ids of the current configuration
     * @param committed its commit index
     */
    public record View(String from, Set<String> members, long committed) {
    }

    /**
     * Asks the other configured peers, one after another, for the group's configuration and commit index.
     *
     * @param groupId the cluster's group
     * @param peers      node id to Raft address, as configured
     * @param self    this node's id (not asked)
     * @param parameters the Ratis transport (TLS)
     * @return the first answer, or empty if no other peer answered
     */
    public static Optional<View> probe(RaftGroupId groupId, Map<String, InetSocketAddress> peers, String self,
                                       org.apache.ratis.conf.Parameters parameters) {
        for (Map.Entry<String, InetSocketAddress> p : peers.entrySet()) {
            if (p.getKey().equals(self)) {
                continue;
            }
            RaftPeer peer = RaftPeer.newBuilder().setId(p.getKey())
                    .setAddress(p.getValue().getHostString() + ":" + p.getValue().getPort()).build();
            RaftProperties props = new RaftProperties();
            RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(1, TimeUnit.SECONDS));
            try (RaftClient client = RaftClient.newBuilder().setProperties(props).setParameters(parameters)
                    .setRaftGroup(RaftGroup.valueOf(groupId, peer))
                    .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(2,
                            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS))).build()) {
                GroupInfoReply info = client.getGroupManagementApi(peer.getId()).info(groupId);
                if (!info.isSuccess()) {
                    continue;
                }
                Set<String> members = new LinkedHashSet<>();
                Optional<RaftConfigurationProto> conf = info.getConf();
                if (conf.isPresent() && conf.get().getPeersCount() > 0) {
                    for (RaftPeerProto member : conf.get().getPeersList()) {
                        members.add(member.getId().toStringUtf8());
                    }
                } else if (info.getGroup() != null) {
                    // the configuration is not always in the reply; the group the member runs holds the same peers
                    info.getGroup().getPeers().forEach(m -> members.add(m.getId().toString()));
                }
                long committed = info.getLogInfoProto() == null ? -1 : info.getLogInfoProto().getCommitted().getIndex();
                return Optional.of(new View(p.getKey(), members, committed));
            } catch (IOException | RuntimeException e) {
                // not answering (down, or not part of this group): ask the next
            }
        }
        return Optional.empty();
    }
}
