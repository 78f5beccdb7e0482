package dev.mailbox.coordination.server.internal;

import dev.mailbox.coordination.proto.state.Query;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * How one coordinator node reaches the replicated state: straight into its own Ratis server while it
 * leads (no network hop), otherwise through a Ratis client that finds the leader (a follower
 * forwards). Leader reads are linearizable: Ratis answers them from the leader's own state while its
 * leader lease holds (no round trip) and confirms leadership with a read index otherwise, so a deposed
 * leader never serves a renewal.
 */
public final class RaftGateway implements AutoCloseable {

    private volatile RaftServer server;
    private final RaftGroup group;
    private final org.apache.ratis.conf.Parameters parameters;
    /** Replaced when its ordered window fails for good: see {@link #viaClient}. */
    private volatile RaftClient remote;
    /**
     * Forwards renewals only. A Ratis client sends its requests through one ordered window, and a renewal sent
     * through the client that forwards writes would wait for the writes before it to be applied (issue 33).
     */
    private volatile RaftClient remoteRenewals;
    private volatile boolean closed;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();

    /**
     * @param server this node's Ratis server
     * @param group  its group
     */
    public RaftGateway(RaftServer server, RaftGroup group, org.apache.ratis.conf.Parameters parameters) {
        this.server = server;
        this.group = group;
        this.parameters = parameters;
        this.remote = newRemote();
        this.remoteRenewals = newRemote();
    }

