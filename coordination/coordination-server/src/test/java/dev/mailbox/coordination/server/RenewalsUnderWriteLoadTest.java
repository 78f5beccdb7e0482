package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33, item 1: renewals never queue behind writes. A renewal used to be a Ratis read index: the leader
 * answered it only once it had applied every write committed before it arrived. So while the leader's applying
 * was held up (a snapshot of a large table being written, which the applying thread does itself and under the
 * table's lock; a burst of acquires) every renewal waited, runners that renewed on time lost their leases, and
 * the leader's own sweeper expired them (issue 33 measured 10,058 such expiries at 50,000 leases).
 *
 * <p>Here the leader's applying is held for longer than a lease's TTL plus grace (by holding the table's read
 * lock, as a snapshot being written holds it) while a burst of acquires commits behind it, and runners keep
 * renewing: every runner must keep its lease (no gap between accepted renewals as long as the TTL) and no lease
 * may end.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RenewalsUnderWriteLoadTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int LEASES = 200;
    private static final int ACQUIRES = 300;
    /** The runners' TTL; the namespace's grace (2 s by default) comes on top on the coordinator. */
    private static final Duration TTL = Duration.ofSeconds(3);
    private static final long RENEW_EVERY_MILLIS = 500;
    /** Longer than TTL plus grace: a lease whose renewals wait this long is expired by the leader. */
    private static final long STALL_MILLIS = 6_000;

    @Test
    @DisplayName("while the leader's applying is held up and a burst of acquires commits behind it, renewals are "
            + "answered and no runner that renews on time loses its lease")
    void renewalsKeepUpWhileWritesWait() throws Exception {
        // elections slower than the default: the test needs the same leader throughout (it holds that one's applying)
        try (TestingCluster cluster = TestingCluster.builder().size(3).electionTimeout(Duration.ofSeconds(1)).start()) {
            String leader = cluster.awaitLeader(PATIENCE);
            CoordinationClient client = cluster.client();

            // runners: each lease renewed every RENEW_EVERY_MILLIS from when it is granted; a runner counts its
            // lease held for a TTL from the sending of its last accepted renewal (LeaseKeeper's rule)
            java.util.concurrent.atomic.AtomicReferenceArray<Lease> leases =
                    new java.util.concurrent.atomic.AtomicReferenceArray<>(LEASES);
            AtomicLongArray lastAccepted = new AtomicLongArray(LEASES);
            AtomicLongArray longestGap = new AtomicLongArray(LEASES);
            Map<String, String> refused = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            Thread renewer = new Thread(() -> {
                while (!stop.get()) {
                    List<CompletableFuture<?>> round = new ArrayList<>();
                    for (int i = 0; i < LEASES; i++) {
                        Lease lease = leases.get(i);
                        if (lease == null) {
                            continue; // not granted yet
                        }
                        int k = i;
                        long sent = System.nanoTime();
                        round.add(client.leases().renewAsync(lease).whenComplete((ok, e) -> {
                            if (e == null) {
                                long previous = lastAccepted.getAndAccumulate(k, sent, Math::max);
                                longestGap.accumulateAndGet(k, sent - previous, Math::max);
                            } else if (CoordinationException.of(e).reason() != CoordinationException.Reason.UNAVAILABLE) {
                                refused.putIfAbsent(lease.mailboxId(), String.valueOf(e.getMessage()));
                            }
                        }));
                    }
                    long next = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RENEW_EVERY_MILLIS);
                    // a round that is not answered in time is not waited for: the next one goes out on schedule
                    CompletableFuture.allOf(round.toArray(CompletableFuture[]::new))
                            .completeOnTimeout(null, RENEW_EVERY_MILLIS, TimeUnit.MILLISECONDS).exceptionally(x -> null)
                            .join();
                    long left = next - System.nanoTime();
                    if (left > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(left);
                    }
                }
            }, "renewer");
            renewer.setDaemon(true);
            renewer.start();
            for (int i = 0; i < LEASES; i++) {
                long asked = System.nanoTime();
                Lease granted = client.leases().acquire("renew@m" + i, new LeaseHolder("runner-" + i, "node-a",
                        "127.0.0.1:9"), TTL);
                lastAccepted.set(i, asked);
                leases.set(i, granted);
            }

            // the leader's applying held up, as a snapshot being written holds it up
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread stall = new Thread(() -> cluster.node(leader).stateMachine().readTable(t -> {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return null;
            }), "stall");
            stall.setDaemon(true);
            stall.start();
            assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
            long stallStart = System.nanoTime();
            List<CompletableFuture<Lease>> acquires = new ArrayList<>();
            CoordinationClient acquirer = CoordinationClient.builder().endpoints(cluster.endpoints())
                    .callTimeout(PATIENCE).build();
            try {
                // a burst of acquires: committed, waiting for the leader to apply them
                for (int i = 0; i < ACQUIRES; i++) {
                    acquires.add(acquirer.leases().acquireAsync("burst@m" + i,
                            new LeaseHolder("burst-" + i, "node-b", "127.0.0.1:8"), Duration.ofSeconds(30)));
                }
                TestingCluster.await(PATIENCE, () -> System.nanoTime() - stallStart
                        >= TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS), "the stall to last longer than TTL plus grace");
                assertThat(cluster.node(leader).isLeader()).as("the stalled node still leads").isTrue();
                assertThat(acquires.stream().filter(a -> a.isDone() && !a.isCompletedExceptionally()).count())
                        .as("acquires granted while the leader's applying was held up").isZero();
            } finally {
                release.countDown();
            }
            for (CompletableFuture<Lease> a : acquires) {
                assertThat(a.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).state()).isEqualTo(LeaseState.ACTIVE);
            }
            acquirer.close();
            // a few more rounds after the stall, then the verdict
            long after = System.nanoTime();
            TestingCluster.await(PATIENCE, () -> {
                if (!refused.isEmpty()) {
                    return true; // the verdict below says which
                }
                for (int i = 0; i < LEASES; i++) {
                    if (lastAccepted.get(i) - after < 0) {
                        return false;
                    }
                }
                return true;
            }, "every lease renewed once more after the stall");
            stop.set(true);
            renewer.join(TimeUnit.SECONDS.toMillis(30));

            long worst = 0;
            String worstLease = "";
            for (int i = 0; i < LEASES; i++) {
                if (longestGap.get(i) > worst) {
                    worst = longestGap.get(i);
                    worstLease = leases.get(i).mailboxId();
                }
            }
            assertThat(refused.size()).as("leases whose renewal was refused (expired while their runner renewed on "
                    + "time), such as %s", refused.entrySet().stream().limit(3).toList()).isZero();
            assertThat(TimeUnit.NANOSECONDS.toMillis(worst))
                    .as("the longest time between accepted renewals of one lease (%s), by when each was sent: past "
                            + "the TTL, its runner counts it lost", worstLease)
                    .isLessThan(TTL.toMillis());
            for (int i = 0; i < LEASES; i++) {
                String mailbox = leases.get(i).mailboxId();
                assertThat(client.leases().get(mailbox).orElseThrow().state()).as(mailbox).isEqualTo(LeaseState.ACTIVE);
            }
        }
    }
}
