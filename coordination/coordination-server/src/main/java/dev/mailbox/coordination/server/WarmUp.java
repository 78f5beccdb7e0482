package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the code of an election and of a first term as leader once, in a throwaway cluster, before a
 * coordinator joins its real one ({@link CoordinatorNode.Builder#warmUp}).
 *
 * <p>Why: a JVM that has never led loads and links its leader's code the first time it wins an election:
 * ~350 classes of Ratis's leader state, log appenders, pending requests, metrics and our own write path,
 * and as many lambda call sites. Traced on a 2-core machine, that took 150–250 ms of every failover to a
 * node that had not led before, which after a crash and restart is most of them: the new leader answered
 * its first write 100–200 ms after winning instead of 20–40 ms. Nothing but running that code loads it
 * (a list of class names would miss the lambdas and go stale with every Ratis release), so the node runs
 * it: three members in this JVM on free loopback ports with temporary data dirs, an election, a few
 * acquires, renewals and releases through the control plane, the leader crashed, the same again on the
 * next leader, and everything deleted. It costs 2–4 s of start-up and gives up after 20 s; it never
 * blocks a start: a warm-up that fails is logged and skipped.
 *
 * <p>Limits: the throwaway members talk plaintext, so TLS handshakes between coordinators are not warmed;
 * only the classes and call sites are, not the JIT (a handful of calls compiles nothing).
 */
final class WarmUp {

    private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);
    /** Operations per leader: enough to run every step of a write once on each path, not to profile them. */
    private static final int ROUNDS = 20;
    /** The most the whole warm-up may take before it gives up (it is a nicety, not a condition of starting). */
    private static final Duration DEADLINE = Duration.ofSeconds(20);
    private static final int MEMBERS = 3;

    private WarmUp() {
    }

    /**
     * Runs the warm-up; logs and returns on any failure. Every throwaway member is stopped and its data
     * deleted before this returns.
     *
     * <p>Ports: Ratis ends the whole JVM when a server cannot bind its port, so a port taken between being
     * chosen and being bound would kill the process this warms up. Every port stays held by a bound socket
     * until just before its member binds it: bound, so that the kernel gives it to no outgoing connection
     * (the members connect to each other all along), and not listening, so that a member connecting to one
     * not yet started is refused at once instead of hanging. The node's own addresses, if free, are held
     * the same way the whole time, so that the members' outgoing connections cannot take them either.
     *
     * @param forNode the node it warms up for, named in the log
     * @param keep    the node's own addresses (Raft, control plane), to keep free for it
     * @return whether it ran to the end (false: it failed, and said why in the log)
     */
    static boolean run(String forNode, List<InetSocketAddress> keep) {
        long start = System.nanoTime();
        long deadline = start + DEADLINE.toNanos();
        List<CoordinatorNode> nodes = new ArrayList<>();
        List<Socket> held = new ArrayList<>();
        Path root = null;
        try {
            for (InetSocketAddress a : keep) {
                hold(a, held);
            }
            root = Files.createTempDirectory("mailbox-warm-up-");
            Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
            Map<String, Socket> raftPorts = new LinkedHashMap<>();
            Map<String, Socket> planePorts = new LinkedHashMap<>();
            for (int i = 1; i <= MEMBERS; i++) {
                String id = "warm-up-" + i;
                raftPorts.put(id, hold(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), held));
                planePorts.put(id, hold(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), held));
                peers.put(id, new InetSocketAddress("127.0.0.1", raftPorts.get(id).getLocalPort()));
            }
            List<String> endpoints = new ArrayList<>();
            String cluster = "warm-up-" + Long.toHexString(System.nanoTime()); // one group for all three
            for (String id : peers.keySet()) {
                InetSocketAddress plane = new InetSocketAddress("127.0.0.1", planePorts.get(id).getLocalPort());
                endpoints.add("127.0.0.1:" + plane.getPort());
                release(raftPorts.get(id), held);
                release(planePorts.get(id), held);
                nodes.add(CoordinatorNode.builder(id).cluster(cluster)
                        .peers(peers).dataDir(root.resolve(id)).controlPlane(plane)
                        .electionTimeout(Duration.ofMillis(100)).meterRegistry(new SimpleMeterRegistry()).start());
            }
            try (CoordinationClient client = CoordinationClient.builder().endpoints(endpoints)
                    .callTimeout(Duration.ofSeconds(2)).build()) {
                LeaseHolder holder = new LeaseHolder("warm-up", "warm-up", "127.0.0.1:1");
                writes(client, holder, "first", deadline);
                // a crash of the leader: a survivor's election watch stands, and it leads for the first time
                CoordinatorNode leader = awaitLeader(nodes, deadline);
                nodes.remove(leader);
                leader.crash();
                writes(client, holder, "second", deadline);
            }
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            LOG.info("coordinator {} warmed up its election and leader paths in a throwaway cluster in {} ms",
                    forNode, took.toMillis());
            return true;
        } catch (IOException | RuntimeException e) {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            LOG.warn("coordinator {}: the warm-up failed after {} ms ({}); starting without it: its first term as "
                    + "leader will be slower", forNode, took.toMillis(), e.toString());
            return false;
        } finally {
            for (CoordinatorNode n : nodes) {
                try {
                    n.crash(); // nothing to hand over: the whole cluster goes
                } catch (RuntimeException e) {
                    LOG.debug("stopping warm-up member {} failed", n.id(), e);
                }
            }
            for (Socket s : new ArrayList<>(held)) {
                release(s, held);
            }
            if (root != null) {
                deleteQuietly(root);
            }
        }
    }

    /** Binds {@code address} and keeps it bound; for a port the node needs later, a failure is not an error. */
    private static Socket hold(InetSocketAddress address, List<Socket> held) throws IOException {
        Socket s = new Socket();
        try {
            s.setReuseAddress(true);
            s.bind(address);
        } catch (IOException e) {
            s.close();
            if (address.getPort() != 0) {
                return null; // in use already (or not ours to bind): the node's own start will say so
            }
            throw e;
        }
        held.add(s);
        return s;
    }

    private static void release(Socket s, List<Socket> held) {
        held.remove(s);
        try {
            s.close();
        } catch (IOException e) {
            LOG.debug("closing a held port failed", e);
        }
    }

    private static void writes(CoordinationClient client, LeaseHolder holder, String term, long deadline) {
        for (int i = 0; i < ROUNDS; i++) {
            giveUpAfter(deadline);
            Lease lease = client.leases().acquire("warm-up-" + term + "-" + i + "@warm-up", holder,
                    Duration.ofSeconds(30));
            client.leases().release(client.leases().renew(lease));
        }
    }

    private static void giveUpAfter(long deadline) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("it took longer than " + DEADLINE.toSeconds() + " s");
        }
    }

    private static CoordinatorNode awaitLeader(List<CoordinatorNode> nodes, long deadline) {
        while (System.nanoTime() - deadline < 0) {
            for (CoordinatorNode n : nodes) {
                if (n.isLeader()) {
                    return n;
                }
            }
            try {
                Thread.sleep(10); // Raft offers nothing to wait on for this
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a warm-up leader", e);
            }
        }
        throw new IllegalStateException("no warm-up member led within " + DEADLINE.toSeconds() + " s of the start");
    }

    private static void deleteQuietly(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            LOG.debug("could not delete the warm-up data in {}", root, e);
        }
    }
}
