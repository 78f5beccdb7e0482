package dev.mailbox.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;

/**
 * The physical baseline of a coordinator write: three Ratis servers in this JVM on loopback, with the
 * election timeout the coordinator uses, whose state machine only counts what it applies; a client
 * writes small messages through the leader (fsync'd log, replicated to a majority). What a coordinator
 * write costs above this is ours: the control plane hop, the lease table, the reply.
 */
final class BareRatis implements AutoCloseable {

    private final List<RaftServer> servers = new ArrayList<>();
    private final RaftClient client;
    private final Path root;

    BareRatis(int electionTimeoutMillis) throws IOException {
        root = Files.createTempDirectory("bare-ratis-");
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            peers.add(RaftPeer.newBuilder().setId("b" + i).setAddress("127.0.0.1:" + freePort()).build());
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.nameUUIDFromBytes(
                "bare-ratis".getBytes(StandardCharsets.UTF_8))), peers);
        for (RaftPeer peer : peers) {
            RaftProperties p = new RaftProperties();
            RaftServerConfigKeys.setStorageDir(p, List.of(root.resolve(peer.getId().toString()).toFile()));
            GrpcConfigKeys.Server.setPort(p, Integer.parseInt(peer.getAddress().split(":")[1]));
            RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(electionTimeoutMillis, TimeUnit.MILLISECONDS));
            RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2L * electionTimeoutMillis,
                    TimeUnit.MILLISECONDS));
            RaftServer server = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(peer.getId().toString()))
                    .setGroup(group).setStateMachine(new Counter()).setProperties(p)
                    .setOption(RaftStorage.StartupOption.FORMAT).build();
            server.start();
            servers.add(server);
        }
        client = RaftClient.newBuilder().setProperties(new RaftProperties()).setRaftGroup(group).build();
    }

    /** One replicated, fsync'd write; waits for it to be applied on the leader. */
    void write() {
        try {
            client.io().send(Message.valueOf("x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        client.close();
        for (RaftServer s : servers) {
            s.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Counts applied entries; answers each with nothing. */
    private static final class Counter extends BaseStateMachine {
        private final AtomicLong applied = new AtomicLong();

        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            applied.incrementAndGet();
            updateLastAppliedTermIndex(trx.getLogEntry().getTerm(), trx.getLogEntry().getIndex());
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
    }
}