    private RaftClient newRemote() {
        RaftProperties p = new RaftProperties();
        // a dead or frozen leader must not hold a request for long: give up on it and look for the next
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder().setProperties(p).setParameters(parameters).setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(100,
                        TimeDuration.valueOf(50, TimeUnit.MILLISECONDS)))
                .build();
    }

    /**
     * Switches to a new Ratis server: the node restarted its own (after a failed log).
     *
     * @param server this node's Ratis server from now on
     */
    public void use(RaftServer server) {
        this.server = server;
    }

    /**
     * The Ratis transport's parameters: mutual TLS between coordinators when TLS is on. Each coordinator
     * presents its certificate both as a server and, when it calls a peer, as a client.
     *
     * @param tls the node's TLS files, or null for plaintext
     * @return the parameters for its Ratis server and clients
     */
    public static org.apache.ratis.conf.Parameters parameters(dev.mailbox.coordination.@org.jspecify.annotations.Nullable TlsFiles tls) {
        org.apache.ratis.conf.Parameters parameters = new org.apache.ratis.conf.Parameters();
        if (tls != null) {
            org.apache.ratis.grpc.GrpcTlsConfig conf = new org.apache.ratis.grpc.GrpcTlsConfig(
                    dev.mailbox.coordination.internal.Tls.keyManager(tls),
                    dev.mailbox.coordination.internal.Tls.trustManager(tls), true);
            org.apache.ratis.grpc.GrpcConfigKeys.Server.setTlsConf(parameters, conf);
            org.apache.ratis.grpc.GrpcConfigKeys.Admin.setTlsConf(parameters, conf);
            org.apache.ratis.grpc.GrpcConfigKeys.Client.setTlsConf(parameters, conf);
        }
        return parameters;
    }

    /**
     * The Raft group of a cluster: a group id derived from the cluster's name, and its peers.
     *
     * @param cluster the cluster's name
     * @param peers   node id to Raft address
     * @return the group
     */
    public static RaftGroup group(String cluster, Map<String, InetSocketAddress> peers) {
        List<RaftPeer> list = new ArrayList<>();
        peers.forEach((id, address) -> list.add(RaftPeer.newBuilder().setId(id)
                .setAddress(address.getHostString() + ":" + address.getPort()).build()));
        UUID uuid = UUID.nameUUIDFromBytes(("mailbox-coordination:" + cluster).getBytes(StandardCharsets.UTF_8));
        return RaftGroup.valueOf(RaftGroupId.valueOf(uuid), list);
    }

    /**
     * Proposes a command.
     *
     * @param command the command
     * @return what applying it came to; fails if no leader could take it
     */
    public CompletableFuture<Outcome> write(Command command) {
        return submit(StateCodec.encode(command), RaftClientRequest.writeRequestType(), true)
                .thenApply(reply -> Outcome.parse(content(reply)));
    }

    /**
     * Proposes a command on this node only, never forwarding it.
     *
     * @param command the command
     * @return what applying it came to; fails if this node does not lead
     */
    public CompletableFuture<Outcome> writeHere(Command command) {
        if (!leads()) {
            return CompletableFuture.failedFuture(new IllegalStateException("this node does not lead"));
        }
        try {
            return server.submitClientRequestAsync(request(message(StateCodec.encode(command)),
                    RaftClientRequest.writeRequestType())).thenApply(reply -> Outcome.parse(content(reply)));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A linearizable read on the leader (a renewal, or a read that asks for the leader's state).
     *
     * @param query the read
     * @return the answer's bytes
     */
    public CompletableFuture<byte[]> leaderRead(Query query) {
        return submit(query.toByteArray(), RaftClientRequest.readRequestType(), false).thenApply(RaftGateway::content);
    }

    /**
     * Renewals, on the leader: linearizable in the sense that matters (only a node that leads, and confirms it
     * when its leader lease has lapsed, pushes a deadline back), but not a read index. Ratis's read index would
     * make a renewal wait until the leader has applied every write committed before it arrived, so a burst of
     * acquires, or a snapshot being written on the thread that applies them, held renewals up for seconds
     * (issue 33). The state machine answers renewals from state that needs no such wait (see
     * {@code LeaseStateMachine}); Ratis still refuses them on a node that does not lead or is not ready yet.
     *
     * @param query a renewal or a batch of them
     * @return the answer's bytes
     */
    public CompletableFuture<byte[]> renew(Query query) {
        return submit(query.toByteArray(), RaftClientRequest.readRequestType(true), false)
                .thenApply(RaftGateway::content);
    }

    private RaftClientRequest request(Message message, RaftClientRequest.Type type) {
        return RaftClientRequest.newBuilder().setClientId(clientId).setServerId(server.getId())
                .setGroupId(group.getGroupId()).setCallId(callIds.incrementAndGet()).setMessage(message)
                .setType(type).build();
    }

    private CompletableFuture<RaftClientReply> submit(byte[] bytes, RaftClientRequest.Type type, boolean write) {
        Message message = message(bytes);
        if (electedNotReady()) {
            // just elected: it serves once it has committed an entry of its term (a few ms). Forwarding now
            // would send the request round the others, who name this node, and back after retry pauses
            CompletableFuture<RaftClientReply> ready = new CompletableFuture<>();
            awaitReady(System.nanoTime() + READY_WAIT_NANOS, () -> ready.complete(null));
            return ready.thenCompose(ignored -> submit(bytes, type, write, message));
        }
        return submit(bytes, type, write, message);
    }

    /** How long a request waits for this node, elected leader, to be ready before it is forwarded instead. */
    private static final long READY_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final java.util.concurrent.ScheduledExecutorService READY_TIMER =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "raft-gateway-ready");
                t.setDaemon(true);
                return t;
            });

    /** Runs {@code then} once this node leads and is ready, no longer leads, or the deadline passes. */
    private void awaitReady(long deadline, Runnable then) {
        if (!electedNotReady() || System.nanoTime() - deadline >= 0) {
            then.run();
            return;
        }
        READY_TIMER.schedule(() -> awaitReady(deadline, then), 2, TimeUnit.MILLISECONDS);
    }

    private boolean electedNotReady() {
        try {
            DivisionInfo info = server.getDivision(group.getGroupId()).getInfo();
            return info.isLeader() && !info.isLeaderReady();
        } catch (IOException e) {
            return false;
        }
    }

    private CompletableFuture<RaftClientReply> submit(byte[] bytes, RaftClientRequest.Type type, boolean write,
                                                      Message message) {
        if (leads()) {
            RaftClientRequest request = request(message, type);
            try {
                return server.submitClientRequestAsync(request).thenCompose(reply -> {
                    RaftException e = reply.getException();
                    if (e != null && (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null
                            || reply.getLeaderSteppingDownException() != null || reply.getReadIndexException() != null)) {
                        return viaClient(message, write, type); // leadership moved under us: ask whoever leads now
                    }
                    return CompletableFuture.completedFuture(reply);
                });
            } catch (IOException e) {
                return viaClient(message, write, type);
            }
        }
        return viaClient(message, write, type);
    }

    /**
     * Forwards through the Ratis client. Its ordered requests share one sliding window, and Ratis closes that
     * window for good once one request fails for good (no leader within its retries, as in a partition that
     * lasts a few seconds): every later request then fails at once with "is closed". A follower would never
     * forward again until restarted, so a request that meets a closed window swaps in a new client (once per
     * failed client, whichever request sees it first) and is sent again on it.
     */
    private CompletableFuture<RaftClientReply> viaClient(Message message, boolean write, RaftClientRequest.Type type) {
        boolean nonLinearizable = type.is(org.apache.ratis.proto.RaftProtos.RaftClientRequestProto.TypeCase.READ)
                && type.getRead().getPreferNonLinearizable();
        RaftClient client = nonLinearizable ? remoteRenewals : remote;
        return send(client, message, write, nonLinearizable).exceptionallyCompose(e -> closed || !windowClosed(e)
                ? CompletableFuture.failedFuture(e)
                : send(renewRemote(client, nonLinearizable), message, write, nonLinearizable));
    }

    private static CompletableFuture<RaftClientReply> send(RaftClient client, Message message, boolean write,
                                                           boolean nonLinearizable) {
        if (write) {
            return client.async().send(message);
        }
        return nonLinearizable ? client.async().sendReadOnlyNonLinearizable(message)
                : client.async().sendReadOnly(message);
    }

    /**
     * Whether a forwarded request failed because the client's window had been closed by an earlier failure:
     * such a request was never sent, so sending it again cannot apply it twice. (A request that itself ran
     * out of retries fails with a retry failure instead, and is not sent again.)
     */
    private static boolean windowClosed(Throwable e) {
        Throwable t = e;
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof org.apache.ratis.protocol.exceptions.AlreadyClosedException;
    }

    /**
     * Replaces {@code failed} with a new client unless another request already did; returns the current one.
     *
     * @param renewals whether it is the client that forwards renewals
     */
    private synchronized RaftClient renewRemote(RaftClient failed, boolean renewals) {
        if ((renewals ? remoteRenewals : remote) == failed && !closed) {
            if (renewals) {
                remoteRenewals = newRemote();
            } else {
                remote = newRemote();
            }
            try {
                failed.close();
            } catch (IOException | RuntimeException e) {
                // it failed already; its threads go with it
            }
        }
        return renewals ? remoteRenewals : remote;
    }

    private boolean leads() {
        try {
            DivisionInfo info = server.getDivision(group.getGroupId()).getInfo();
            return info.isLeader() && info.isLeaderReady();
        } catch (IOException e) {
            return false;
        }
    }

    private static Message message(byte[] bytes) {
        return Message.valueOf(ByteString.copyFrom(bytes));
    }

    private static byte[] content(RaftClientReply reply) {
        if (!reply.isSuccess()) {
            Exception e = reply.getException();
            throw new UncheckedIOException(new IOException("coordinator request failed: " + e, e));
        }
        return reply.getMessage().getContent().toByteArray();
    }

    /**
     * Adds a server to the group through the leader (the new server must be running, empty, waiting).
     *
     * @param nodeId  its id
     * @param address its Raft address
     * @throws IOException if the leader refuses or the change times out
     */
    public void addMember(String nodeId, InetSocketAddress address) throws IOException {
        RaftPeer peer = RaftPeer.newBuilder().setId(nodeId).setAddress(address.getHostString() + ":" + address.getPort())
                .build();
        check(remote.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
                .setServersInNewConf(List.of(peer)).setMode(SetConfigurationRequest.Mode.ADD).build()));
    }

    /**
     * Removes a server from the group through the leader, if the configuration is still the one given.
     *
     * @param nodeId  its id
     * @param current node id to Raft address of the current configuration
     * @throws IOException if the leader refuses or the change times out
     */
    public void removeMember(String nodeId, Map<String, String> current) throws IOException {
        List<RaftPeer> now = new ArrayList<>();
        List<RaftPeer> after = new ArrayList<>();
        current.forEach((id, address) -> {
            RaftPeer peer = RaftPeer.newBuilder().setId(id).setAddress(address).build();
            now.add(peer);
            if (!id.equals(nodeId)) {
                after.add(peer);
            }
        });
        check(remote.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
                .setServersInCurrentConf(now).setServersInNewConf(after)
                .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET).build()));
    }

    private static void check(RaftClientReply reply) throws IOException {
        if (!reply.isSuccess()) {
            RaftException e = reply.getException();
            throw e != null ? e : new IOException("the configuration change failed");
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        try {
            remote.close();
            remoteRenewals.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
