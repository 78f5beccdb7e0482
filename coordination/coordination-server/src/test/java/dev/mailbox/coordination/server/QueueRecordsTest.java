package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.QueueChange;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.CreateQueueRequest;
import dev.mailbox.coordination.proto.QueueRecord;
import dev.mailbox.coordination.proto.UpdateQueueRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Queue records in the coordinators' replicated state: every coordinator answers the same records, concurrent
 * creates of one name agree, concurrent changes of one queue never lose each other, bad input is refused before
 * anything is stored, and records survive snapshots and restarts.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class QueueRecordsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static TestingCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestingCluster.start(3);
        cluster.awaitLeader(PATIENCE);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static QueueInfo queue(String name, Map<String, String> attributes, Map<String, String> tags) {
        return new QueueInfo(name, attributes, tags, 0, 0);
    }

    @Test
    @DisplayName("a queue created through one coordinator is read, listed, changed and deleted through the others")
    void lifecycleAcrossCoordinators() {
        List<String> ids = cluster.nodeIds();
        CoordinationClient first = cluster.client(ids.get(0));
        CoordinationClient second = cluster.client(ids.get(1));
        QueueInfo made = first.queues().createIfAbsent(queue("life", Map.of("VisibilityTimeout", "45"),
                Map.of("team", "shop")));
        assertThat(made.createdAtMillis()).as("the coordinator's time").isPositive();
        assertThat(made.lastModifiedAtMillis()).isEqualTo(made.createdAtMillis());
        assertThat(second.queues().get("life", ReadConsistency.LINEARIZABLE)).contains(made);
        assertThat(second.queues().list("li", "", 10)).containsExactly("life");
        assertThat(second.queues().list("", "life", 10)).doesNotContain("life");

        QueueInfo changed = second.queues().update("life", new QueueChange(Map.of("DelaySeconds", "5"),
                Set.of("VisibilityTimeout"), Map.of("env", "prod"), Set.of("team"), 1_700_000_000_000L)).orElseThrow();
        assertThat(changed.attributes()).containsExactly(Map.entry("DelaySeconds", "5"));
        assertThat(changed.tags()).containsExactly(Map.entry("env", "prod"));
        assertThat(changed.lastModifiedAtMillis()).isEqualTo(1_700_000_000_000L);
        assertThat(changed.createdAtMillis()).isEqualTo(made.createdAtMillis());
        QueueInfo tagged = first.queues().update("life", new QueueChange(Map.of(), Set.of(), Map.of("k", "v"), Set.of(),
                0)).orElseThrow();
        assertThat(tagged.lastModifiedAtMillis()).as("tags alone do not move the modified time")
                .isEqualTo(1_700_000_000_000L);

        assertThat(first.queues().delete("life")).contains(tagged);
        assertThat(second.queues().get("life", ReadConsistency.LINEARIZABLE)).isEmpty();
        assertThat(second.queues().delete("life")).isEmpty();
        assertThat(second.queues().update("life", new QueueChange(Map.of(), Set.of(), Map.of("a", "b"), Set.of(), 0)))
                .as("a change of a deleted queue").isEmpty();
        cluster.awaitIdenticalState(PATIENCE, ids.toArray(String[]::new));
    }

    @Test
    @DisplayName("concurrent creates of one name through different coordinators all get the one record that won")
    void concurrentCreatesAgree() throws Exception {
        List<String> ids = cluster.nodeIds();
        List<CoordinationClient> clients = List.of(cluster.client(ids.get(0)), cluster.client(ids.get(1)),
                cluster.client(ids.get(2)));
        int callers = 12;
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<QueueInfo>> results = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                CoordinationClient c = clients.get(i % clients.size());
                QueueInfo mine = queue("raced", Map.of("DelaySeconds", Integer.toString(i)), Map.of("by", "caller-" + i));
                results.add(pool.submit(() -> {
                    go.await();
                    return c.queues().createIfAbsent(mine);
                }));
            }
            go.countDown();
            List<QueueInfo> got = new ArrayList<>();
            for (Future<QueueInfo> f : results) {
                got.add(f.get(60, TimeUnit.SECONDS));
            }
            assertThat(got).as("every caller gets the same record").containsOnly(got.get(0));
            assertThat(got.get(0).tags().get("by")).startsWith("caller-");
            assertThat(clients.get(2).queues().get("raced", ReadConsistency.LINEARIZABLE)).contains(got.get(0));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("concurrent tag and attribute changes of one queue from different coordinators all survive")
    void concurrentChangesAllSurvive() throws Exception {
        List<String> ids = cluster.nodeIds();
        CoordinationClient a = cluster.client(ids.get(0));
        CoordinationClient b = cluster.client(ids.get(2));
        a.queues().createIfAbsent(queue("busy", Map.of(), Map.of()));
        int perClient = 20;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < perClient; i++) {
                for (CoordinationClient c : List.of(a, b)) {
                    String key = (c == a ? "a-" : "b-") + i;
                    Map<String, String> attribute = i < 5 ? Map.of("Attr-" + key, "v") : Map.of();
                    done.add(pool.submit(() -> {
                        go.await();
                        return c.queues().update("busy", new QueueChange(attribute, Set.of(), Map.of(key, "v"), Set.of(),
                                0));
                    }));
                }
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        QueueInfo after = b.queues().get("busy", ReadConsistency.LINEARIZABLE).orElseThrow();
        assertThat(after.tags()).hasSize(2 * perClient);
        for (int i = 0; i < perClient; i++) {
            assertThat(after.tags()).containsKeys("a-" + i, "b-" + i);
        }
        assertThat(after.attributes()).hasSize(10);
    }

    @Test
    @DisplayName("an over-long name or too many tags is refused with INVALID_ARGUMENT naming it, by the client before"
            + " sending and by the coordinator for a raw request, and nothing is stored")
    void badInputRefused() {
        CoordinationClient client = cluster.client();
        String longName = "q".repeat(CoordinationLimits.MAX_QUEUE_NAME_LENGTH + 1);
        Map<String, String> tooMany = new TreeMap<>();
        for (int i = 0; i <= CoordinationLimits.MAX_QUEUE_TAGS; i++) {
            tooMany.put("t" + i, "v");
        }
        assertThatThrownBy(() -> client.queues().createIfAbsent(queue(longName, Map.of(), Map.of())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue name must be 1 to 80");
        assertThatThrownBy(() -> client.queues().createIfAbsent(queue("bad-tags", Map.of(), tooMany)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 50 tags");
        assertThatThrownBy(() -> client.queues().createIfAbsent(queue("_nodes", Map.of(), Map.of())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");

        ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.endpoint(cluster.nodeIds().get(1))).usePlaintext()
                .build();
        try {
            ControlPlaneGrpc.ControlPlaneBlockingStub raw = ControlPlaneGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(20, TimeUnit.SECONDS);
            assertThatThrownBy(() -> raw.createQueue(CreateQueueRequest.newBuilder().setQueue(QueueRecord.newBuilder()
                    .setName(longName)).build())).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("queue name must be 1 to 80");
                    });
            assertThatThrownBy(() -> raw.createQueue(CreateQueueRequest.newBuilder().setQueue(QueueRecord.newBuilder()
                    .setName("bad-tags").putAllTags(tooMany)).build())).isInstanceOfSatisfying(
                            StatusRuntimeException.class, e -> {
                                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                                assertThat(e.getStatus().getDescription()).contains("at most 50 tags");
                            });
            assertThatThrownBy(() -> raw.createQueue(CreateQueueRequest.newBuilder().setQueue(QueueRecord.newBuilder()
                    .setName("bad-attr").putAttributes("Policy", "x".repeat(
                            CoordinationLimits.MAX_QUEUE_ATTRIBUTE_VALUE_LENGTH + 1))).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("queue attribute 'Policy'");
                    });
            client.queues().createIfAbsent(queue("bad-change", Map.of(), Map.of("keep", "me")));
            assertThatThrownBy(() -> raw.updateQueue(UpdateQueueRequest.newBuilder().setName("bad-change")
                    .putSetTags("k", "v").addRemovedTags("k").build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("both set and removed");
                    });
        } finally {
            channel.shutdownNow();
        }
        assertThat(client.queues().list("bad-", "", 10)).containsExactly("bad-change");
        assertThat(client.queues().get(longName.substring(1))).isEmpty();
        assertThat(client.queues().get("bad-change").orElseThrow().tags()).containsExactly(Map.entry("keep", "me"));
    }

    @Test
    @DisplayName("a change that would take a queue past 50 tags is refused whole with FAILED_PRECONDITION")
    void changePastTheTagLimitRefused() {
        CoordinationClient client = cluster.client();
        Map<String, String> thirty = new HashMap<>();
        Map<String, String> thirtyMore = new HashMap<>();
        for (int i = 0; i < 30; i++) {
            thirty.put("x" + i, "v");
            thirtyMore.put("y" + i, "v");
        }
        client.queues().createIfAbsent(queue("tag-cap", Map.of(), thirty));
        assertThatThrownBy(() -> client.queues().update("tag-cap", new QueueChange(Map.of("DelaySeconds", "1"), Set.of(),
                thirtyMore, Set.of(), 0))).isInstanceOfSatisfying(CoordinationException.class, e -> {
                    assertThat(e.reason()).isEqualTo(CoordinationException.Reason.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).contains("at most 50 tags");
                });
        QueueInfo after = client.queues().get("tag-cap").orElseThrow();
        assertThat(after.tags()).isEqualTo(thirty);
        assertThat(after.attributes()).as("nothing of the refused change").isEmpty();
    }

    @Test
    @DisplayName("records survive a snapshot and a restart: those in the snapshot and those in the log after it")
    void snapshotAndRestartKeepRecords() {
        try (TestingCluster one = TestingCluster.start(1)) {
            String id = one.awaitLeader(PATIENCE);
            CoordinationClient c = one.client();
            c.queues().createIfAbsent(queue("kept", Map.of("VisibilityTimeout", "60"), Map.of("a", "1")));
            c.queues().createIfAbsent(queue("gone", Map.of(), Map.of()));
            assertThat(one.node(id).takeSnapshot()).isPositive();
            c.queues().update("kept", new QueueChange(Map.of(), Set.of(), Map.of("b", "2"), Set.of("a"), 0));
            c.queues().delete("gone");
            c.queues().createIfAbsent(queue("later", Map.of("DelaySeconds", "3"), Map.of()));
            List<QueueInfo> before = List.of(c.queues().get("kept").orElseThrow(), c.queues().get("later").orElseThrow());
            one.stop(id);
            one.start(id);
            one.awaitLeader(PATIENCE);
            try (CoordinationClient again = CoordinationClient.builder().endpoints(one.endpoints()).build()) {
                assertThat(again.queues().list("", "", 10)).containsExactly("kept", "later");
                assertThat(List.of(again.queues().get("kept").orElseThrow(), again.queues().get("later").orElseThrow()))
                        .isEqualTo(before);
                assertThat(before.get(0).tags()).containsExactly(Map.entry("b", "2"));
            }
        }
    }

    @Test
    @DisplayName("a backup carries queue records into a new cluster, and a cluster holding only queues is not empty")
    void backupCarriesQueues(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path backup = dir.resolve("backup");
        QueueInfo kept;
        try (TestingCluster source = TestingCluster.start(1)) {
            source.awaitLeader(PATIENCE);
            CoordinationClient c = source.client();
            kept = c.queues().createIfAbsent(queue("backed-up", Map.of("DelaySeconds", "2"), Map.of("t", "1")));
            c.cluster().exportState(backup);
        }
        try (TestingCluster target = TestingCluster.start(1)) {
            target.awaitLeader(PATIENCE);
            CoordinationClient c = target.client();
            assertThat(c.cluster().importState(backup).queues()).isEqualTo(1);
            assertThat(c.queues().get("backed-up")).contains(kept);
            // another backup (of the cluster as it is now: the same queue, a newer position) is refused
            java.nio.file.Path again = dir.resolve("again");
            c.cluster().exportState(again);
            assertThatThrownBy(() -> c.cluster().importState(again)).isInstanceOfSatisfying(CoordinationException.class,
                    e -> assertThat(e.getMessage()).contains("1 queue(s)"));
        }
    }

    @Test
    @DisplayName("queue reads honour the operator's read defaults: a stale get-queue answers on a lone follower, "
            + "list-queues (a leader read) does not")
    void readDefaults() {
        try (TestingCluster three = TestingCluster.builder().size(3).configure(b -> b
                .readConsistency(ReadOperation.GET_QUEUE, ReadConsistency.STALE)).start()) {
            String leader = three.awaitLeader(PATIENCE);
            three.client().queues().createIfAbsent(queue("stale-ok", Map.of(), Map.of()));
            String survivor = three.follower(PATIENCE);
            TestingCluster.await(PATIENCE, () -> three.node(survivor).appliedIndex()
                    >= three.node(leader).appliedIndex(), "the follower catches up");
            for (String id : three.nodeIds()) {
                if (!id.equals(survivor)) {
                    three.stop(id);
                }
            }
            LeaderLeases.awaitLapsed(three, survivor, PATIENCE);
            try (CoordinationClient alone = CoordinationClient.builder().endpoint(three.endpoint(survivor))
                    .callTimeout(Duration.ofSeconds(2)).maxAttempts(1).build()) {
                assertThat(alone.queues().get("stale-ok")).isPresent();
                assertThatThrownBy(() -> alone.queues().get("stale-ok", ReadConsistency.LEADER_LEASE))
                        .isInstanceOfSatisfying(CoordinationException.class,
                                e -> assertThat(e.reason()).isEqualTo(CoordinationException.Reason.UNAVAILABLE));
                assertThatThrownBy(() -> alone.queues().list("", "", 10)).isInstanceOf(CoordinationException.class);
            }
        }
    }
}
