package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
     * @param forNode the node it warms up for, named in the log
     * @return whether it ran to the end (false: it failed, and said why in the log)
     */
    static boolean run(String forNode) {
        long start = System.nanoTime();
        long deadline = start + DEADLINE.toNanos();
        List<CoordinatorNode> nodes = new ArrayList<>();
        Path root = null;
        try {
            root = Files.createTempDirectory("mailbox-warm-up-");
            Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
            for (int i = 1; i <= MEMBERS; i++) {
                peers.put("warm-up-" + i, new InetSocketAddress("127.0.0.1", freePort()));
            }
            List<String> endpoints = new ArrayList<>();
            String cluster = "warm-up-" + Long.toHexString(System.nanoTime()); // one group for all three
            for (String id : peers.keySet()) {
                InetSocketAddress plane = new InetSocketAddress("127.0.0.1", freePort());
                endpoints.add("127.0.0.1:" + plane.getPort());
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
            if (root != null) {
                deleteQuietly(root);
            }
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

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteQuietly(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            LOG.debug("could not delete the warm-up data in {}", root, e);
        }
    }
}
