package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.RemoteMailbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lease history checker carried to the data path. Runners take leases on a few mailboxes of a node,
 * receive and acknowledge under their epochs through another node, and now and then stall past their
 * TTL (a GC pause) before acknowledging, while others take over. Every successful receive and
 * acknowledgement is recorded with its epoch and times, then checked: no acknowledgement by an epoch
 * older than one that had already received from that mailbox before the acknowledgement was made, and
 * no message acknowledged twice. The suite runs it for 10 s with a fixed seed; longer:
 * {@code -Dtest=DataPathHistoryTest -Ddatapath.seconds=300 -Ddatapath.seed=3}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class DataPathHistoryTest {

    private static final long SEED = Long.getLong("datapath.seed", 20261123L);
    private static final long SECONDS = Long.getLong("datapath.seconds", 10L);
    private static final int RUNNERS = 6;
    private static final List<String> MAILBOXES = List.of("d@node-h", "e@node-h", "f@node-h");
    private static final LeasePolicy POLICY = new LeasePolicy(Duration.ofMillis(1_000), Duration.ofMillis(250),
            Duration.ofMillis(200));

    /** A data-path call that succeeded: {@code invoked} and {@code answered} are System.nanoTime(). */
    record Op(String mailbox, String kind, long epoch, String messageId, long invoked, long answered) {
    }

    private final Queue<Op> ops = new ConcurrentLinkedQueue<>();
    private final AtomicInteger fenced = new AtomicInteger();
    private final AtomicInteger stalls = new AtomicInteger();

    @Test
    @DisplayName("stalled runners resume after a takeover: no acknowledgement by an epoch older than one that already "
            + "received, none twice")
    void history() throws Exception {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            CoordinationClient client = cluster.client();
            for (String ns : List.of("d", "e", "f")) {
                client.namespaces().setPolicy(ns, POLICY);
            }
            MailboxBackend memory = TestBackends.nodeLocalMemory();
            try (MailboxNode host = MailboxNode.builder("node-h").coordinator(client).backend(memory).start();
                 MailboxNode other = MailboxNode.builder("node-o").coordinator(client).start()) {
                Map<String, RemoteMailbox<String>> through = new ConcurrentHashMap<>();
                for (String m : MAILBOXES) {
                    // runners are on node-h; everyone reaches the mailboxes through node-o, which forwards
                    through.put(m, RemoteMailbox.builder(m, Codec.utf8()).node(other.address())
                            .routeWait(Duration.ofSeconds(5)).build());
                }
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < RUNNERS; i++) {
                    Random random = new Random(SEED + i);
                    String id = "runner-" + i;
                    Thread t = new Thread(() -> runner(client, host, through, id, random, end), id);
                    t.start();
                    threads.add(t);
                }
                Thread feeder = new Thread(() -> {
                    int n = 0;
                    while (System.nanoTime() < end) {
                        for (String m : MAILBOXES) {
                            try {
                                through.get(m).send("m" + n++);
                            } catch (MailboxException e) {
                                // no route for a moment: the next round sends again
                            }
                        }
                        pause(20);
                    }
                }, "feeder");
                feeder.start();
                for (Thread t : threads) {
                    t.join();
                }
                feeder.join();
                through.values().forEach(RemoteMailbox::close);
            }
        }
        check();
    }

    private void runner(CoordinationClient client, MailboxNode host, Map<String, RemoteMailbox<String>> through,
                        String id, Random random, long end) {
        LeaseHolder holder = new LeaseHolder(id, host.id(), host.address());
        while (System.nanoTime() < end) {
            String mailbox = MAILBOXES.get(random.nextInt(MAILBOXES.size()));
            Lease lease;
            try {
                lease = client.leases().acquire(mailbox, holder);
            } catch (CoordinationException e) {
                pause(random.nextInt(100));
                continue;
            }
            Mailbox<String> view = through.get(mailbox).fenced(lease.epoch());
            try {
                for (int round = 0; round < 1 + random.nextInt(6) && System.nanoTime() < end; round++) {
                    long invoked = System.nanoTime();
                    List<Message<String>> got = view.receive(ReceiveOptions.defaults()
                            .withVisibilityTimeout(Duration.ofSeconds(5)).withWaitTime(Duration.ofMillis(100)));
                    long answered = System.nanoTime();
                    for (Message<String> m : got) {
                        ops.add(new Op(mailbox, "receive", lease.epoch(), m.id(), invoked, answered));
                    }
                    if (random.nextInt(4) == 0) {
                        // a stall past the TTL without renewing: someone else may take the mailbox meanwhile
                        stalls.incrementAndGet();
                        pause(POLICY.ttl().toMillis() + POLICY.grace().toMillis() + random.nextInt(500));
                    } else {
                        lease = client.leases().renew(lease);
                    }
                    for (Message<String> m : got) {
                        long ackInvoked = System.nanoTime();
                        m.acknowledge();
                        ops.add(new Op(mailbox, "ack", lease.epoch(), m.id(), ackInvoked, System.nanoTime()));
                    }
                }
                client.leases().release(lease);
            } catch (FencedException e) {
                fenced.incrementAndGet();
            } catch (MailboxException e) {
                // the lease was lost (refused renewal), or a call failed: take another one
            }
        }
    }

    private void check() {
        List<Op> all = new ArrayList<>(ops);
        assertThat(all.stream().filter(o -> o.kind().equals("ack"))).as("acknowledgements made").isNotEmpty();
        assertThat(stalls.get()).as("stalls tried").isPositive();
        assertThat(fenced.get()).as("stale calls refused (the checker must have something to check)").isPositive();
        for (Op ack : all) {
            if (!ack.kind().equals("ack")) {
                continue;
            }
            for (Op receive : all) {
                if (receive.kind().equals("receive") && receive.mailbox().equals(ack.mailbox())
                        && receive.epoch() > ack.epoch() && receive.answered() < ack.invoked()) {
                    throw new AssertionError("mailbox " + ack.mailbox() + ": acknowledgement under epoch " + ack.epoch()
                            + " of " + ack.messageId() + " succeeded after epoch " + receive.epoch()
                            + " had received (" + receive.messageId() + ")");
                }
            }
        }
        Map<String, Long> acks = new ConcurrentHashMap<>();
        for (Op o : all) {
            if (o.kind().equals("ack")) {
                assertThat(acks.merge(o.mailbox() + "/" + o.messageId(), 1L, Long::sum))
                        .as("acknowledged once: " + o).isEqualTo(1L);
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // the stall is the point: a runner that stops for a while
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
