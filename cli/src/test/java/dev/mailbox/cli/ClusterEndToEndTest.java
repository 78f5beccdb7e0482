package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.Route;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinated half deployed as processes: 3 coordinator processes, 2 {@code mailboxctl node start}
 * processes on one redis-server, 2 {@code mailboxctl runner --exec} processes, and a client sending
 * through the node that does not host the mailbox. The hosting node and its runner are SIGKILLed
 * mid-stream; the other runner takes over on the other node with every message.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterEndToEndTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final String MAILBOX = "orders";
    private static final int REQUESTS = 500;

    @TempDir
    Path dir;

    private final List<Child> children = new ArrayList<>();
    private TestingCluster coordinators;
    private RedisServerProcess redis;

    @AfterEach
    void stopAll() {
        children.forEach(Child::kill);
        if (coordinators != null) {
            coordinators.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("SIGKILL the hosting node and its runner mid-stream: the other runner takes over, every request is "
            + "answered, and the requests applied are exactly the requests sent; a restarted node honours handles "
            + "and send ids from before")
    void takeoverAcrossNodes() throws Exception {
        redis = RedisServerProcess.start();
        coordinators = TestingCluster.builder().size(3).processes(true).start();
        coordinators.awaitLeader(PATIENCE);
        CoordinationClient client = coordinators.client();
        client.namespaces().setPolicy(MAILBOX, new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500),
                Duration.ofMillis(500)));
        String endpoints = String.join(",", coordinators.endpoints());

        String nodeA = "127.0.0.1:" + freePort();
        String nodeB = "127.0.0.1:" + freePort();
        Child a = node("node-a", nodeA, endpoints);
        Child b = node("node-b", nodeB, endpoints);
        Path appliedA = dir.resolve("applied-r1.log");
        Path appliedB = dir.resolve("applied-r2.log");
        Child r1 = runner("r1", nodeA, "node-a", endpoints, appliedA);
        TestingCluster.await(PATIENCE, () -> client.routes().list().routes().stream()
                .anyMatch(r -> r.mailboxId().equals(MAILBOX) && r.address().equals(nodeA)), "r1 holds " + MAILBOX);
        runner("r2", nodeB, "node-b", endpoints, appliedB); // waits for the lease

        Set<String> sent = new HashSet<>();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        try (MainLoopClient<String, String> caller = MainLoopClient.<String, String>builder(
                RemoteMailbox.builder(MAILBOX, MainLoopCodecs.requests(String.class)).node(nodeB).build(),
                name -> RemoteMailbox.builder(name, MainLoopCodecs.results(String.class)).node(nodeB).build())
                .receiveWait(Duration.ofSeconds(1)).build()) {
            for (int i = 0; i < REQUESTS; i++) {
                String body = "req-" + i;
                sent.add(body);
                answers.add(caller.call(body, Duration.ofMinutes(3)));
                if (i == REQUESTS / 3) {
                    TestingCluster.await(PATIENCE, () -> answers.stream().filter(CompletableFuture::isDone).count() > 50,
                            "some answers through node-a");
                    a.kill(); // SIGKILL, mid-stream: no release, no goodbye
                    r1.kill();
                }
            }
            long killedAt = System.nanoTime();
            long r1LogSize = Files.exists(appliedA) ? Files.size(appliedA) : 0;
            for (int i = 0; i < REQUESTS; i++) {
                assertThat(answers.get(i).get(3, TimeUnit.MINUTES)).isEqualTo("req-" + i);
            }
            assertThat(System.nanoTime() - killedAt).isPositive();
            Optional<Route> route = client.routes().list().routes().stream().filter(r -> r.mailboxId().equals(MAILBOX))
                    .findFirst();
            assertThat(route).get().extracting(Route::address).as("the route moved to node-b").isEqualTo(nodeB);
            assertThat(Files.exists(appliedA) ? Files.size(appliedA) : 0).as("nothing applied by r1 after its kill")
                    .isEqualTo(r1LogSize);
        }
        Set<String> applied = new HashSet<>();
        applied.addAll(bodies(appliedA));
        applied.addAll(bodies(appliedB));
        assertThat(applied).as("the requests whose effect was applied").isEqualTo(sent);
        assertThat(bodies(appliedB)).as("r2 applied after the takeover").isNotEmpty();

        // node-a comes back: a handle and a send id from before its restart still work through it
        Child a2 = node("node-a", nodeA, endpoints);
        String inbox = "inbox-" + System.nanoTime();
        try (RemoteMailbox<String> viaA = RemoteMailbox.builder(inbox, Codec.utf8()).node(nodeA).build()) {
            String first = viaA.send("once", SendOptions.defaults().withDeduplicationId("send-1"));
            viaA.send("kept");
            List<Message<String>> got = viaA.receive(ReceiveOptions.defaults().withMaxMessages(10)
                    .withVisibilityTimeout(Duration.ofMinutes(1)).withWaitTime(Duration.ofSeconds(5)));
            assertThat(got).hasSize(2);
            a2.kill();
            node("node-a", nodeA, endpoints);
            assertThat(viaA.send("once", SendOptions.defaults().withDeduplicationId("send-1")))
                    .as("the retried send is stored once").isEqualTo(first);
            viaA.acknowledge(got.get(0).receiptHandle()); // a handle the killed node issued
            viaA.acknowledge(got.get(1).receiptHandle());
            assertThat(viaA.approximateCount()).isZero();
        }

        // SIGTERM: node-b deregisters on its way out, so it is down at once rather than after its TTL
        assertThat(client.nodes().list()).anyMatch(n -> n.id().equals("node-b") && n.up());
        long stopping = System.nanoTime();
        assertThat(b.stop()).as("exit status after SIGTERM").isEqualTo(143);
        assertThat(client.nodes().list()).as("node-b is down").noneMatch(n -> n.id().equals("node-b") && n.up());
        assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(10));
    }

    private static List<String> bodies(Path log) throws IOException {
        if (!Files.exists(log)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                out.add(line.substring(line.indexOf(' ') + 1));
            }
        }
        return out;
    }

    private Child node(String id, String listen, String endpoints) throws IOException {
        Child c = Child.start(dir.resolve(id + "-" + System.nanoTime() + ".out"), "node", "start", "--id", id,
                "--listen", listen, "-c", endpoints, "--backend", redis.uri());
        children.add(c);
        c.awaitOutput("serving at", PATIENCE);
        return c;
    }

    private Child runner(String id, String node, String nodeId, String endpoints, Path applied) throws IOException {
        // the effect: one line per request with the id the loop gave it and its body; the reply is the body
        String command = "body=$(cat); printf '%s %s\\n' \"$MAILBOX_REQUEST_ID\" \"$body\" >> " + applied
                + "; printf '%s' \"$body\"";
        Child c = Child.start(dir.resolve(id + ".out"), "runner", "--id", id, "--mailbox", MAILBOX, "--node", node,
                "--node-id", nodeId, "-c", endpoints, "--exec", command, "--concurrency", "4", "--visibility-ms", "3000");
        children.add(c);
        c.awaitOutput("waiting for the lease", PATIENCE);
        return c;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
