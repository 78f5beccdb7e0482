package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.RoutingTable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Route watchers share one table: sized for CI (300 tables of 2,000 routes); the scale harness
 * (RouteWatchersHarness in benchmarks) runs 1,000 watchers of 100,000 routes.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RouteWatchSharingTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Test
    @DisplayName("300 routing tables opened by one client sync through one watch and one copy of 2,000 routes, all see "
            + "a new route, and the watch ends with the last of them")
    void tablesOfOneClientShareOneWatch() throws Exception {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinatorNode node = cluster.node(cluster.nodeIds().get(0));
            CoordinationClient admin = cluster.client();
            grant(admin, "shared", 2_000);
            CoordinationClient client = cluster.client();

            List<RoutingTable> tables = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                tables.add(client.routes().table());
            }
            for (RoutingTable t : tables) {
                assertThat(t.await(x -> x.routes().size() == 2_000, PATIENCE)).isTrue();
            }
            assertThat(node.routeWatchers()).as("watches the coordinator serves for 300 tables of one client")
                    .isEqualTo(1);
            assertThat(tables.get(0).snapshotsReceived()).as("the table was sent once").isEqualTo(1);

            admin.leases().acquire("shared@late", new LeaseHolder("r", "n", "127.0.0.1:1"));
            for (RoutingTable t : tables) {
                assertThat(t.await(x -> x.route("shared@late").isPresent(), PATIENCE)).isTrue();
            }

            tables.subList(1, tables.size()).forEach(RoutingTable::close);
            assertThat(node.routeWatchers()).as("a table still open keeps the watch").isEqualTo(1);
            assertThat(tables.get(0).route("shared@late")).isPresent();
            tables.get(0).close();
            TestingCluster.await(PATIENCE, () -> node.routeWatchers() == 0, "the last table closed ends the watch");
        }
    }

    /** Grants {@code n} leases at once (each a route). */
    static void grant(CoordinationClient client, String namespace, int n) {
        List<CompletableFuture<?>> grants = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            grants.add(client.leases().acquireAsync(namespace + "@m" + i, new LeaseHolder("runner-" + i, "node-1",
                    "127.0.0.1:" + (10_000 + i % 1_000)), Duration.ofMinutes(10)));
            if (grants.size() == 200) {
                grants.forEach(CompletableFuture::join);
                grants.clear();
            }
        }
        grants.forEach(CompletableFuture::join);
    }
}
