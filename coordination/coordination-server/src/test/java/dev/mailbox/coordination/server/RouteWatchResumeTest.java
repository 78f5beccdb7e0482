package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.RouteWatcher;
import dev.mailbox.coordination.Routes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A route watch that resumes from a revision the cluster never reached (it watched a cluster that was then
 * rebuilt from a backup, whose log starts again from the beginning) is sent a snapshot: resuming after that
 * revision would hold back every change until the new cluster's log passed it (issue 30, finding 8).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RouteWatchResumeTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    @DisplayName("a watch resumed from a revision beyond the cluster's log gets a snapshot, then every change")
    void resumeFromARevisionNotReached() throws Exception {
        resumeFrom(reached -> reached + 10_000);
    }

    @Test
    @DisplayName("a watch resumed from a revision the cluster applied without a route change there (another history) "
            + "gets a snapshot, then every change")
    void resumeFromARevisionOfAnotherHistory() throws Exception {
        resumeFrom(reached -> reached + 1); // the namespaces created after the route change moved the log past it
    }

    private static void resumeFrom(java.util.function.LongUnaryOperator from) throws Exception {
        try (TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(PATIENCE);
            CoordinationClient c = cluster.client();
            c.leases().acquire("orders@m1", new LeaseHolder("r1", "node-a", "127.0.0.1:9"));
            long reached = c.routes().list().revision();
            c.namespaces().create("other-1", null, java.util.Map.of());
            c.namespaces().create("other-2", null, java.util.Map.of());

            LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
            try (Routes.Watch watch = c.routes().watch(from.applyAsLong(reached), new RouteWatcher() {
                @Override
                public void snapshot(long revision, List<Route> routes) {
                    events.add("snapshot " + revision + " " + routes.stream().map(Route::mailboxId).sorted().toList());
                }

                @Override
                public void change(long revision, List<Route> changed, List<String> removed) {
                    events.add("change " + changed.stream().map(Route::mailboxId).toList() + " " + removed);
                }

                @Override
                public void ended(@Nullable CoordinationException failure) {
                    events.add("ended " + failure);
                }
            })) {
                assertThat(events.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo("snapshot " + reached + " [orders@m1]");
                c.leases().acquire("billing@m1", new LeaseHolder("r2", "node-a", "127.0.0.1:9"));
                assertThat(events.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("change [billing@m1] []");
            }
        }
    }
}
