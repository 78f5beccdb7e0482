package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.mainloop.RequestHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Keyed requests (issue 31) across a takeover: a FIFO request mailbox hosted on node A, two {@link LeasedRunner}s
 * that reach it through node B, and a {@link MainLoopClient} that calls through B with a key per request. The first
 * runner is closed while it is in the middle of a key (its handler stuck there) and of others; the second takes the
 * lease over and goes on from where the mailbox has each key.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class KeyedTakeoverTest {

    private static final String REQUESTS = "jobs.fifo@node-a";
    private static final String REPLIES = "replies@node-a";
    private static final int KEYS = 6;
    private static final int PER_KEY = 15;
    /** The request the first runner gets stuck in, so it is closed in the middle of that key. */
    private static final String STUCK = "k0#5";

    /** One run of the handler: which runner, which request, when, and whether it returned an answer. */
    record Handling(String runner, String key, int index, long start, long end, boolean completed) {
        String request() {
            return key + "#" + index;
        }
    }

    private TestingCluster cluster;
    private CoordinationClient client;
    private MailboxNode a;
    private MailboxNode b;
    private InMemoryMailbox<byte[]> hosted;
    private InMemoryMailbox<byte[]> replies;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Handling> handlings = new CopyOnWriteArrayList<>();
    private final Map<String, Lease> leases = new ConcurrentHashMap<>();

    @BeforeEach
    void start() {
        cluster = TestingCluster.builder().size(1).snapshotEvery(10_000).start();
        client = cluster.client();
        a = MailboxNode.builder("node-a").coordinator(client).start();
        b = MailboxNode.builder("node-b").coordinator(client).start();
        hosted = InMemoryMailbox.builder(REQUESTS, Codec.bytes()).fifo(FifoOptions.defaults()).build();
        replies = InMemoryMailbox.builder(REPLIES, Codec.bytes()).build();
        a.host(hosted);
        a.publish(replies);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        b.close();
        a.close();
        hosted.close();
        replies.close();
        cluster.close();
    }

    private <T> RemoteMailbox<T> throughB(String mailbox, Codec<T> codec) {
        RemoteMailbox<T> m = RemoteMailbox.builder(mailbox, codec).node(b.address()).build();
        closeables.add(m);
        return m;
    }

    private LeasedRunner runner(String id, CountDownLatch stuck) {
        RequestHandler<String, String> handler = r -> {
            String key = r.key();
            int index = Integer.parseInt(r.body());
            long start = System.nanoTime();
            boolean completed = false;
            try {
                if (id.equals("runner-1") && (key + "#" + index).equals(STUCK)) {
                    stuck.countDown();
                    Thread.sleep(120_000); // until the runner is closed: interrupted, and handed back
                }
                Thread.sleep(3);
                completed = true;
                return key + "#" + index;
            } finally {
                handlings.add(new Handling(id, key, index, start, System.nanoTime(), completed));
            }
        };
        MainLoop<String, String> loop = MainLoop.builder(throughB(REQUESTS, MainLoopCodecs.requests(String.class)),
                        handler)
                .replyTo(name -> throughB(name, MainLoopCodecs.results(String.class)))
                .concurrency(4).receiveBatch(10).waitTime(Duration.ofSeconds(1))
                .visibilityTimeout(Duration.ofSeconds(5)).shutdownGrace(Duration.ofMillis(200)).build();
        LeasedRunner runner = LeasedRunner.builder(client, loop, new LeaseHolder(id, "node-a", a.address()))
                .shutdownGrace(Duration.ofSeconds(10)).listener(new LeasedRunner.Listener() {
                    @Override
                    public void acquired(Lease lease) {
                        leases.put(id, lease);
                    }
                }).build();
        closeables.add(0, runner);
        return runner;
    }

    @Test
    @DisplayName("the first runner closed in the middle of a key: the second goes on from the request it was handling,"
            + " every key's requests are handled in order and one at a time, none lost, none handled twice, and the"
            + " first runner's fenced receives stay refused")
    void takeoverContinuesEachKey() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        LeasedRunner first = runner("runner-1", stuck).start();
        TestingCluster.await(Duration.ofSeconds(20), () -> leases.containsKey("runner-1"), "runner-1 holds the lease");
        assertThat(b.routingTable().orElseThrow().await(t -> t.route(REQUESTS).isPresent(), Duration.ofSeconds(10)))
                .as("node B routes to runner-1's node").isTrue();
        LeasedRunner second = runner("runner-2", stuck).start();

        MainLoopClient<String, String> caller = MainLoopClient.<String, String>builder(
                        throughB(REQUESTS, MainLoopCodecs.requests(String.class)),
                        name -> throughB(name, MainLoopCodecs.results(String.class)))
                .responseMailboxName(REPLIES).receiveWait(Duration.ofSeconds(1))
                .defaultTimeout(Duration.ofSeconds(120)).build();
        closeables.add(0, caller);
        Map<String, CompletableFuture<String>> calls = new HashMap<>();
        for (int i = 0; i < PER_KEY; i++) {
            for (int k = 0; k < KEYS; k++) {
                calls.put("k" + k + "#" + i, caller.callWithKey("k" + k, Integer.toString(i)));
            }
        }

        assertThat(stuck.await(60, TimeUnit.SECONDS)).as("runner-1 is in the middle of k0").isTrue();
        assertThat(second.state()).isEqualTo(LeasedRunner.State.WAITING);
        first.close();
        TestingCluster.await(Duration.ofSeconds(30), () -> leases.containsKey("runner-2"), "runner-2 takes over");

        for (Map.Entry<String, CompletableFuture<String>> call : calls.entrySet()) {
            assertThat(call.getValue().get(120, TimeUnit.SECONDS)).as("answer to %s", call.getKey())
                    .isEqualTo(call.getKey());
        }

        // the first runner's lease is over: its receives are refused at the node, whatever it still believes
        long oldEpoch = leases.get("runner-1").epoch();
        assertThat(leases.get("runner-2").epoch()).isGreaterThan(oldEpoch);
        Mailbox<MainLoopRequest<String>> oldView = throughB(REQUESTS, MainLoopCodecs.requests(String.class))
                .fenced(oldEpoch);
        assertThatThrownBy(() -> oldView.receive(ReceiveOptions.defaults())).isInstanceOf(FencedException.class);

        Map<String, List<Handling>> byKey = new HashMap<>();
        for (Handling h : handlings) {
            byKey.computeIfAbsent(h.key(), k -> new ArrayList<>()).add(h);
        }
        List<String> twice = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            List<Handling> runs = new ArrayList<>(byKey.get("k" + k));
            runs.sort(Comparator.comparingLong(Handling::start));
            for (int i = 1; i < runs.size(); i++) {
                assertThat(runs.get(i).start()).as("%s started after %s ended (one at a time per key)",
                        runs.get(i), runs.get(i - 1)).isGreaterThanOrEqualTo(runs.get(i - 1).end());
            }
            List<Integer> order = new ArrayList<>();
            Map<String, List<String>> completedBy = new HashMap<>();
            for (Handling h : runs) {
                if (order.isEmpty() || order.get(order.size() - 1) != h.index()) {
                    order.add(h.index()); // a request handled again right after itself: at least once, in place
                }
                if (h.completed()) {
                    completedBy.computeIfAbsent(h.request(), r -> new ArrayList<>()).add(h.runner());
                }
            }
            assertThat(order).as("requests of k%d in the order handled", k)
                    .isEqualTo(java.util.stream.IntStream.range(0, PER_KEY).boxed().toList());
            for (int i = 0; i < PER_KEY; i++) {
                List<String> by = completedBy.get("k" + k + "#" + i);
                assertThat(by).as("runners that answered k%d#%d", k, i).isNotEmpty().doesNotHaveDuplicates();
                if (by.size() > 1) {
                    twice.add("k" + k + "#" + i);
                }
            }
        }
        assertThat(twice).as("requests answered by both runners (only what the first had not acknowledged when"
                + " it closed, which a graceful close acknowledges)").isEmpty();

        List<Handling> stuckRuns = handlings.stream().filter(h -> h.request().equals(STUCK))
                .sorted(Comparator.comparingLong(Handling::start)).toList();
        assertThat(stuckRuns).extracting(Handling::runner, Handling::completed)
                .as("k0 goes on where runner-1 was cut off").containsExactly(
                        org.assertj.core.groups.Tuple.tuple("runner-1", false),
                        org.assertj.core.groups.Tuple.tuple("runner-2", true));
        assertThat(handlings.stream().filter(h -> h.runner().equals("runner-1") && h.completed()).count())
                .as("answered by runner-1 before it closed").isGreaterThan(0);
        TestingCluster.await(Duration.ofSeconds(30), () -> hosted.approximateCount() == 0,
                "every request acknowledged");
        second.close();
    }
}
