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
     * @param from          the member that answered
     * @param members       the node ids of the current configuration
     * @param committed     its commit index
     * @param addresses     node id to Raft address of the current configuration, where the answer said
     * @param selfCommitted the commit index the answering member last heard the asking node report (it took part
     *                      in the cluster up to there), or -1 if it has heard none from it
     */
    public record View(String from, Set<String> members, long committed, Map<String, String> addresses,
                       long selfCommitted) {
        /** Copies the addresses. */
        public View {
            members = Set.copyOf(members);
            addresses = Map.copyOf(addresses);
        }

        /**
         * @return whether the cluster has heard from the asking node: it ran as a member and acknowledged entries,
         *         so an empty data dir means its data was lost (a member that never ran has reported nothing)
         */
        public boolean heardFromSelf() {
            return selfCommitted > 0;
        }
    }

    /**
     * Asks the other configured peers, one after another, for the group's configuration and commit index, and what
     * each last heard of this node.
     *
     * @param groupId the cluster's group
     * @param peers      node id to Raft address, as configured
     * @param self    this node's id (not asked)
     * @param parameters the Ratis transport (TLS)
     * @return the first answer, with the most any of them heard of this node, or empty if no other peer answered
     */
    public static Optional<View> probe(RaftGroupId groupId, Map<String, InetSocketAddress> peers, String self,
                                       org.apache.ratis.conf.Parameters parameters) {
        View first = null;
        long heard = -1;
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
                Map<String, String> addresses = new java.util.LinkedHashMap<>();
                Optional<RaftConfigurationProto> conf = info.getConf();
                if (conf.isPresent() && conf.get().getPeersCount() > 0) {
                    for (RaftPeerProto member : conf.get().getPeersList()) {
                        members.add(member.getId().toStringUtf8());
                        addresses.put(member.getId().toStringUtf8(), member.getAddress());
                    }
                } else if (info.getGroup() != null) {
                    // the configuration is not always in the reply; the group the member runs holds the same peers
                    info.getGroup().getPeers().forEach(m -> {
                        members.add(m.getId().toString());
                        addresses.put(m.getId().toString(), m.getAddress());
                    });
                }
                long committed = info.getLogInfoProto() == null ? -1 : info.getLogInfoProto().getCommitted().getIndex();
                long selfCommitted = -1;
                if (info.getCommitInfos() != null) {
                    for (org.apache.ratis.proto.RaftProtos.CommitInfoProto c : info.getCommitInfos()) {
                        if (c.getServer().getId().toStringUtf8().equals(self)) {
                            selfCommitted = c.getCommitIndex();
                        }
                    }
                }
                if (first == null) {
                    first = new View(p.getKey(), members, committed, addresses, selfCommitted);
                }
                heard = Math.max(heard, selfCommitted);
            } catch (IOException | RuntimeException e) {
                // not answering (down, or not part of this group): ask the next
            }
        }
        // the configuration as the first that answered has it; whether the cluster has heard from this node as any
        // of them has (a member that lags, or has just restarted, may not know it)
        return first == null ? Optional.empty() : Optional.of(new View(first.from(), first.members(), first.committed(),
                first.addresses(), heard));
    }

    /**
     * Has the cluster take a member out of its configuration, through whichever member leads, if the
     * configuration is still the one the view saw.
     *
     * @param groupId    the cluster's group
     * @param view       what a member said about the cluster (its configuration, with addresses)
     * @param nodeId     the member to remove
     * @param parameters the Ratis transport (TLS)
     * @throws IOException if the change does not go through (no leader, a majority of the others not up)
     */
    public static void remove(RaftGroupId groupId, View view, String nodeId, org.apache.ratis.conf.Parameters parameters)
            throws IOException {
        java.util.List<RaftPeer> now = new java.util.ArrayList<>();
        java.util.List<RaftPeer> after = new java.util.ArrayList<>();
        view.addresses().forEach((id, address) -> {
            RaftPeer peer = RaftPeer.newBuilder().setId(id).setAddress(address).build();
            now.add(peer);
            if (!id.equals(nodeId)) {
                after.add(peer);
            }
        });
        RaftProperties props = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(5, TimeUnit.SECONDS));
        try (RaftClient client = RaftClient.newBuilder().setProperties(props).setParameters(parameters)
                .setRaftGroup(RaftGroup.valueOf(groupId, after))
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(10,
                        TimeDuration.valueOf(300, TimeUnit.MILLISECONDS))).build()) {
            org.apache.ratis.protocol.RaftClientReply reply = client.admin().setConfiguration(
                    org.apache.ratis.protocol.SetConfigurationRequest.Arguments.newBuilder().setServersInCurrentConf(now)
                            .setServersInNewConf(after)
                            .setMode(org.apache.ratis.protocol.SetConfigurationRequest.Mode.COMPARE_AND_SET).build());
            if (!reply.isSuccess()) {
                throw reply.getException() != null ? reply.getException()
                        : new IOException("the configuration change failed");
            }
        }
    }
}
