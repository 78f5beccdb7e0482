package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseState;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.RoutingTable;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.jspecify.annotations.Nullable;

/**
 * The whole contract on a {@link RemoteMailbox} that talks to node B, while the mailbox is hosted on
 * node A and leased to a holder there: every call is forwarded by B to A through the routing table. What A
 * hosts comes from {@link #hostedMailbox}, so each backend runs the contract through a node in a subclass of a
 * few lines; the kit's FIFO, fairness and late-acknowledgement groups run wherever the hosted mailbox
 * declares them, carried by the data plane (group ids, sequence numbers, capabilities). Memory:
 * {@link RemoteMailboxContractTest}; Redis: {@link RedisNodeMailboxContractTest}.
 */
abstract class NodeMailboxContract extends MailboxContract {

    private static TestingCluster cluster;
    private static CoordinationClient client;
    private static MailboxNode owner;
    private static MailboxNode other;
    private static final Map<String, Mailbox<byte[]>> HOSTED = new ConcurrentHashMap<>();
    private static final io.micrometer.core.instrument.simple.SimpleMeterRegistry METERS =
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

    @BeforeAll
    static void start() {
        cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start();
        client = cluster.client();
        owner = MailboxNode.builder("node-a").coordinator(client).meterRegistry(METERS).start();
        other = MailboxNode.builder("node-b").coordinator(client).start();
    }

    /** What a subclass opened for its hosted mailboxes, closed after them, last opened first. */
    private static final java.util.Deque<AutoCloseable> BACKEND = new java.util.ArrayDeque<>();

    @AfterAll
    static void stop() throws Exception {
        other.close();
        owner.close();
        HOSTED.values().forEach(Mailbox::close);
        cluster.close();
        while (!BACKEND.isEmpty()) {
            BACKEND.pop().close();
        }
    }

    /**
     * Closes what a subclass opened for its hosted mailboxes (a server, a client) once those mailboxes are
     * closed: a subclass's own {@code @AfterAll} would run before this class's, while they are still open.
     *
     * @param resource what to close at the end of the class
     * @param <C>      its type
     * @return the resource
     */
    protected static <C extends AutoCloseable> C closeAfterwards(C resource) {
        BACKEND.push(resource);
        return resource;
    }

    /**
     * Makes the mailbox node A hosts for a spec, of bytes (the remote mailbox's codec encodes).
     *
     * @param spec        what the kit asked for (its codec is the remote one's)
     * @param deadLetters the hosted mailbox that stands for the spec's dead-letter mailbox, or null without a
     *                    redrive policy
     * @return the hosted mailbox
     */
    protected abstract Mailbox<byte[]> hostedMailbox(MailboxSpec<?> spec, @Nullable Mailbox<byte[]> deadLetters);

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        RedrivePolicy redrive = spec.redrivePolicy();
        // the dead-letter mailbox the test holds is remote; the hosted one it stands for is A's
        Mailbox<byte[]> hosted = hostedMailbox(spec, redrive == null ? null
                : HOSTED.get(redrive.deadLetterMailbox().name()));
        HOSTED.put(spec.name(), hosted);
        owner.host(hosted);
        Lease lease = client.leases().acquire(spec.name(), new LeaseHolder("tck-host", owner.id(), owner.address()),
                Duration.ofMinutes(10));
        RoutingTable routes = other.routingTable().orElseThrow();
        try {
            assertThat(routes.await(t -> t.route(spec.name()).map(r -> r.leaseId() == lease.leaseId()).orElse(false),
                    Duration.ofSeconds(10))).as("node B learns the route of %s", spec.name()).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        assertThat(other.hosted()).doesNotContain(spec.name());
        return RemoteMailbox.builder(spec.name(), spec.codec()).node(other.address()).build();
    }

    @Override
    protected void destroy(Mailbox<?> mailbox) {
        if (!HOSTED.containsKey(mailbox.name())) {
            mailbox.close(); // a second object on a mailbox already gone: nothing left to purge or route to
            return;
        }
        super.destroy(mailbox);
        Mailbox<byte[]> hosted = HOSTED.remove(mailbox.name());
        if (hosted != null) {
            owner.unhost(mailbox.name());
            hosted.close();
        }
        client.leases().get(mailbox.name()).ifPresent(l -> {
            if (l.state() == LeaseState.ACTIVE) {
                client.leases().release(l);
            }
        });
    }

    /** A second object on the same mailbox: through node A, the owner, instead of B. */
    @Override
    protected <T> java.util.Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        return java.util.Optional.of(RemoteMailbox.builder(spec.name(), spec.codec()).node(owner.address()).build());
    }

    /**
     * The caller's thread parks as soon as its call is on the wire; the receive is blocked only once
     * it waits on the hosting node (parked there without a thread, so counted by the node's gauge), so
     * wait for as many of those as there are remote receives waiting.
     */
    @Override
    protected void awaitBlockedInReceive(Thread thread) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - until < 0) {
            if (thread.getState() == Thread.State.TERMINATED) {
                return;
            }
            int callers = 0;
            int hosts = (int) METERS.get("mailbox.node.receives.waiting").gauge().value();
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                Thread.State state = e.getKey().getState();
                if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
                    continue;
                }
                boolean inRemote = Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName().equals(
                        RemoteMailbox.class.getName()) && f.getMethodName().equals("receive"));
                callers += inRemote ? 1 : 0;
            }
            if (callers > 0 && hosts >= callers) {
                return;
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
