package dev.mailbox.coordination.internal;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * How one coordinator node reaches the replicated state: straight into its own Ratis server while it
 * leads (no network hop), otherwise through a Ratis client that finds the leader (a follower
 * forwards). Leader reads are linearizable: Ratis answers them from the leader's own state while its
 * leader lease holds (no round trip) and confirms leadership with a read index otherwise, so a deposed
 * leader never serves a renewal.
 */
public final class RaftGateway implements AutoCloseable {

    private final RaftServer server;
    private final RaftGroup group;
    private final LeaseClient remote;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();

    /**
     * @param server this node's Ratis server
     * @param group  its group
     */
    public RaftGateway(RaftServer server, RaftGroup group) {
        this.server = server;
        this.group = group;
        this.remote = new LeaseClient(group);
    }

    /**
     * Proposes a command.
     *
     * @param command the command
     * @return what applying it came to; fails if no leader could take it
     */
    public CompletableFuture<Outcome> write(Command command) {
        byte[] bytes = command.encode();
        return submit(bytes, RaftClientRequest.writeRequestType(), true)
                .thenApply(reply -> Wire.decodeOutcome(LeaseClient.content(reply)));
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
            return server.submitClientRequestAsync(request(Message.valueOf(ByteString.copyFrom(command.encode())),
                    RaftClientRequest.writeRequestType())).thenApply(reply -> Wire.decodeOutcome(LeaseClient.content(reply)));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private RaftClientRequest request(Message message, RaftClientRequest.Type type) {
        return RaftClientRequest.newBuilder().setClientId(clientId).setServerId(server.getId())
                .setGroupId(group.getGroupId()).setCallId(callIds.incrementAndGet()).setMessage(message)
                .setType(type).build();
    }

    /**
     * A linearizable read on the leader (a renewal, or a get/list that asks for it).
     *
     * @param read the read
     * @return the answer's bytes
     */
    public CompletableFuture<byte[]> leaderRead(Wire.Read read) {
        return submit(Wire.encode(read), RaftClientRequest.readRequestType(), false).thenApply(LeaseClient::content);
    }

    private CompletableFuture<RaftClientReply> submit(byte[] bytes, RaftClientRequest.Type type, boolean write) {
        Message message = Message.valueOf(ByteString.copyFrom(bytes));
        if (leads()) {
            RaftClientRequest request = request(message, type);
            try {
                return server.submitClientRequestAsync(request).thenCompose(reply -> {
                    RaftException e = reply.getException();
                    if (e != null && (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null
                            || reply.getLeaderSteppingDownException() != null || reply.getReadIndexException() != null)) {
                        return viaClient(message, write); // leadership moved under us: ask whoever leads now
                    }
                    return CompletableFuture.completedFuture(reply);
                });
            } catch (IOException e) {
                return viaClient(message, write);
            }
        }
        return viaClient(message, write);
    }

    private CompletableFuture<RaftClientReply> viaClient(Message message, boolean write) {
        return write ? remote.client().async().send(message) : remote.client().async().sendReadOnly(message);
    }

    private boolean leads() {
        try {
            DivisionInfo info = server.getDivision(group.getGroupId()).getInfo();
            return info.isLeader() && info.isLeaderReady();
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        remote.close();
    }
}
