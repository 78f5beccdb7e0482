package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.RouteWatcher;
import dev.mailbox.coordination.Routes;
import dev.mailbox.coordination.RoutingSnapshot;
import dev.mailbox.coordination.RoutingTable;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A routing table lives no longer than the client it watches through. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RoutingTableLifecycleTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    /** A client's routes, counting the watches opened through them. */
    private static final class Counting implements Routes {
        final Routes delegate;
        final AtomicInteger watches = new AtomicInteger();

        Counting(Routes delegate) {
            this.delegate = delegate;
        }

        @Override
        public RoutingSnapshot list(@Nullable ReadConsistency consistency) {
            return delegate.list(consistency);
        }

        @Override
        public Watch watch(long fromRevision, RouteWatcher watcher) {
            watches.incrementAndGet();
            return delegate.watch(fromRevision, watcher);
        }
    }

    @Test
    @DisplayName("a RoutingTable whose client is closed stops: it does not reconnect through the closed client again "
            + "and again")
    void tableStopsWhenItsClientCloses() throws Exception {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient client = CoordinationClient.builder().endpoints(cluster.endpoints()).build();
            Counting routes = new Counting(client.routes());
            RoutingTable table = routes.table();
            assertThat(table.await(RoutingTable::isSynced, PATIENCE)).isTrue();
            assertThat(routes.watches).hasValue(1);

            client.close();
            // the stream breaks, and the table may try once more and learn that the client is closed; a table that
            // keeps reconnecting does so at least every second (its longest backoff)
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_500);
            while (System.nanoTime() - until < 0 && routes.watches.get() <= 2) {
                Thread.sleep(50);
            }
            assertThat(routes.watches.get()).as("watches opened after the client closed").isLessThanOrEqualTo(2);
            long start = System.nanoTime();
            assertThat(table.await(t -> false, PATIENCE)).isFalse();
            assertThat(System.nanoTime() - start).as("await returns at once: the table has stopped")
                    .isLessThan(TimeUnit.SECONDS.toNanos(5));
            table.close();
        }
    }
}
