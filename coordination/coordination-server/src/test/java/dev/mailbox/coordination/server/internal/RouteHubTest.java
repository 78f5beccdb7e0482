package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.proto.RouteEvent;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What route watchers share, and what one that stops reading costs. */
class RouteHubTest {

    private final LeaseTable table = new LeaseTable();
    private final RouteHub hub = new RouteHub();
    private long index;

    /** Grants a lease (a route) and publishes the change, as the state machine does. */
    private void grant(String mailbox) {
        Outcome o = table.apply(++index, 1, new Command.Acquire(mailbox, "runner", "node-1", "10.0.0.1:7000", 0,
                1_000 + index));
        assertThat(o.isOk()).as(o.message()).isTrue();
        hub.publish(table.lastRouteChange());
    }

    /** A watcher's stream that takes events while {@link #ready}, and records them. */
    private static final class Recording implements RouteHub.Sink {
        final List<RouteEvent> events = new ArrayList<>();
        final boolean parts;
        boolean ready = true;
        Status ended;
        Runnable pump;

        Recording(boolean parts) {
            this.parts = parts;
        }

        @Override
        public boolean isReady() {
            return ready;
        }

        @Override
        public void send(RouteEvent event) {
            events.add(event);
        }

        @Override
        public void end(Status status) {
            ended = status;
        }

        @Override
        public boolean inParts() {
            return parts;
        }

        @Override
        public int maxBacklog() {
            return 5;
        }

        @Override
        public void attach(Runnable pump) {
            this.pump = pump;
        }

        /** The mailboxes of the snapshot and changes received, as a watcher would apply them. */
        Set<String> mailboxes() {
            Set<String> out = new HashSet<>();
            for (RouteEvent e : events) {
                e.getRoutesList().forEach(r -> out.add(r.getMailboxId()));
                out.removeAll(e.getRemovedList());
            }
            return out;
        }
    }

    private Recording watch(boolean parts, long from) {
        Recording r = new Recording(parts);
        hub.subscribe(from, table.appliedIndex(), table, r);
        r.pump.run();
        return r;
    }

    @Test
    @DisplayName("a hundred watchers that join together are sent the same snapshot events, in parts of at most "
            + RouteHub.PART + " routes: one copy of the table, built once")
    void watchersShareOneSnapshot() {
        for (int i = 0; i < 2_500; i++) {
            grant("orders@m" + i);
        }
        List<Recording> watchers = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            watchers.add(watch(true, 0));
        }
        List<RouteEvent> first = watchers.get(0).events;
        assertThat(first).hasSize(3).allMatch(RouteEvent::getSnapshot);
        assertThat(first).extracting(RouteEvent::getMore).containsExactly(true, true, false);
        assertThat(first).allMatch(e -> e.getRoutesCount() <= RouteHub.PART);
        assertThat(watchers.get(0).mailboxes()).hasSize(2_500);
        for (Recording w : watchers) {
            assertThat(w.events).hasSize(3);
            for (int p = 0; p < 3; p++) {
                assertThat(w.events.get(p)).as("part %s is the shared one, not a copy", p).isSameAs(first.get(p));
            }
        }
        assertThat(hub.sharedSnapshots()).isEqualTo(1);
    }

    @Test
    @DisplayName("a watcher that joins a little later gets the shared snapshot and the changes since, and ends with "
            + "the same table as one that saw them live")
    void laterWatcherCatchesUp() {
        for (int i = 0; i < 50; i++) {
            grant("orders@m" + i);
        }
        Recording early = watch(true, 0);
        for (int i = 50; i < 60; i++) {
            grant("orders@m" + i);
        }
        Recording late = watch(true, 0);
        assertThat(late.events.get(0)).as("the shared snapshot, not a new one").isSameAs(early.events.get(0));
        assertThat(late.events).hasSize(11); // the snapshot and the ten changes since
        assertThat(late.mailboxes()).isEqualTo(early.mailboxes()).hasSize(60);
        grant("orders@m60");
        assertThat(late.mailboxes()).isEqualTo(early.mailboxes()).hasSize(61);
    }

    @Test
    @DisplayName("a client before parts is sent the table in one event")
    void wholeForOlderClients() {
        for (int i = 0; i < 1_500; i++) {
            grant("orders@m" + i);
        }
        Recording old = watch(false, 0);
        assertThat(old.events).singleElement().satisfies(e -> {
            assertThat(e.getSnapshot()).isTrue();
            assertThat(e.getMore()).isFalse();
            assertThat(e.getRoutesCount()).isEqualTo(1_500);
        });
    }

    @Test
    @DisplayName("a watcher whose stream stops taking events is sent nothing more (nothing queues for it), and is "
            + "ended with RESOURCE_EXHAUSTED past its backlog bound; one that takes them is not")
    void stalledWatcherIsEnded() {
        grant("orders@m0");
        Recording stalled = watch(true, 0);
        Recording healthy = watch(true, 0);
        stalled.ready = false;
        for (int i = 1; i <= 5; i++) {
            grant("orders@m" + i);
        }
        assertThat(stalled.events).as("nothing sent to a stream that does not take it").hasSize(1);
        assertThat(stalled.ended).isNull();
        grant("orders@m6");
        assertThat(stalled.ended).isNotNull().extracting(Status::getCode).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(healthy.ended).isNull();
        assertThat(healthy.mailboxes()).hasSize(7);
        assertThat(hub.watchers()).isEqualTo(1);
    }

    @Test
    @DisplayName("a watcher that resumes from a revision it saw gets only the changes since")
    void resumes() {
        for (int i = 0; i < 10; i++) {
            grant("orders@m" + i);
        }
        long seen = table.routesRevision();
        grant("orders@m10");
        grant("orders@m11");
        Recording resumed = watch(true, seen);
        assertThat(resumed.events).hasSize(2).noneMatch(RouteEvent::getSnapshot);
        assertThat(resumed.mailboxes()).containsExactlyInAnyOrder("orders@m10", "orders@m11");
    }
}
