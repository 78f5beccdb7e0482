package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The history checker: many runners acquire, renew, release and abandon leases on a few mailboxes of a
 * three-node cluster while a chaos thread stops and restarts nodes (the leader most often). Every
 * call is recorded with its outcome and times, then checked:
 * <ul>
 *   <li>at most one live holder per mailbox at any time, as the holders themselves see it: a holder
 *       believes from the grant's reply until it releases or until the TTL has passed since the last
 *       renewal it sent that was accepted;</li>
 *   <li>lease ids are unique and each mailbox's epochs grow with them;</li>
 *   <li>a renewal or release with a stale lease id or epoch is always refused;</li>
 *   <li>no lease is lost early: a renewal is refused only after the holder's belief has ended;</li>
 *   <li>afterwards every node holds the same table.</li>
 * </ul>
 * The normal suite runs it for 20 s with a fixed seed. For a longer run:
 * {@code mvn -pl coordination test -Dtest=LeaseHistoryTest -Dhistory.seconds=600 -Dhistory.seed=7}.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class LeaseHistoryTest {

    private static final long SEED = Long.getLong("history.seed", 20261122L);
    private static final long SECONDS = Long.getLong("history.seconds", 20L);
    private static final int WORKERS = 8;
    private static final long SNAPSHOT_EVERY = Long.getLong("history.snapshotEvery", 50L);
    private static final List<String> MAILBOXES = List.of("h@m0", "h@m1", "h@m2", "h@m3");
    private static final Duration TTL = Duration.ofMillis(1_000);
    private static final Duration HEARTBEAT = Duration.ofMillis(250);
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    /**
     * A holder's belief that it holds a lease (at one epoch), from the grant's reply to the end of its
     * validity; {@code invoked} is when it asked.
     */
    record Belief(String worker, Lease lease, long invoked, long from, long until) {
        Belief until(long newUntil) {
            return new Belief(worker, lease, invoked, from, newUntil);
        }
    }

    /** A call that named a lease that was not current: it must have been refused. */
    record Probe(String what, Lease named, boolean accepted, String message) {
    }

    /** A renewal refused: it must come after the holder's own validity ended. */
    record Refusal(Lease lease, long answered, long validUntil, String message) {
    }

    private final Queue<Belief> beliefs = new ConcurrentLinkedQueue<>();
    private final Queue<Probe> probes = new ConcurrentLinkedQueue<>();
    private final Queue<Refusal> refusals = new ConcurrentLinkedQueue<>();
    private final AtomicInteger unavailable = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong installs = new java.util.concurrent.atomic.AtomicLong();
    private List<Lease> ended = List.of();

    @Test
    @DisplayName("random leader kills and restarts: one holder per mailbox, stale epochs refused, nothing expires early")
    void history() throws Exception {
        // frequent snapshots: a node restarted behind the leader's purged log catches up by installing one
        try (TestingCluster cluster = TestingCluster.builder().size(3).snapshotEvery(SNAPSHOT_EVERY)
                .configure(b -> b.logSegmentSize(4 << 10)).start()) {
            cluster.awaitLeader(PATIENCE);
            try (CoordinationClient admin = cluster.client()) {
                admin.namespaces().setPolicy("h", new LeasePolicy(TTL, HEARTBEAT, Duration.ofMillis(300)));
            }
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                String name = "w" + i;
                Random rnd = new Random(SEED * 31 + i);
                CoordinationClient client = cluster.client();
                Thread t = new Thread(() -> work(name, rnd, client, end), "history-" + name);
                workers.add(t);
                t.start();
            }
            int kills = chaos(cluster, new Random(SEED), end);
            for (Thread t : workers) {
                t.join();
            }

            String leader = cluster.awaitLeader(PATIENCE);
            ended = cluster.node(leader).stateMachine().snapshotTable().history();
            check(kills);
            cluster.awaitIdenticalState(PATIENCE);
            cluster.nodeIds().stream().filter(cluster::isRunning)
                    .forEach(id -> installs.addAndGet(cluster.node(id).stateMachine().snapshotsInstalled()));
            System.out.printf("history: %d node stops, %d snapshots installed from the leader%n", kills, installs.get());
            assertThat(installs.get()).as("restarted nodes caught up by installing the leader's snapshot").isPositive();
        }
    }

    private void work(String me, Random rnd, CoordinationClient client, long end) {
        LeaseHolder holder = new LeaseHolder(me, "node-" + me, "127.0.0.1:1");
        while (System.nanoTime() < end) {
            String mailbox = MAILBOXES.get(rnd.nextInt(MAILBOXES.size()));
            long invoked = System.nanoTime();
            Lease lease;
            try {
                lease = client.leases().acquire(mailbox, holder);
            } catch (CoordinationException e) {
                count(e);
                pause(20 + rnd.nextInt(100));
                continue;
            }
            long granted = System.nanoTime();
            long ttl = TimeUnit.MILLISECONDS.toNanos(lease.ttlMillis());
            long validUntil = invoked + ttl;
            boolean lost = false;
            int beats = 1 + rnd.nextInt(6);
            for (int b = 0; b < beats && !lost; b++) {
                pause(HEARTBEAT.toMillis()); // the runner's own pace, not a synchronisation
                if (System.nanoTime() - validUntil >= 0) {
                    lost = true; // by its own clock the lease is over: it must stop acting
                    break;
                }
                long sent = System.nanoTime();
                try {
                    client.leases().renew(lease);
                    validUntil = Math.max(validUntil, sent + ttl);
                } catch (CoordinationException e) {
                    count(e);
                    if (!e.isRetryable()) {
                        refusals.add(new Refusal(lease, System.nanoTime(), validUntil, e.getMessage()));
                        lost = true;
                    }
                }
                if (rnd.nextInt(8) == 0) {
                    probe("renew with a newer epoch", client, withEpoch(lease, lease.epoch() + 1));
                }
            }
            long until = Math.min(validUntil, System.nanoTime());
            if (!lost && rnd.nextInt(10) < 6) {
                until = Math.min(validUntil, System.nanoTime()); // it stops acting before it asks to release
                try {
                    client.leases().release(lease);
                    probe("renew after release", client, lease);
                } catch (CoordinationException e) {
                    count(e);
                }
            } else if (!lost) {
                until = validUntil; // abandoned: it believes until its validity runs out
            }
            beliefs.add(new Belief(me, lease, invoked, granted, until));
        }
    }

    /** Renews a lease that is not current; anything but a refusal is recorded as accepted. */
    private void probe(String what, CoordinationClient client, Lease named) {
        try {
            client.leases().renew(named);
            probes.add(new Probe(what, named, true, "accepted"));
        } catch (CoordinationException e) {
            count(e);
            if (!e.isRetryable()) {
                probes.add(new Probe(what, named, false, e.getMessage()));
            }
        }
    }

    private int chaos(TestingCluster cluster, Random rnd, long end) {
        int kills = 0;
        while (System.nanoTime() < end - TimeUnit.SECONDS.toNanos(2)) {
            pause(1_500 + rnd.nextInt(1_500));
            String leader;
            try {
                leader = cluster.awaitLeader(Duration.ofSeconds(10));
            } catch (AssertionError e) {
                continue;
            }
            List<String> ids = new ArrayList<>(cluster.nodeIds().stream().filter(cluster::isRunning).toList());
            String victim = rnd.nextInt(10) < 7 ? leader : ids.get(rnd.nextInt(ids.size()));
            installs.addAndGet(cluster.node(victim).stateMachine().snapshotsInstalled()); // its count ends with it
            cluster.stop(victim);
            kills++;
            pause(400 + rnd.nextInt(800));
            for (String id : cluster.nodeIds()) {
                if (cluster.isRunning(id)) {
                    cluster.node(id).takeSnapshot(); // the log before it goes: the victim must install a snapshot
                }
            }
            cluster.start(victim);
        }
        return kills;
    }

    private void check(int kills) {
        List<Belief> all = new ArrayList<>(beliefs);
        assertThat(kills).as("nodes stopped").isGreaterThanOrEqualTo(Math.max(2, (int) SECONDS / 6));
        assertThat(all.size()).as("grants recorded").isGreaterThanOrEqualTo(20);

        // a runner that acquires again while its own lease lives keeps that lease under a new epoch: it
        // is a new incarnation, and the one before ends (its epoch is fenced) when it asks
        List<Belief> truncated = new ArrayList<>();
        Map<String, List<Belief>> byHolding = all.stream()
                .collect(Collectors.groupingBy(b -> b.worker() + "/" + b.lease().leaseId()));
        for (List<Belief> list : byHolding.values()) {
            list.sort(Comparator.comparingLong(Belief::from));
            for (int i = 0; i < list.size(); i++) {
                Belief b = list.get(i);
                if (i + 1 < list.size()) {
                    Belief next = list.get(i + 1);
                    assertThat(next.lease().epoch()).as("a re-acquire gets a new epoch").isGreaterThan(b.lease().epoch());
                    b = b.until(Math.min(b.until(), next.invoked()));
                }
                truncated.add(b);
            }
        }

        // at most one believing holder per mailbox at any moment; epochs grow from grant to grant
        Map<String, List<Belief>> byMailbox = truncated.stream().collect(Collectors.groupingBy(b -> b.lease().mailboxId()));
        for (List<Belief> list : byMailbox.values()) {
            list.sort(Comparator.comparingLong(Belief::from));
            Belief latest = list.get(0);
            for (int i = 1; i < list.size(); i++) {
                Belief later = list.get(i);
                Belief earlier = latest;
                assertThat(later.from())
                        .as("%s granted %s while %s still held %s, which ended as %s", later.worker(), later.lease(),
                                earlier.worker(), earlier.lease(), ended.stream()
                                        .filter(l -> l.leaseId() == earlier.lease().leaseId()).toList())
                        .isGreaterThanOrEqualTo(earlier.until());
                assertThat(later.lease().epoch()).as("epochs grow from grant to grant").isGreaterThan(earlier.lease().epoch());
                if (later.until() > latest.until()) {
                    latest = later;
                }
            }
        }

        // stale ids and epochs always refused
        assertThat(probes).as("stale calls made").isNotEmpty();
        assertThat(probes).filteredOn(Probe::accepted).as("stale calls accepted").isEmpty();

        // nothing lost early: every refusal came after the holder's validity had ended
        for (Refusal r : refusals) {
            assertThat(r.answered()).as("renewal of %s refused before its holder's validity ended: %s", r.lease(),
                    r.message()).isGreaterThanOrEqualTo(r.validUntil());
        }
        System.out.printf("history: seed %d, %d s, %d grants, %d stale probes refused, %d renewals refused late, "
                + "%d unavailable answers, %d node stops%n", SEED, SECONDS, all.size(), probes.size(), refusals.size(),
                unavailable.get(), kills);
    }

    private void count(CoordinationException e) {
        if (e.isRetryable()) {
            unavailable.incrementAndGet();
        }
    }

    private static Lease withEpoch(Lease l, long epoch) {
        return new Lease(l.leaseId(), l.mailboxId(), l.runnerId(), l.nodeId(), l.address(), l.partition(), epoch,
                l.state(), l.ttlMillis(), l.grantedAtMillis(), l.endedAtMillis());
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
